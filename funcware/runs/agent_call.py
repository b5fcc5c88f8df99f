"""``wrap_agent_call`` at run time: the layers around each run, as one run wrap.

An :class:`AgentCallWrap` is a run wrap (``funcware.compose.steps.runs.RunWrap``): the
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
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from funcware.compose.observing import watcher
from funcware.compose.threads.bridge import call_soon_in_loop, run_coroutine_sync, run_in_thread
from funcware.compose.threads.pool import BridgePool, default_settings
from funcware.errors import RunClosedError
from funcware.hooks.types import AgentRequest, AgentResponse
from funcware.hooks.wording import returned
from funcware.runs.per_run import skipped
from funcware.runs.taps import SKIP, Tap

if TYPE_CHECKING:
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


def _observed(layer: AgentLayer, call: Callable[[], AgentResponse], calls: list[int]) -> Any:
    from funcware.observe.layers import failure_outcome
    from funcware.observe.observers import active, end, start

    observers = active()
    if not observers:
        return call()
    started = start(observers, layer.name, HOOK, layer.where)
    try:
        response = call()
    except BaseException as exc:
        end(observers, started, failure_outcome(exc), handler_calls=calls[0], error=exc)
        raise
    outcome: Outcome = "retried" if calls[0] > 1 else "passed" if calls[0] else "short_circuited"
    end(observers, started, outcome, handler_calls=calls[0])
    return response


async def _aobserved(
    layer: AgentLayer, call: Callable[[], Awaitable[AgentResponse]], calls: list[int]
) -> Any:
    from funcware.observe.layers import failure_outcome
    from funcware.observe.observers import active, end, start

    observers = active()
    if not observers:
        return await call()
    started = start(observers, layer.name, HOOK, layer.where)
    try:
        response = await call()
    except BaseException as exc:
        end(observers, started, failure_outcome(exc), handler_calls=calls[0], error=exc)
        raise
    outcome: Outcome = "retried" if calls[0] > 1 else "passed" if calls[0] else "short_circuited"
    end(observers, started, outcome, handler_calls=calls[0])
    return response


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
        calls = [0]

        def handler(request: AgentRequest) -> AgentResponse:
            calls[0] += 1
            return inner(request)

        def run() -> AgentResponse:
            if layer.sync is not None:
                return _checked(layer, layer.sync(request, handler))

            async def ahandler(request: AgentRequest) -> AgentResponse:
                return await run_in_thread(handler, request)

            assert layer.async_ is not None
            return _checked(layer, run_coroutine_sync(layer.async_(request, ahandler)))

        return _observed(layer, run, calls) if observed else run()

    return call


def _async_layer(
    layer: AgentLayer,
    inner: Callable[[AgentRequest], Coroutine[Any, Any, AgentResponse]],
    observed: bool,
) -> Callable[[AgentRequest], Coroutine[Any, Any, AgentResponse]]:
    """``layer`` around ``inner``, awaited in the caller's loop."""

    async def call(request: AgentRequest) -> AgentResponse:
        calls = [0]

        async def handler(request: AgentRequest) -> AgentResponse:
            calls[0] += 1
            return await inner(request)

        async def run() -> AgentResponse:
            if layer.async_ is not None:
                return _checked(layer, await layer.async_(request, handler))
            loop = asyncio.get_running_loop()

            def sync_handler(request: AgentRequest) -> AgentResponse:
                calls[0] += 1
                return call_soon_in_loop(loop, inner(request))

            assert layer.sync is not None
            return _checked(layer, await run_in_thread(layer.sync, request, sync_handler))

        return await (_aobserved(layer, run, calls) if observed else run())

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


def _start_point(saver: BaseCheckpointSaver[Any], config: Any) -> Any:
    found = saver.get_tuple(config)
    return _FRESH if found is None else found.config["configurable"]["checkpoint_id"]


async def _astart_point(saver: BaseCheckpointSaver[Any], config: Any) -> Any:
    found = await saver.aget_tuple(config)
    return _FRESH if found is None else found.config["configurable"]["checkpoint_id"]


def _retry_config(config: Any, start: Any) -> Any:
    configurable = dict(config.get("configurable") or {})
    if start is _FRESH:
        configurable.pop("checkpoint_id", None)
    else:
        configurable["checkpoint_id"] = start
    return {**config, "configurable": configurable}


