"""What a run wrap is: the contract features implement to run around every run of an agent
(``AgentGraph.run_wraps``), and the aliases their signatures use. The core imports it for
typing only; the features that implement a run wrap load it with themselves."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from langchain_core.runnables import RunnableConfig

if TYPE_CHECKING:
    from funcware.compose.steps.runs import AgentGraph

__all__ = ["ARun", "How", "Kwargs", "Run", "RunWrap", "Runner", "Through"]

Kwargs = dict[str, Any]
"""The keyword arguments of the run's ``stream`` (``stream_mode``, ``subgraphs``, ...)."""

_R = TypeVar("_R")

Runner = Callable[..., _R]
"""``run(input, config, **kwargs)``, the next wrap's stream (the innermost: the graph's own),
giving ``_R``: an iterator of chunks (:data:`Run`) or an async one (:data:`ARun`)."""
Run = Runner[Iterator[Any]]
"""What a run wrap's ``stream`` wraps."""
ARun = Runner[AsyncIterator[Any]]
"""What a run wrap's ``astream`` wraps."""
How = Literal["stream", "astream"]
"""Which of a run wrap's methods runs (:meth:`Through.through`)."""


class RunWrap(Protocol):
    """Runs around every run of an agent (``funcware.policies``' always-run cleanups).

    ``stream(graph, input, config, kwargs, run)`` yields what ``run(input, config,
    **kwargs)`` yields, doing its work around it; ``astream`` is the async twin.
    """

    def stream(
        self, graph: AgentGraph, input: Any, config: RunnableConfig, kwargs: Kwargs, run: Run
    ) -> Iterator[Any]: ...

    def astream(
        self, graph: AgentGraph, input: Any, config: RunnableConfig, kwargs: Kwargs, run: ARun
    ) -> AsyncIterator[Any]: ...


class Through:
    """A run wrap whose ``stream`` and ``astream`` do the same but for the run they are given
    (and, so, the method of a run wrap they hand it to): both call :meth:`through`."""

    def stream(
        self, graph: AgentGraph, input: Any, config: RunnableConfig, kwargs: Kwargs, run: Run
    ) -> Iterator[Any]:
        return self.through(graph, input, config, kwargs, run, "stream")

    def astream(
        self, graph: AgentGraph, input: Any, config: RunnableConfig, kwargs: Kwargs, run: ARun
    ) -> AsyncIterator[Any]:
        return self.through(graph, input, config, kwargs, run, "astream")

    def through(
        self, graph: AgentGraph, input: Any, config: Any, kwargs: Kwargs, run: Runner[_R], how: How
    ) -> _R:
        """What ``run(input, config, **kwargs)`` gives, this wrap doing its work around it
        (``how``: which of ``stream`` and ``astream`` runs)."""
        raise NotImplementedError
