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

import contextlib
import contextvars
import logging
from collections.abc import AsyncIterator, Iterator
from functools import partial
from typing import Any, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.errors import GraphBubbleUp
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from funcware.compose.graph.plan import AgentPlan
from funcware.compose.steps.nodes import run_node, run_node_async
from funcware.hooks.middleware import HookImpl
from funcware.policies.hooks import RUN_RECORD, RunRecord
from funcware.runs.taps import ARun, Run, Tap, atapped, tapped

__all__ = ["AlwaysRun", "always_run", "current_error"]

logger = logging.getLogger("funcware")

_T = TypeVar("_T")

_ERROR: contextvars.ContextVar[BaseException | None] = contextvars.ContextVar(
    "funcware_run_error", default=None
)


def current_error() -> BaseException | None:
    """The exception that failed the run, inside an always-run hook called for it."""
    return _ERROR.get()


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


def _tap(graph: CompiledStateGraph[Any, Any, Any, Any], kwargs: dict[str, Any]) -> Tap:
    """What follows the run's stream: the last root ``"values"`` (asked for, and hidden from
    the caller, when the caller did not ask for them), unless a checkpointer keeps them."""
    return Tap(graph.stream_mode, kwargs, tracking=not _saver(graph))


def _streamed_state(tap: Tap, input: Any) -> Any:
    """The last ``"values"`` the run streamed (its input, before any)."""
    if tap.last is not None:
        return tap.last
    return dict(input) if isinstance(input, dict) else {}


@contextlib.contextmanager
def _current(var: contextvars.ContextVar[_T], value: _T) -> Iterator[None]:
    """``var`` set to ``value`` inside the block: :data:`RUN_RECORD` to the run's record
    while each step of the run runs (each always-run hook that starts notes itself in it),
    ``_ERROR`` to the run's error while the cleanups run (:func:`current_error`)."""
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)


@contextlib.contextmanager
def _logged_not_raised(impl: HookImpl, error: Exception) -> Iterator[None]:
    """An ``Exception`` the always-run hook ``impl`` raises is logged, not raised."""
    try:
        yield
    except Exception as exc:
        logger.error(
            "%s (always=True) raised %s: %s while cleaning up after the run failed with %s",
            impl.describe(),
            type(exc).__name__,
            exc,
            type(error).__name__,
            exc_info=exc,
        )


@contextlib.contextmanager
def _checkpoint_unread() -> Iterator[None]:
    """An ``Exception`` reading the failed run's last checkpoint is logged, not raised."""
    try:
        yield
    except Exception:
        logger.exception("funcware could not read the failed run's last checkpoint")


class AlwaysRun:
    """The run wrap of an agent with always-run ``after_agent`` hooks: they also run when a
    run fails. ``invoke``/``ainvoke`` go through ``stream``/``astream``, so those two are
    wrapped (see ``funcware.compose.steps.run_wrap.RunWrap``)."""

    def __init__(self, cleanups: tuple[HookImpl, ...]) -> None:
        self.cleanups = cleanups
        """The always-run hooks, in the order they run (``after_agent`` order)."""

    def _pending(self, record: RunRecord) -> list[HookImpl]:
        return [impl for impl in self.cleanups if impl.label not in record.started]

    def _cleanup(
        self, graph: Any, state: Any, error: Exception, record: RunRecord, kwargs: Any
    ) -> None:
        with _current(_ERROR, error):
            for impl in self._pending(record):
                with _logged_not_raised(impl, error):
                    run_node(impl, state, _runtime(graph, kwargs))

    async def _acleanup(
        self, graph: Any, state: Any, error: Exception, record: RunRecord, kwargs: Any
    ) -> None:
        with _current(_ERROR, error):
            for impl in self._pending(record):
                with _logged_not_raised(impl, error):
                    await run_node_async(impl, state, _runtime(graph, kwargs))

    def _last_state(self, graph: Any, config: Any, tap: Tap, input: Any) -> Any:
        state_config = _state_config(graph, config)
        if state_config is not None:
            with _checkpoint_unread():
                return graph.get_state(state_config).values
        return _streamed_state(tap, input)

    async def _alast_state(self, graph: Any, config: Any, tap: Tap, input: Any) -> Any:
        state_config = _state_config(graph, config)
        if state_config is not None:
            with _checkpoint_unread():
                return (await graph.aget_state(state_config)).values
        return _streamed_state(tap, input)

    def stream(
        self, graph: Any, input: Any, config: Any, kwargs: dict[str, Any], run: Run
    ) -> Iterator[Any]:
        """``run``'s stream; on failure, the always-run hooks run before it raises."""
        tap, record = _tap(graph, kwargs), RunRecord()
        each_step = partial(_current, RUN_RECORD, record)
        try:
            yield from tapped(tap, run(input, config, **tap.kwargs), each_step)
        except Exception as exc:
            error = exc
        else:
            return
        if not isinstance(error, GraphBubbleUp):
            state = self._last_state(graph, config, tap, input)
            self._cleanup(graph, state, error, record, kwargs)
        raise error

    async def astream(
        self, graph: Any, input: Any, config: Any, kwargs: dict[str, Any], run: ARun
    ) -> AsyncIterator[Any]:
        """``run``'s stream; on failure, the always-run hooks run before it raises."""
        tap, record = _tap(graph, kwargs), RunRecord()
        each_step = partial(_current, RUN_RECORD, record)
        seen = atapped(tap, run(input, config, **tap.kwargs), each_step)
        async with contextlib.aclosing(seen):  # the run's stream closes when the caller stops
            try:
                async for chunk in seen:
                    yield chunk
            except Exception as exc:
                error = exc
            else:
                return
        if not isinstance(error, GraphBubbleUp):
            state = await self._alast_state(graph, config, tap, input)
            await self._acleanup(graph, state, error, record, kwargs)
        raise error


def always_run(plan: AgentPlan) -> AlwaysRun | None:
    """The run wrap for the plan's always-run hooks, or ``None`` when it has none."""
    cleanups = tuple(
        impl for impl in reversed(plan.hooks["after_agent"]) if impl.options.get("always")
    )
    return AlwaysRun(cleanups) if cleanups else None
