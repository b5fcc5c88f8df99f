"""The compiled agent: each run's input checked (a resume: :mod:`.resumes`; a context:
:mod:`.contexts`), a :class:`JumpLog` in its config, and the features' run wraps and the
watcher around it."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphRecursionError
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from funcware.compose.observing import watcher
from funcware.compose.seams import claim, claims
from funcware.compose.steps.jumplog import LOG_KEY, JumpLog

if TYPE_CHECKING:
    from funcware.compose.graph.plan import AgentPlan
    from funcware.compose.steps.run_wrap import RunWrap

__all__ = ["AgentGraph"]

_NO_RUN = nullcontext()


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

    def _start(
        self, input: Any, config: RunnableConfig | None, kwargs: dict[str, Any]
    ) -> tuple[JumpLog, RunnableConfig, AbstractContextManager[Any]]:
        """A run's jump log, its config carrying it, and what observes it (its context checked,
        the features that take a key of its config given their run wraps)."""
        if kwargs.get("context") is not None and self.context_schema is not None:
            from funcware.compose.steps.contexts import check_context

            check_context(self, kwargs["context"])
        log = JumpLog()
        given: dict[str, Any] = dict(config or {})
        given["configurable"] = {**given.get("configurable", {}), LOG_KEY: log}
        observer = watcher()
        observed = _NO_RUN if observer is None else observer.run(self, input, config)
        taken = claims(config)
        if taken:
            claim(self, taken)
        return log, cast(RunnableConfig, given), observed

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """``CompiledStateGraph.stream``; a recursion error names the hooks that jumped."""
        if isinstance(input, Command):
            from funcware.compose.steps.resumes import check_resume

            check_resume(self, input, config)
        log, logged, observed = self._start(input, config, kwargs)
        run = super().stream
        if self.run_wraps:
            from funcware.compose.steps.wrapped_runs import wrapped

            run = wrapped(self, run, async_=False)
        with observed:
            try:
                yield from run(input, logged, **kwargs)
            except GraphRecursionError as exc:
                from funcware.compose.steps.run_errors import explained

                raise explained(exc, log) from None

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """Async :meth:`stream`."""
        if isinstance(input, Command):
            from funcware.compose.steps.resumes import acheck_resume

            await acheck_resume(self, input, config)
        log, logged, observed = self._start(input, config, kwargs)
        run = super().astream
        if self.run_wraps:
            from funcware.compose.steps.wrapped_runs import wrapped

            run = wrapped(self, run, async_=True)
        chunks = cast("AsyncGenerator[Any, None]", run(input, logged, **kwargs))
        with observed:
            try:
                async for chunk in chunks:
                    yield chunk
            except GraphRecursionError as exc:
                from funcware.compose.steps.run_errors import explained

                raise explained(exc, log) from None
            finally:
                await chunks.aclose()