class _Attempts:
    """What the innermost handler asks of the caller's side, and where retries start."""

    def __init__(self, graph: Any, config: Any) -> None:
        self.saver = _saver(graph, config)
        self.start: Any = None
        self.count = 0
        self.thread_id = str((config.get("configurable") or {}).get("thread_id"))

    def prepare(self, request: AgentRequest) -> AgentRequest:
        """The request an attempt runs (a retry: from the run's starting checkpoint)."""
        self.count += 1
        if self.saver is None or self.count == 1:
            return request
        if self.start is _FRESH:
            self.saver.delete_thread(self.thread_id)
        return request.override(config=_retry_config(request.config, self.start))

    async def aprepare(self, request: AgentRequest) -> AgentRequest:
        """Async :meth:`prepare`."""
        self.count += 1
        if self.saver is None or self.count == 1:
            return request
        if self.start is _FRESH:
            await self.saver.adelete_thread(self.thread_id)
        return request.override(config=_retry_config(request.config, self.start))


def _kwargs(kwargs: dict[str, Any], request: AgentRequest) -> dict[str, Any]:
    if request.context is None and "context" not in kwargs:
        return kwargs
    return {**kwargs, "context": request.context}


class AgentCallWrap:
    """The run wrap of an agent with ``wrap_agent_call`` layers (first outermost)."""

    def __init__(self, layers: tuple[AgentLayer, ...]) -> None:
        self.layers = layers

    def _layers(self, off: frozenset[int]) -> tuple[AgentLayer, ...]:
        """The layers of this run: those of middleware the run switched off left out."""
        if not off:
            return self.layers
        return tuple(layer for layer in self.layers if id(layer.middleware) not in off)

    def _sync_onion(
        self,
        inner: Callable[[AgentRequest], AgentResponse],
        observed: bool,
        off: frozenset[int],
    ) -> Callable[[AgentRequest], AgentResponse]:
        for layer in reversed(self._layers(off)):
            inner = _sync_layer(layer, inner, observed)
        return inner

    def _async_onion(
        self,
        inner: Callable[[AgentRequest], Coroutine[Any, Any, AgentResponse]],
        observed: bool,
        off: frozenset[int],
    ) -> Callable[[AgentRequest], Coroutine[Any, Any, AgentResponse]]:
        for layer in reversed(self._layers(off)):
            inner = _async_layer(layer, inner, observed)
        return inner

    def _collected(
        self,
        graph: Any,
        input: Any,
        config: Any,
        kwargs: dict[str, Any],
        run: Callable[..., Iterator[Any]],
    ) -> Iterator[Any]:
        """For ``invoke``: the layers run in the caller's thread, each attempt's chunks are
        kept and given once the layers returned."""
        chunks: list[Any] = []
        last: list[AgentResponse | None] = [None]
        attempts = _Attempts(graph, config)
        if attempts.saver is not None:
            attempts.start = _start_point(attempts.saver, config)
        tap = Tap(graph.stream_mode, kwargs)

        def attempt(request: AgentRequest) -> AgentResponse:
            request = attempts.prepare(request)
            tap.last, tap.interrupts = None, ()
            for chunk in run(request.input, request.config, **_kwargs(tap.kwargs, request)):
                seen = tap.see(chunk)
                if seen is not SKIP:
                    chunks.append(seen)
            response = last[0] = AgentResponse(tap.last, tap.interrupts)
            return response

        onion = self._sync_onion(attempt, watcher() is not None, skipped(config))
        response = onion(AgentRequest(input, config, kwargs.get("context")))
        yield from chunks
        if response is not last[0]:
            chunk = tap.values_chunk(response.result, response.interrupts)
            if chunk is not SKIP:
                yield chunk

    async def _acollected(
        self,
        graph: Any,
        input: Any,
        config: Any,
        kwargs: dict[str, Any],
        run: Callable[..., AsyncIterator[Any]],
    ) -> AsyncIterator[Any]:
        """Async :meth:`_collected`: the layers run in the caller's task."""
        chunks: list[Any] = []
        last: list[AgentResponse | None] = [None]
        attempts = _Attempts(graph, config)
        if attempts.saver is not None:
            attempts.start = await _astart_point(attempts.saver, config)
        tap = Tap(graph.stream_mode, kwargs)

        async def attempt(request: AgentRequest) -> AgentResponse:
            request = await attempts.aprepare(request)
            tap.last, tap.interrupts = None, ()
            async for chunk in run(request.input, request.config, **_kwargs(tap.kwargs, request)):
                seen = tap.see(chunk)
                if seen is not SKIP:
                    chunks.append(seen)
            response = last[0] = AgentResponse(tap.last, tap.interrupts)
            return response

        onion = self._async_onion(attempt, watcher() is not None, skipped(config))
        response = await onion(AgentRequest(input, config, kwargs.get("context")))
        for chunk in chunks:
            yield chunk
        if response is not last[0]:
            chunk = tap.values_chunk(response.result, response.interrupts)
            if chunk is not SKIP:
                yield chunk

    def stream(
        self,
        graph: Any,
        input: Any,
        config: Any,
        kwargs: dict[str, Any],
        run: Callable[..., Iterator[Any]],
    ) -> Iterator[Any]:
        """``run``'s stream with the layers around it."""
        if _READ_TO_THE_END in kwargs:
            return self._collected(graph, input, config, kwargs, run)
        return self._streamed(graph, input, config, kwargs, run)

    def astream(
        self,
        graph: Any,
        input: Any,
        config: Any,
        kwargs: dict[str, Any],
        run: Callable[..., AsyncIterator[Any]],
    ) -> AsyncIterator[Any]:
        """Async :meth:`stream`."""
        if _READ_TO_THE_END in kwargs:
            return self._acollected(graph, input, config, kwargs, run)
        return self._astreamed(graph, input, config, kwargs, run)

    def _streamed(
        self,
        graph: Any,
        input: Any,
        config: Any,
        kwargs: dict[str, Any],
        run: Callable[..., Iterator[Any]],
    ) -> Iterator[Any]:
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
        onion = self._sync_onion(attempt, observed, skipped(config))
        attempts = _Attempts(graph, config)
        if attempts.saver is not None:
            attempts.start = _start_point(attempts.saver, config)
        tap = Tap(graph.stream_mode, kwargs)
        request = AgentRequest(input, config, kwargs.get("context"))
        _POOL.run(partial(contextvars.copy_context().run, work, request), nested=True)
        last: AgentResponse | None = None
        try:
            while True:
                kind, value = to_run.get()
                if kind == "raise":
                    raise value
                if kind == "done":
                    if value is not last:
                        chunk = tap.values_chunk(value.result, value.interrupts)
                        if chunk is not SKIP:
                            yield chunk
                    return
                request, parent = value
                request = attempts.prepare(request)
                tap.last, tap.interrupts = None, ()
                nested = _nest_under(parent)
                try:
                    for chunk in run(request.input, request.config, **_kwargs(tap.kwargs, request)):
                        seen = tap.see(chunk)
                        if seen is not SKIP:
                            yield seen
                except BaseException as exc:
                    if isinstance(exc, GeneratorExit):
                        raise
                    to_layers.put(("error", exc))
                    continue
                finally:
                    _unnest(nested)
                last = AgentResponse(tap.last, tap.interrupts)
                to_layers.put(("ok", last))
        finally:
            closed[0] = True
            to_layers.put(("error", RunClosedError("the caller stopped reading this run's stream")))

    async def _astreamed(
        self,
        graph: Any,
        input: Any,
        config: Any,
        kwargs: dict[str, Any],
        run: Callable[..., AsyncIterator[Any]],
    ) -> AsyncIterator[Any]:
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
        onion = self._async_onion(attempt, observed, skipped(config))
        attempts = _Attempts(graph, config)
        if attempts.saver is not None:
            attempts.start = await _astart_point(attempts.saver, config)
        tap = Tap(graph.stream_mode, kwargs)
        request = AgentRequest(input, config, kwargs.get("context"))
        task = asyncio.ensure_future(work(request))
        last: AgentResponse | None = None
        try:
            while True:
                kind, value = await to_run.get()
                if kind == "raise":
                    raise value
                if kind == "done":
                    if value is not last:
                        chunk = tap.values_chunk(value.result, value.interrupts)
                        if chunk is not SKIP:
                            yield chunk
                    return
                request, parent = value
                request = await attempts.aprepare(request)
                tap.last, tap.interrupts = None, ()
                nested = _nest_under(parent)
                chunks = run(request.input, request.config, **_kwargs(tap.kwargs, request))
                try:
                    async for chunk in chunks:
                        seen = tap.see(chunk)
                        if seen is not SKIP:
                            yield seen
                except (Exception, asyncio.CancelledError) as exc:
                    if isinstance(exc, asyncio.CancelledError):
                        raise
                    await to_layers.put(("error", exc))
                    continue
                finally:
                    aclose = getattr(chunks, "aclose", None)
                    if aclose is not None:
                        await aclose()
                    _unnest(nested)
                last = AgentResponse(tap.last, tap.interrupts)
                await to_layers.put(("ok", last))
        finally:
            closed[0] = True
            if not task.done():
                task.cancel()
                # The layers' end is the run's end: what they raise now is not reported.
                with contextlib.suppress(BaseException):
                    await task
