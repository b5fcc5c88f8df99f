"""Cleanup that always runs: ``@after_agent(always=True)`` hooks, also when a run fails.

On success an always-run hook is an ordinary ``after_agent`` node. When a run fails (an
``Exception`` escapes ``invoke``/``ainvoke``/``stream``/``astream``: from a hook, the model,
a tool, a ``GraphRecursionError``, a ``HookTimeoutError``), each always-run hook that has not
started in this run is called once more, in ``after_agent`` order, with

- ``state``: the last state the run reached (the checkpointer's, when the agent has one
  and the config names a thread; otherwise the last ``"values"`` the graph streamed);
- ``runtime``: a ``Runtime`` with the run's ``context`` and the agent's ``store``;
- :func:`funcware.policies.run_error` returning the exception that failed the run.

What such a call returns is discarded (nothing is written, so the failed step resumes from
the checkpoint exactly as without it); an exception it raises is logged on the
``funcware`` logger. Then the run's exception propagates, the same object, unchanged.
Interrupts (the run is paused, not failed), cancellation and ``KeyboardInterrupt`` do not
trigger it. An agent without always-run hooks has no such run wrap.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.errors import GraphBubbleUp
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from funcware.compose.graph.plan import AgentPlan
from funcware.compose.steps.nodes import run_node, run_node_async
from funcware.hooks.middleware import HookImpl
from funcware.policies.hooks import RUN_RECORD, RunRecord

__all__ = ["AlwaysRun", "always_run", "current_error"]

logger = logging.getLogger("funcware")

_ERROR: contextvars.ContextVar[BaseException | None] = contextvars.ContextVar(
    "funcware_run_error", default=None
)
_SKIP = object()


def current_error() -> BaseException | None:
    """The exception that failed the run, inside an always-run hook called for it."""
    return _ERROR.get()


class _Watch:
    """Follows one run's stream: the last root ``"values"``, hiding any it asked for itself."""

    def __init__(self, graph: CompiledStateGraph[Any, Any, Any, Any], kwargs: dict[str, Any]):
        requested = kwargs.get("stream_mode") or graph.stream_mode
        self.single = isinstance(requested, str)
        modes = [requested] if self.single else list(requested)
        self.tracking = not _saver(graph)
        self.added = self.tracking and "values" not in modes
        self.plain_values = self.single and not self.added
        self.v2 = kwargs.get("version", "v1") == "v2"
        self.subgraphs = bool(kwargs.get("subgraphs"))
        self.kwargs = {**kwargs, "stream_mode": [*modes, "values"]} if self.added else kwargs
        self.last: Any = None

    def see(self, chunk: Any) -> Any:
        """``chunk`` as the caller asked for it, or ``_SKIP``."""
        if not self.tracking:
            return chunk
        if self.v2:
            if chunk.get("type") == "values":
                if not chunk.get("ns"):
                    self.last = chunk.get("data")
                if self.added:
                    return _SKIP
            return chunk
        if self.plain_values:  # only "values" was asked for
            ns, payload = chunk if self.subgraphs else ((), chunk)
            if not ns:
                self.last = payload
            return chunk
        ns, mode, payload = chunk if self.subgraphs else ((), *chunk)
        if mode == "values":
            if not ns:
                self.last = payload
            if self.added:
                return _SKIP
        if self.added and self.single:
            return (ns, payload) if self.subgraphs else payload
        return chunk


def _saver(graph: CompiledStateGraph[Any, Any, Any, Any]) -> bool:
    return isinstance(graph.checkpointer, BaseCheckpointSaver)


def _state_config(graph: Any, config: Any) -> Any:
    """The config to read the failed run's last checkpoint with, or ``None``."""
    configurable = dict((config or {}).get("configurable") or {})
    if not _saver(graph) or "thread_id" not in configurable:
        return None
    configurable.pop("checkpoint_id", None)  # the run's newest checkpoint, not its start
    return {**config, "configurable": configurable}


def _runtime(graph: Any, kwargs: dict[str, Any]) -> Runtime[Any]:
    return Runtime(context=kwargs.get("context"), store=graph.store)


def _fallback(input: Any) -> Any:
    return dict(input) if isinstance(input, dict) else {}


def _log_cleanup_failure(impl: HookImpl, exc: BaseException, error: BaseException) -> None:
    logger.error(
        "%s (always=True) raised %s: %s while cleaning up after the run failed with %s",
        impl.describe(),
        type(exc).__name__,
        exc,
        type(error).__name__,
        exc_info=exc,
    )


