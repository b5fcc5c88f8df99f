"""What one agent run remembers for its error messages: which hooks jumped, how often.

``create_agent`` returns an :class:`AgentGraph`: a ``CompiledStateGraph`` whose
``stream``/``astream`` (which ``invoke``, ``ainvoke`` and ``stream_events`` go through)
give each run a :class:`JumpLog` in its config. When a run hits the recursion limit, the
error names the hooks whose jumps kept it going; a resume without a checkpointer says
what to pass. Nothing else about a run changes.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping
from contextlib import nullcontext
from dataclasses import fields, is_dataclass
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER
from langgraph.errors import GraphRecursionError
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command
from pydantic import BaseModel
from typing_extensions import is_typeddict

from funcware.compose.steps.jumplog import LOG_KEY, JumpLog
from funcware.hooks.wording import a
from funcware.observe.calls import agent_run, installed
from funcware.policies.always import AlwaysRunGraph

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


def _field_names(schema: type[Any]) -> list[str] | None:
    """The fields of a dataclass or pydantic model; None for other classes."""
    if is_dataclass(schema):
        return [f.name for f in fields(schema)]
    if issubclass(schema, BaseModel):
        return list(schema.model_fields)
    return None


def _context_problem(schema: type[Any], context: Any) -> str | None:
    """Why ``context`` cannot serve as ``context_schema``; None if it can (or cannot be told).

    Lenient as duck typing is: an object with every field of a dataclass or model passes.
    """
    if is_typeddict(schema):
        return None if isinstance(context, Mapping) else "a dict of its keys"
    if not isinstance(schema, type):
        return None
    try:
        names = _field_names(schema)
        if names is None:
            scalar = isinstance(context, (str, bytes, int, float))
            wrong = scalar and not isinstance(context, schema)
            return f"{schema.__name__}(...)" if wrong else None
        if isinstance(context, (schema, Mapping)) or all(hasattr(context, n) for n in names):
            return None
    except TypeError:  # a Protocol or generic alias: isinstance cannot tell
        return None
    return f"{schema.__name__}(...) or a dict of its fields"


def _check_context(graph: CompiledStateGraph[Any, Any, Any, Any], kwargs: dict[str, Any]) -> None:
    context, schema = kwargs.get("context"), graph.context_schema
    if context is None or schema is None:
        return
    fix = _context_problem(schema, context)
    if fix is not None:
        raise TypeError(
            f"context={context!r} ({type(context).__name__}) does not match the agent's "
            f"context_schema={schema.__name__}: hooks read runtime.context as "
            f"{a(schema.__name__)}. Pass context={fix} to invoke/stream."
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
        _check_context(self, kwargs)
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
        _check_context(self, kwargs)
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
