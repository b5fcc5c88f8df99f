"""A run inside the features' run wraps (``AgentGraph.run_wraps``), first outermost. Loaded
only by a run of an agent that has run wraps."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from funcware.compose.steps.runs import AgentGraph

__all__ = ["wrapped"]


def wrapped(graph: AgentGraph, run: Callable[..., Any], async_: bool) -> Callable[..., Any]:
    """``run`` (langgraph's ``stream``, or ``astream`` if ``async_``) inside ``graph``'s run
    wraps, called as ``run`` is."""
    for wrap in reversed(graph.run_wraps):
        run = partial(_around, wrap.astream if async_ else wrap.stream, graph, run)
    return run


def _around(
    wrap: Callable[..., Any], graph: AgentGraph, run: Any, input: Any, config: Any, **kwargs: Any
) -> Any:
    return wrap(graph, input, config, kwargs, run)