class AlwaysRun:
    """The run wrap of an agent with always-run ``after_agent`` hooks: they also run when a
    run fails. ``invoke``/``ainvoke`` go through ``stream``/``astream``, so those two are
    wrapped (see ``funcware.compose.steps.runs.RunWrap``)."""

    def __init__(self, cleanups: tuple[HookImpl, ...]) -> None:
        self.cleanups = cleanups
        """The always-run hooks, in the order they run (``after_agent`` order)."""

    def _pending(self, record: RunRecord) -> list[HookImpl]:
        return [impl for impl in self.cleanups if impl.label not in record.started]

    def _cleanup(
        self, graph: Any, state: Any, error: Exception, record: RunRecord, kwargs: Any
    ) -> None:
        token = _ERROR.set(error)
        try:
            for impl in self._pending(record):
                try:
                    run_node(impl, state, _runtime(graph, kwargs))
                except Exception as exc:
                    _log_cleanup_failure(impl, exc, error)
        finally:
            _ERROR.reset(token)

    async def _acleanup(
        self, graph: Any, state: Any, error: Exception, record: RunRecord, kwargs: Any
    ) -> None:
        token = _ERROR.set(error)
        try:
            for impl in self._pending(record):
                try:
                    await run_node_async(impl, state, _runtime(graph, kwargs))
                except Exception as exc:
                    _log_cleanup_failure(impl, exc, error)
        finally:
            _ERROR.reset(token)

    def _last_state(self, graph: Any, config: Any, watch: _Watch, input: Any) -> Any:
        state_config = _state_config(graph, config)
        if state_config is not None:
            try:
                return graph.get_state(state_config).values
            except Exception:
                logger.exception("funcware could not read the failed run's last checkpoint")
        return watch.last if watch.last is not None else _fallback(input)

    async def _alast_state(self, graph: Any, config: Any, watch: _Watch, input: Any) -> Any:
        state_config = _state_config(graph, config)
        if state_config is not None:
            try:
                return (await graph.aget_state(state_config)).values
            except Exception:
                logger.exception("funcware could not read the failed run's last checkpoint")
        return watch.last if watch.last is not None else _fallback(input)

    def stream(
        self,
        graph: Any,
        input: Any,
        config: Any,
        kwargs: dict[str, Any],
        run: Callable[..., Iterator[Any]],
    ) -> Iterator[Any]:
        """``run``'s stream; on failure, the always-run hooks run before it raises."""
        watch = _Watch(graph, kwargs)
        record = RunRecord()
        chunks = run(input, config, **watch.kwargs)
        try:
            while True:
                error: Exception | None = None
                token = RUN_RECORD.set(record)
                try:
                    chunk = next(chunks)
                except StopIteration:
                    return
                except Exception as exc:
                    error = exc
                finally:
                    RUN_RECORD.reset(token)
                if error is not None:
                    if not isinstance(error, GraphBubbleUp):
                        state = self._last_state(graph, config, watch, input)
                        self._cleanup(graph, state, error, record, kwargs)
                    raise error
                seen = watch.see(chunk)
                if seen is not _SKIP:
                    yield seen
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()

    async def astream(
        self,
        graph: Any,
        input: Any,
        config: Any,
        kwargs: dict[str, Any],
        run: Callable[..., AsyncIterator[Any]],
    ) -> AsyncIterator[Any]:
        """``run``'s stream; on failure, the always-run hooks run before it raises."""
        watch = _Watch(graph, kwargs)
        record = RunRecord()
        chunks = run(input, config, **watch.kwargs)
        try:
            while True:
                error: Exception | None = None
                token = RUN_RECORD.set(record)
                try:
                    chunk = await anext(chunks)
                except StopAsyncIteration:
                    return
                except Exception as exc:
                    error = exc
                finally:
                    RUN_RECORD.reset(token)
                if error is not None:
                    if not isinstance(error, GraphBubbleUp):
                        state = await self._alast_state(graph, config, watch, input)
                        await self._acleanup(graph, state, error, record, kwargs)
                    raise error
                seen = watch.see(chunk)
                if seen is not _SKIP:
                    yield seen
        finally:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()


def always_run(plan: AgentPlan) -> AlwaysRun | None:
    """The run wrap for the plan's always-run hooks, or ``None`` when it has none."""
    cleanups = tuple(
        impl for impl in reversed(plan.hooks["after_agent"]) if impl.options.get("always")
    )
    return AlwaysRun(cleanups) if cleanups else None
