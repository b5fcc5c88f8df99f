"""``wrap_agent_call`` at run time: the layers around each run, as one run wrap.

An :class:`AgentCallWrap` is a run wrap (``funcware.compose.steps.run_wrap.RunWrap``): the
compiled agent's ``stream``/``astream`` (which ``invoke``, ``ainvoke``, ``batch``, a resume,
LangGraph Server and a parent graph all go through) hand it each run. The layers nest first
outermost; the innermost handler runs one *attempt*: the graph's own stream, whose chunks
reach the caller as they come (token by token), and whose last state becomes the
attempt's :class:`~funcware.hooks.types.AgentResponse`.

The layers are the caller's code around a stream the caller pulls, so they run beside it:

- ``invoke``/``ainvoke`` (which read the whole stream before returning): the layers run
  in the caller's thread or task, and the chunks are handed over when they return;
- ``stream``: the layers run on a worker thread (with the caller's context); each time
  they call the innermost handler, the caller's thread runs the attempt, yields its
  chunks, and hands the response (or the error) back. Two hand-offs per attempt, none per
  chunk; the graph itself runs in the caller's thread, as without the wrap.
- ``astream``: the layers run as a task of the caller's loop, with the same hand-offs.

A sync-only layer under ``astream`` runs on a worker thread, an async-only one under
``stream`` on the worker's own loop (funcware's sync/async bridge). A layer that returns
another response than its handler's replaces the result: ``invoke`` returns it, and a
stream that asked for ``"values"`` gets it as its last chunk.

Retries with a checkpointer: before the first attempt the run notes the checkpoint its
thread is at; a second attempt starts from that checkpoint (``checkpoint_id`` in its
config: langgraph forks the thread there), or, on a thread the run created, from an empty
thread (the failed attempt's checkpoints are deleted). So the thread holds one clean run.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver

from funcware.compose.observing import watcher
from funcware.compose.threads.bridge import call_soon_in_loop, run_coroutine_sync, run_in_thread
from funcware.compose.threads.pool import BridgePool, default_settings
from funcware.errors import RunClosedError
from funcware.hooks.types import AgentRequest, AgentResponse
from funcware.hooks.wording import returned
from funcware.runs.per_run import skipped
from funcware.runs.taps import SKIP, ARun, Run, Tap, atapped, tapped

if TYPE_CHECKING:
    from funcware.compose.steps.run_wrap import Kwargs
    from funcware.observe.observers import Outcome

__all__ = ["AgentCallWrap", "AgentLayer"]

HOOK = "wrap_agent_call"

_POOL = BridgePool(default_settings(), name="funcware-agent-call")

_READ_TO_THE_END = "print_mode"
"""A ``stream`` argument only langgraph's ``invoke``/``ainvoke`` (and ``batch``) pass: the
caller reads the stream to its end before it looks at it, so the layers can run in the
caller's thread or task and hand the chunks over when they return (no hand-offs). A
direct ``stream(..., print_mode=...)`` call gets its chunks that way too: all of them,
once the run ended."""


@dataclass(frozen=True)
class AgentLayer:
    """One middleware's ``wrap_agent_call``: its sync and/or async callable."""

    middleware: Any
    sync: Callable[..., Any] | None
    async_: Callable[..., Any] | None
    where: str

    @property
    def name(self) -> str:
        """The middleware's name."""
        return str(self.middleware.name)

    def describe(self) -> str:
        """``middleware 'x', hook wrap_agent_call (defined at file:line)``."""
        return f"middleware {self.name!r}, hook {HOOK} (defined at {self.where})"


def _checked(layer: AgentLayer, result: object) -> AgentResponse:
    if isinstance(result, AgentResponse):
        return result
    raise TypeError(
        f"{layer.describe()} returned {returned(result)}; a wrap_agent_call hook must return "
        "an AgentResponse: the one its handler returned (`return handler(request)`), or "
        "AgentResponse(result=...) to replace the run's result."
    )


# -- observing: a layer per call, when something observes the run ---------------------


@contextlib.contextmanager
def _observed(layer: AgentLayer, calls: list[int]) -> Iterator[None]:
    """The layer's call, reported to the run's observers (if any) as it starts and ends."""
    from funcware.observe.layers import failure_outcome
    from funcware.observe.observers import active, end, start

    observers = active()
    if not observers:
        yield
        return
    started = start(observers, layer.name, HOOK, layer.where)
    try:
        yield
    except BaseException as exc:
        end(observers, started, failure_outcome(exc), handler_calls=calls[0], error=exc)
        raise
    outcome: Outcome = "retried" if calls[0] > 1 else "passed" if calls[0] else "short_circuited"
    end(observers, started, outcome, handler_calls=calls[0])


