"""What one agent run remembers for its error messages: which hooks jumped, how often.

``create_agent`` returns an :class:`AgentGraph`: a ``CompiledStateGraph`` whose
``stream``/``astream`` (which ``invoke``, ``ainvoke`` and ``stream_events`` go through)
give each run a :class:`JumpLog` in its config. When a run hits the recursion limit, the
error names the hooks whose jumps kept it going; a resume without a checkpointer says
what to pass. Nothing else about a run changes.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from contextlib import nullcontext
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER
from langgraph.errors import GraphRecursionError
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from funcware.observe.calls import agent_run, installed

from .always import AlwaysRunGraph
from .jumplog import LOG_KEY, JumpLog

__all__ = ["AgentGraph", "as_agent_graph"]


def _with_log(config: RunnableConfig | None, log: JumpLog) -> RunnableConfig:
    given: dict[str, Any] = dict(config or {})
    given["configurable"] = {**given.get("configurable", {}), LOG_KEY: log}
    return given  # type: ignore[return-value]


def _explained(exc: GraphRecursionError, log: JumpLog) -> GraphRecursionError:
    message = exc.args[0] if exc.args else ""
    exc.args = (f"{message}\n{log.describe()}", *exc.args[1:])
    return exc


def _check_resume(graph: CompiledStateGraph[Any, Any, Any, Any], input: Any, config: Any) -> None:
    if not isinstance(input, Command) or input.resume is None or graph.checkpointer:
        return
    if (config or {}).get("configurable", {}).get(CONFIG_KEY_CHECKPOINTER) is not None:
        return  # a subgraph run under a parent that has one
    raise RuntimeError(
        "Cannot use Command(resume=...) without checkpointer. funcware: this agent was "
        "built without one, so no paused run was saved to resume. Build it with "
        "create_agent(..., checkpointer=InMemorySaver()) (langgraph.checkpoint.memory) and "
        "run it with config={'configurable': {'thread_id': '...'}}, then resume that thread."
    )


class AgentGraph(CompiledStateGraph[Any, Any, Any, Any]):
    """The compiled agent: langgraph's graph, with errors that name the hooks involved."""

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """``CompiledStateGraph.stream``; a recursion error names the hooks that jumped.

        An installed instrument (``funcware.observe.instrument()``) is told about the run.
        """
        _check_resume(self, input, config)
        instruments = installed()
        log = JumpLog()
        with agent_run(instruments, _agent_name(self), input, config) if instruments else _NO_RUN:
            try:
                yield from super().stream(input, _with_log(config, log), **kwargs)
            except GraphRecursionError as exc:
                raise _explained(exc, log) from None

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """``CompiledStateGraph.astream``; a recursion error names the hooks that jumped.

        An installed instrument (``funcware.observe.instrument()``) is told about the run.
        """
        _check_resume(self, input, config)
        instruments = installed()
        log = JumpLog()
        chunks = cast(
            "AsyncGenerator[Any, None]", super().astream(input, _with_log(config, log), **kwargs)
        )
        with agent_run(instruments, _agent_name(self), input, config) if instruments else _NO_RUN:
            try:
                async for chunk in chunks:
                    yield chunk
            except GraphRecursionError as exc:
                raise _explained(exc, log) from None
            finally:
                await chunks.aclose()


_NO_RUN = nullcontext()


def _agent_name(graph: CompiledStateGraph[Any, Any, Any, Any]) -> str | None:
    """The name given to ``create_agent`` (``None`` when none was given)."""
    name = (graph.config or {}).get("metadata", {}).get("lc_agent_name")
    return name if isinstance(name, str) else None


class AlwaysRunAgentGraph(AgentGraph, AlwaysRunGraph):
    """An :class:`AgentGraph` whose always-run ``after_agent`` hooks also run on failure."""


def as_agent_graph(
    compiled: CompiledStateGraph[Any, Any, Any, Any],
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The same compiled graph (no copy) as an :class:`AgentGraph`."""
    always = isinstance(compiled, AlwaysRunGraph)
    compiled.__class__ = AlwaysRunAgentGraph if always else AgentGraph
    return compiled
