"""Running one hook call inside a one-node graph, so that ``interrupt()`` can pause and resume it.

``interrupt()`` needs the config of a running graph node, and a checkpointer to be resumed.
The test kit runs each hook call as the only node of a graph checkpointed in memory; the
hook's state, result and errors pass around the graph, only the pause goes through it. As
in an agent, a resumed hook runs again from its start, and ``interrupt()`` returns the answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypedDict, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Interrupt

__all__ = ["NO_RESUME", "Paused", "arun_in_graph", "run_in_graph"]

T = TypeVar("T")


class _NoResume:
    def __repr__(self) -> str:
        return "NO_RESUME"


NO_RESUME: Any = _NoResume()
"""``run_hook``'s default ``resume``: answer no interrupt."""


class _Unused(TypedDict, total=False):
    """The graph's own state: nothing (the hook is given its state directly)."""

    funcware_unused: int


_CONFIG: RunnableConfig = {"configurable": {"thread_id": "funcware-run-hook"}}


@dataclass
class Paused(Generic[T]):
    """How one hook call ended: its ``result``, or the ``interrupts`` it paused on."""

    result: T | None
    interrupts: tuple[Interrupt, ...]
    resumed: bool
    """Whether the call paused and was resumed with the answer given."""


def _graph(name: str, node: Callable[..., Any]) -> CompiledStateGraph[Any, Any, Any, Any]:
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(_Unused)
    graph.add_node(name, node)
    graph.add_edge(START, name)
    return graph.compile(checkpointer=InMemorySaver())


def _ended(results: Sequence[T], interrupts: Sequence[Interrupt], resumed: bool) -> Paused[T]:
    return Paused(results[-1] if results and not interrupts else None, tuple(interrupts), resumed)


def run_in_graph(name: str, run: Callable[[RunnableConfig], T], resume: Any) -> Paused[T]:
    """Call ``run(config)`` as graph node ``name``; answer its first pause with ``resume``."""
    results: list[T] = []

    def node(state: Any, config: RunnableConfig) -> None:
        results.append(run(config))

    graph = _graph(name, node)
    graph.invoke({}, _CONFIG)
    interrupts = graph.get_state(_CONFIG).interrupts
    resumed = bool(interrupts) and resume is not NO_RESUME
    if resumed:
        graph.invoke(Command(resume=resume), _CONFIG)
        interrupts = graph.get_state(_CONFIG).interrupts
    return _ended(results, interrupts, resumed)


async def arun_in_graph(
    name: str, run: Callable[[RunnableConfig], Awaitable[T]], resume: Any
) -> Paused[T]:
    """Async :func:`run_in_graph`."""
    results: list[T] = []

    async def node(state: Any, config: RunnableConfig) -> None:
        results.append(await run(config))

    graph = _graph(name, node)
    await graph.ainvoke({}, _CONFIG)
    interrupts = (await graph.aget_state(_CONFIG)).interrupts
    resumed = bool(interrupts) and resume is not NO_RESUME
    if resumed:
        await graph.ainvoke(Command(resume=resume), _CONFIG)
        interrupts = (await graph.aget_state(_CONFIG)).interrupts
    return _ended(results, interrupts, resumed)