_UNOBSERVED = contextlib.nullcontext()


def _observed_if(observed: bool, layer: AgentLayer, calls: list[int]) -> Any:
    """:func:`_observed` when something watches the run; nothing otherwise."""
    return _observed(layer, calls) if observed else _UNOBSERVED


def _layer_now() -> Any:
    """The observed layer calling the innermost handler (what the run nests under)."""
    from funcware.observe.observers import CURRENT_LAYER

    return CURRENT_LAYER.get()


def _nest_under(layer: Any) -> Any:
    """Make ``layer`` current where the graph runs; a token for :func:`_unnest`, or None."""
    if layer is None:
        return None
    from funcware.observe.observers import CURRENT_LAYER

    return CURRENT_LAYER.set(layer)


def _unnest(token: Any) -> None:
    if token is None:
        return
    from funcware.observe.observers import CURRENT_LAYER

    # ValueError: the caller read the stream from another context, nothing to undo.
    with contextlib.suppress(ValueError):
        CURRENT_LAYER.reset(token)


# -- the onions ---------------------------------------------------------------------------


def _sync_layer(
    layer: AgentLayer, inner: Callable[[AgentRequest], AgentResponse], observed: bool
) -> Callable[[AgentRequest], AgentResponse]:
    """``layer`` around ``inner``, called from the worker thread."""

    def call(request: AgentRequest) -> AgentResponse:
        if layer.sync is not None and not observed:  # nothing counts the handler's calls
            return _checked(layer, layer.sync(request, inner))
        calls = [0]

        def handler(request: AgentRequest) -> AgentResponse:
            calls[0] += 1
            return inner(request)

        with _observed_if(observed, layer, calls):
            if layer.sync is not None:
                return _checked(layer, layer.sync(request, handler))

            async def ahandler(request: AgentRequest) -> AgentResponse:
                return await run_in_thread(handler, request)

            assert layer.async_ is not None
            return _checked(layer, run_coroutine_sync(layer.async_(request, ahandler)))

    return call


def _async_layer(
    layer: AgentLayer,
    inner: Callable[[AgentRequest], Coroutine[Any, Any, AgentResponse]],
    observed: bool,
) -> Callable[[AgentRequest], Coroutine[Any, Any, AgentResponse]]:
    """``layer`` around ``inner``, awaited in the caller's loop."""

    async def call(request: AgentRequest) -> AgentResponse:
        if layer.async_ is not None and not observed:  # nothing counts the handler's calls
            return _checked(layer, await layer.async_(request, inner))
        calls = [0]

        async def handler(request: AgentRequest) -> AgentResponse:
            calls[0] += 1
            return await inner(request)

        with _observed_if(observed, layer, calls):
            if layer.async_ is not None:
                return _checked(layer, await layer.async_(request, handler))
            loop = asyncio.get_running_loop()

            def sync_handler(request: AgentRequest) -> AgentResponse:
                calls[0] += 1
                return call_soon_in_loop(loop, inner(request))

            assert layer.sync is not None
            return _checked(layer, await run_in_thread(layer.sync, request, sync_handler))

    return call


# -- checkpoints: where a retry starts ---------------------------------------------------


_FRESH = object()
"""The thread had no checkpoint when the run started."""


def _saver(graph: Any, config: Any) -> BaseCheckpointSaver[Any] | None:
    """The agent's checkpointer, for a top-level run on a thread (nested runs: ``None``)."""
    saver = graph.checkpointer
    configurable = config.get("configurable") or {}
    if not isinstance(saver, BaseCheckpointSaver) or "thread_id" not in configurable:
        return None
    if configurable.get("checkpoint_ns"):
        return None  # a subgraph's namespace: its parent's run owns the thread
    return saver


def _start_point(found: Any) -> Any:
    """Where retries start: the checkpoint ``found`` (the thread's when the run started)."""
    return _FRESH if found is None else found.config["configurable"]["checkpoint_id"]


def _retry_config(config: Any, start: Any) -> Any:
    configurable = dict(config.get("configurable") or {})
    if start is _FRESH:
        configurable.pop("checkpoint_id", None)
    else:
        configurable["checkpoint_id"] = start
    return {**config, "configurable": configurable}


def _kwargs(kwargs: dict[str, Any], request: AgentRequest) -> dict[str, Any]:
    if request.context is None and "context" not in kwargs:
        return kwargs
    return {**kwargs, "context": request.context}


