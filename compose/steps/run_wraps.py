"""Run wraps: what features run around every run of an agent (loaded when an agent has one).

A run wrap is data on the graph (``AgentGraph.run_wraps``, first outermost), so one class
serves every agent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from langchain_core.runnables import RunnableConfig

if TYPE_CHECKING:
    from funcware.compose.steps.runs import AgentGraph

__all__ = ["RunWrap", "wrapped"]

_Run = TypeVar("_Run", bound=Callable[..., Any])


class RunWrap(Protocol):
    """Runs around every run of an agent (``funcware.policies``' always-run cleanups).

    ``stream(graph, input, config, kwargs, run)`` yields what ``run(input, config,
    **kwargs)`` yields, doing its work around it; ``astream`` is the async twin.
    """

    def stream(
        self,
        graph: AgentGraph,
        input: Any,
        config: RunnableConfig,
        kwargs: dict[str, Any],
        run: Callable[..., Iterator[Any]],
    ) -> Iterator[Any]: ...

    def astream(
        self,
        graph: AgentGraph,
        input: Any,
        config: RunnableConfig,
        kwargs: dict[str, Any],
        run: Callable[..., AsyncIterator[Any]],
    ) -> AsyncIterator[Any]: ...


def wrapped(graph: AgentGraph, run: _Run, method: str) -> _Run:
    """``run`` (the graph's own ``stream`` or ``astream``) inside each of its run wraps'
    ``method``, first outermost."""
    for wrap in reversed(graph.run_wraps):
        run = partial(_wrapped, getattr(wrap, method), graph, run)  # type: ignore[assignment]
    return run


def _wrapped(
    wrap: Callable[..., Any], graph: AgentGraph, run: Any, input: Any, config: Any, **kwargs: Any
) -> Any:
    """``run`` with ``wrap`` around it, called as ``run`` is."""
    return wrap(graph, input, config, kwargs, run)
