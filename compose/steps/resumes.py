"""A run given a ``Command``: a resume needs a checkpointer and must answer what its thread
has pending. Loaded only when a run's input is a ``Command``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER
from langgraph.types import Command

from funcware.compose.steps.run_errors import check_pending, no_checkpointer

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

__all__ = ["acheck_resume", "check_resume"]


def _answers_a_pause(
    graph: CompiledStateGraph[Any, Any, Any, Any], input: Command[Any], config: Any
) -> bool:
    """Whether ``input`` resumes a paused run of the graph's own thread (not a subgraph's);
    a resume without a checkpointer (here or in a parent graph) is refused."""
    if input.resume is None:
        return False
    configurable = (config or {}).get("configurable", {})
    if not graph.checkpointer:
        if configurable.get(CONFIG_KEY_CHECKPOINTER) is not None:
            return False  # a subgraph run under a parent that has one
        raise no_checkpointer()
    return configurable.get("thread_id") is not None and CONFIG_KEY_CHECKPOINTER not in configurable


def check_resume(
    graph: CompiledStateGraph[Any, Any, Any, Any], input: Command[Any], config: Any
) -> None:
    """Refuse a resume the graph cannot take, before anything runs."""
    if _answers_a_pause(graph, input, config):
        state = graph.get_state(cast(RunnableConfig, config))
        check_pending(input, config, state.interrupts, bool(state.next))


async def acheck_resume(
    graph: CompiledStateGraph[Any, Any, Any, Any], input: Command[Any], config: Any
) -> None:
    """Async :func:`check_resume`."""
    if _answers_a_pause(graph, input, config):
        state = await graph.aget_state(cast(RunnableConfig, config))
        check_pending(input, config, state.interrupts, bool(state.next))