class _Run:
    """One run through the layers: its first request, the tap on its attempts' streams,
    where retries start, and the response of its last attempt."""

    def __init__(self, graph: Any, input: Any, config: Any, kwargs: dict[str, Any]) -> None:
        self.request = AgentRequest(input, config, kwargs.get("context"))
        self.tap = Tap(graph.stream_mode, kwargs)
        self.saver = _saver(graph, config)
        self.start: Any = None
        """Where retries start (set by the caller, which reads the thread's checkpoint)."""
        self.count = 0
        self.last: AgentResponse | None = None

    def note_start(self) -> None:
        """Notes where retries start: the checkpoint the thread is at as the run starts."""
        if self.saver is not None:
            self.start = _start_point(self.saver.get_tuple(self.request.config))

    async def anote_start(self) -> None:
        """Async :meth:`note_start`."""
        if self.saver is not None:
            self.start = _start_point(await self.saver.aget_tuple(self.request.config))

    def prepare(self, request: AgentRequest) -> AgentRequest:
        """The request the next attempt runs (a retry: from the run's starting checkpoint;
        on a thread the run created, on an empty thread: the failed attempts' checkpoints
        are deleted)."""
        request = self._next_attempt(request)
        saver = self._thread_to_clear()
        if saver is not None:
            saver.delete_thread(self._thread_id())
        return request

    async def aprepare(self, request: AgentRequest) -> AgentRequest:
        """Async :meth:`prepare`."""
        request = self._next_attempt(request)
        saver = self._thread_to_clear()
        if saver is not None:
            await saver.adelete_thread(self._thread_id())
        return request

    def _thread_id(self) -> str:
        return str((self.request.config.get("configurable") or {}).get("thread_id"))

    def _next_attempt(self, request: AgentRequest) -> AgentRequest:
        self.count += 1
        if self.saver is None or self.count == 1:
            return request
        return request.override(config=_retry_config(request.config, self.start))

    def _thread_to_clear(self) -> BaseCheckpointSaver[Any] | None:
        """The checkpointer to delete the thread from before a retry on a thread the run
        created (it had no checkpoint), or ``None``."""
        return self.saver if self.count > 1 and self.start is _FRESH else None

    def stream(self, run: Callable[..., Any], request: AgentRequest) -> Any:
        """``run``'s stream of the attempt running ``request`` (the tap cleared for it)."""
        self.tap.last, self.tap.interrupts = None, ()
        return run(request.input, request.config, **_kwargs(self.tap.kwargs, request))

    def response(self) -> AgentResponse:
        """The attempt's response, from what the tap kept of its stream."""
        self.last = AgentResponse(self.tap.last, self.tap.interrupts)
        return self.last

    def replaced(self, response: AgentResponse) -> list[Any]:
        """The chunk that ends the stream when the layers replaced the result (if the
        caller asked for ``"values"``), or none."""
        if response is self.last:
            return []
        chunk = self.tap.values_chunk(response.result, response.interrupts)
        return [] if chunk is SKIP else [chunk]


_Result = TypeVar("_Result")
"""What a handler returns: an ``AgentResponse``, or (async) a coroutine of one."""


