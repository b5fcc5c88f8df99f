"""What a run wrap is: the contract features implement to run around every run of an agent
(``AgentGraph.run_wraps``). Typing only: nothing imports it at run time."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from langchain_core.runnables import RunnableConfig

if TYPE_CHECKING:
    from funcware.compose.steps.runs import AgentGraph

__all__ = ["RunWrap"]


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
