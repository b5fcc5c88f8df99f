"""The compiled agent: langgraph's graph, with each run's entry in one place.

``stream``/``astream`` (which ``invoke``, ``batch`` and ``stream_events`` go through) check
the input (a resume must answer a pause the thread has; a context must fit the schema),
give each run a :class:`JumpLog` (a recursion error names the hooks that jumped), and run
the features' run wraps and the watcher, when something observes the run.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping
from contextlib import nullcontext
from dataclasses import fields, is_dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER
from langgraph.errors import GraphRecursionError
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command
from pydantic import BaseModel
from typing_extensions import is_typeddict

from funcware.compose.observing import watcher
from funcware.compose.seams import claim, claims
from funcware.compose.steps.jumplog import LOG_KEY, JumpLog

if TYPE_CHECKING:
    from funcware.compose.graph.plan import AgentPlan
    from funcware.compose.steps.run_wrap import RunWrap

__all__ = ["AgentGraph"]


def _with_log(config: RunnableConfig | None, log: JumpLog) -> RunnableConfig:
    given: dict[str, Any] = dict(config or {})
    given["configurable"] = {**given.get("configurable", {}), LOG_KEY: log}
    return given  # type: ignore[return-value]


def _check_resume(graph: CompiledStateGraph[Any, Any, Any, Any], input: Any, config: Any) -> None:
    if not isinstance(input, Command) or input.resume is None or graph.checkpointer:
        return
    if (config or {}).get("configurable", {}).get(CONFIG_KEY_CHECKPOINTER) is not None:
        return  # a subgraph run under a parent that has one
    from funcware.compose.steps.run_errors import no_checkpointer

    raise no_checkpointer()


def _answers_a_pause(
    graph: CompiledStateGraph[Any, Any, Any, Any], input: Any, config: Any
) -> bool:
    """Whether ``input`` resumes a paused run of this graph's own thread (not a subgraph's)."""
    if not isinstance(input, Command) or input.resume is None or not graph.checkpointer:
        return False
    configurable = (config or {}).get("configurable", {})
    return configurable.get("thread_id") is not None and CONFIG_KEY_CHECKPOINTER not in configurable


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
        from funcware.compose.steps.run_errors import context_error

        raise context_error(graph, context, schema, fix)


class AgentGraph(CompiledStateGraph[Any, Any, Any, Any]):
    """The compiled agent: langgraph's graph, with errors that name the hooks involved."""

    plan: AgentPlan
    """What the agent was built from (``explain`` reads it)."""
    run_wraps: tuple[RunWrap, ...]
    """What runs around every run, first outermost (added by features at build, or by a
    feature that takes a run's config key, at that run: ``seams.claim_run_key``)."""
    arguments: Mapping[str, Any]
    """``create_agent``'s arguments: how to build this agent again (with other middleware)."""

    @classmethod
    def adopt(
        cls,
        compiled: CompiledStateGraph[Any, Any, Any, Any],
        plan: AgentPlan,
        arguments: Mapping[str, Any] | None = None,
    ) -> AgentGraph:
        """``compiled`` itself (no copy) as an agent built from ``plan``."""
        compiled.__class__ = cls
        agent = cast("AgentGraph", compiled)
        agent.plan = plan
        agent.run_wraps = ()
        agent.arguments = arguments or {}
        return agent

    def copy(self, update: dict[str, Any] | None = None) -> AgentGraph:
        """A copy (``with_config`` makes one) that keeps the plan and the run wraps."""
        own = {"plan": self.plan, "run_wraps": self.run_wraps, "arguments": self.arguments}
        attrs = {k: v for k, v in self.__dict__.items() if k not in ("__orig_class__", *own)}
        attrs.update(update or {})
        new = self.__class__(**attrs)
        new.__dict__.update(own)
        return new

    def _runs(self) -> Callable[..., Iterator[Any]]:
        run: Callable[..., Iterator[Any]] = super().stream
        for wrap in reversed(self.run_wraps):
            run = partial(_wrapped, wrap.stream, self, run)
        return run

    def _aruns(self) -> Callable[..., AsyncIterator[Any]]:
        run: Callable[..., AsyncIterator[Any]] = super().astream
        for wrap in reversed(self.run_wraps):
            run = partial(_wrapped, wrap.astream, self, run)
        return run

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """``CompiledStateGraph.stream``; a recursion error names the hooks that jumped."""
        _check_resume(self, input, config)
        if _answers_a_pause(self, input, config):
            from funcware.compose.steps.run_errors import check_pending

            state = self.get_state(cast(RunnableConfig, config))
            check_pending(input, config, state.interrupts, bool(state.next))
        _check_context(self, kwargs)
        log = JumpLog()
        observer = watcher()
        taken = claims(config)
        if taken:
            claim(self, taken)
        run = self._runs() if self.run_wraps else super().stream
        with _NO_RUN if observer is None else observer.run(self, input, config):
            try:
                yield from run(input, _with_log(config, log), **kwargs)
            except GraphRecursionError as exc:
                from funcware.compose.steps.run_errors import explained

                raise explained(exc, log) from None

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """``CompiledStateGraph.astream``; a recursion error names the hooks that jumped."""
        _check_resume(self, input, config)
        if _answers_a_pause(self, input, config):
            from funcware.compose.steps.run_errors import check_pending

            state = await self.aget_state(cast(RunnableConfig, config))
            check_pending(input, config, state.interrupts, bool(state.next))
        _check_context(self, kwargs)
        log = JumpLog()
        observer = watcher()
        taken = claims(config)
        if taken:
            claim(self, taken)
        run = self._aruns() if self.run_wraps else super().astream
        chunks = cast("AsyncGenerator[Any, None]", run(input, _with_log(config, log), **kwargs))
        with _NO_RUN if observer is None else observer.run(self, input, config):
            try:
                async for chunk in chunks:
                    yield chunk
            except GraphRecursionError as exc:
                from funcware.compose.steps.run_errors import explained

                raise explained(exc, log) from None
            finally:
                await chunks.aclose()


def _wrapped(
    wrap: Callable[..., Any], graph: AgentGraph, run: Any, input: Any, config: Any, **kwargs: Any
) -> Any:
    """``run`` with ``wrap`` around it, called as ``run`` is."""
    return wrap(graph, input, config, kwargs, run)


_NO_RUN = nullcontext()