class AgentCallWrap:
    """The run wrap of an agent with ``wrap_agent_call`` layers (first outermost)."""

    def __init__(self, layers: tuple[AgentLayer, ...]) -> None:
        self.layers = layers

    def _onion(
        self,
        around: Callable[
            [AgentLayer, Callable[[AgentRequest], _Result], bool],
            Callable[[AgentRequest], _Result],
        ],
        inner: Callable[[AgentRequest], _Result],
        observed: bool,
        off: frozenset[int],
    ) -> Callable[[AgentRequest], _Result]:
        """``inner`` in the run's layers (those of middleware the run switched off left
        out), ``around`` putting each around it (:func:`_sync_layer`, :func:`_async_layer`)."""
        for layer in reversed(self.layers):
            if id(layer.middleware) not in off:
                inner = around(layer, inner, observed)
        return inner

    def stream(
        self, graph: Any, input: Any, config: Any, kwargs: Kwargs, run: Run
    ) -> Iterator[Any]:
        """``run``'s stream with the layers around it."""
        this = _Run(graph, input, config, kwargs)
        if _READ_TO_THE_END in kwargs:
            return self._collected(this, run)
        return self._streamed(this, run)

    def astream(
        self, graph: Any, input: Any, config: Any, kwargs: Kwargs, run: ARun
    ) -> AsyncIterator[Any]:
        """Async :meth:`stream`."""
        this = _Run(graph, input, config, kwargs)
        if _READ_TO_THE_END in kwargs:
            return self._acollected(this, run)
        return self._astreamed(this, run)

    def _collected(self, this: _Run, run: Run) -> Iterator[Any]:
        """For ``invoke``: the layers run in the caller's thread (now: the caller reads the
        stream to its end at once), each attempt's chunks are kept and given once the
        layers returned."""
        this.note_start()
        chunks: list[Any] = []

        def attempt(request: AgentRequest) -> AgentResponse:
            request = this.prepare(request)
            this.tap.collect(this.stream(run, request), chunks)
            return this.response()

        observed = watcher() is not None
        onion = self._onion(_sync_layer, attempt, observed, skipped(this.request.config))
        response = onion(this.request)
        return iter([*chunks, *this.replaced(response)])

    async def _acollected(self, this: _Run, run: ARun) -> AsyncIterator[Any]:
        """Async :meth:`_collected`: the layers run in the caller's task."""
        await this.anote_start()
        chunks: list[Any] = []

        async def attempt(request: AgentRequest) -> AgentResponse:
            request = await this.aprepare(request)
            await this.tap.acollect(this.stream(run, request), chunks)
            return this.response()

        observed = watcher() is not None
        onion = self._onion(_async_layer, attempt, observed, skipped(this.request.config))
        response = await onion(this.request)
        for chunk in [*chunks, *this.replaced(response)]:
            yield chunk

    def _streamed(self, this: _Run, run: Run) -> Iterator[Any]:
        """``run``'s stream with the layers around it (they run on a worker thread)."""
        to_run: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        to_layers: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        closed = [False]

        def attempt(request: AgentRequest) -> AgentResponse:
            if closed[0]:
                raise RunClosedError("the caller stopped reading this run's stream")
            to_run.put(("attempt", (request, _layer_now() if observed else None)))
            kind, value = to_layers.get()
            if kind == "error":
                raise value
            return value  # type: ignore[no-any-return]

        def work(request: AgentRequest) -> None:
            try:
                to_run.put(("done", onion(request)))
            except BaseException as exc:
                to_run.put(("raise", exc))

        observed = watcher() is not None
        onion = self._onion(_sync_layer, attempt, observed, skipped(this.request.config))
        this.note_start()
        _POOL.run(partial(contextvars.copy_context().run, work, this.request), nested=True)
        try:
            while True:
                kind, value = to_run.get()
                if kind == "raise":
                    raise value
                if kind == "done":
                    yield from this.replaced(value)
                    return
                request, parent = value
                request = this.prepare(request)
                nested = _nest_under(parent)
                try:
                    yield from tapped(this.tap, this.stream(run, request))
                except BaseException as exc:
                    if isinstance(exc, GeneratorExit):
                        raise
                    to_layers.put(("error", exc))
                    continue
                finally:
                    _unnest(nested)
                to_layers.put(("ok", this.response()))
        finally:
            closed[0] = True
            to_layers.put(("error", RunClosedError("the caller stopped reading this run's stream")))

    async def _astreamed(self, this: _Run, run: ARun) -> AsyncIterator[Any]:
        """``run``'s stream with the layers around it (they run as a task of this loop)."""
        to_run: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        to_layers: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        closed = [False]

        async def attempt(request: AgentRequest) -> AgentResponse:
            if closed[0]:
                raise RunClosedError("the caller stopped reading this run's stream")
            await to_run.put(("attempt", (request, _layer_now() if observed else None)))
            kind, value = await to_layers.get()
            if kind == "error":
                raise value
            return value  # type: ignore[no-any-return]

        async def work(request: AgentRequest) -> None:
            try:
                await to_run.put(("done", await onion(request)))
            except BaseException as exc:
                await to_run.put(("raise", exc))
                if isinstance(exc, asyncio.CancelledError):
                    raise

        observed = watcher() is not None
        onion = self._onion(_async_layer, attempt, observed, skipped(this.request.config))
        await this.anote_start()
        task = asyncio.ensure_future(work(this.request))
        try:
            while True:
                kind, value = await to_run.get()
                if kind == "raise":
                    raise value
                if kind == "done":
                    for chunk in this.replaced(value):
                        yield chunk
                    return
                request, parent = value
                request = await this.aprepare(request)
                nested = _nest_under(parent)
                seen = atapped(this.tap, this.stream(run, request))
                try:
                    async for chunk in seen:
                        yield chunk
                except (Exception, asyncio.CancelledError) as exc:
                    if isinstance(exc, asyncio.CancelledError):
                        raise
                    await to_layers.put(("error", exc))
                    continue
                finally:
                    await seen.aclose()
                    _unnest(nested)
                await to_layers.put(("ok", this.response()))
        finally:
            closed[0] = True
            if not task.done():
                task.cancel()
                # The layers' end is the run's end: what they raise now is not reported.
                with contextlib.suppress(BaseException):
                    await task
