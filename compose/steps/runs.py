"""The compiled agent: langgraph's graph, with each run's entry in one place.

``create_agent`` returns an :class:`AgentGraph`: a ``CompiledStateGraph`` whose
``stream``/``astream`` (which ``invoke``, ``ainvoke``, ``batch`` and ``stream_events`` go
through) check the input (a resume must answer a pause the thread has: one on a thread
with nothing pending, or addressed to interrupt ids it does not have, is refused), give
each run a :class:`JumpLog` in its config (a run that hits the recursion limit names the
hooks whose jumps kept it going), and run the run wraps
features added (always-run cleanups) and the watcher, when something observes the run.
A run wrap is data on the graph, so one class serves every agent.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping
from contextlib import nullcontext
from dataclasses import fields, is_dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, cast

from langchain_core.runnables import RunnableConfig
from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER
from langgraph.errors import GraphRecursionError
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Interrupt
from pydantic import BaseModel
from typing_extensions import is_typeddict

from funcware.compose.observing import watcher
from funcware.compose.steps.jumplog import LOG_KEY, JumpLog
from funcware.hooks.middleware import HookImpl
from funcware.hooks.wording import a

if TYPE_CHECKING:
    from funcware.compose.graph.plan import AgentPlan

__all__ = ["AgentGraph", "RunWrap"]


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


def _answers_a_pause(
    graph: CompiledStateGraph[Any, Any, Any, Any], input: Any, config: Any
) -> bool:
    """Whether ``input`` resumes a paused run of this graph's own thread (not a subgraph's)."""
    if not isinstance(input, Command) or input.resume is None or not graph.checkpointer:
        return False
    configurable = (config or {}).get("configurable", {})
    return configurable.get("thread_id") is not None and CONFIG_KEY_CHECKPOINTER not in configurable


def _is_interrupt_id(key: object) -> bool:
    return isinstance(key, str) and len(key) == 32 and all(c in "0123456789abcdef" for c in key)


def _check_pending(
    input: Command[Any], config: Any, pending: tuple[Interrupt, ...], halfway: bool
) -> None:
    """Refuse a resume that nothing pending is waiting for: on a thread at rest with no pause,
    or addressed (``Command(resume={interrupt_id: value})``) to pauses the thread does not
    have. langgraph would start the run afresh, or drop the answer in silence. A thread
    ``halfway`` through a step (a run recovered after its worker died, the answer already
    taken) goes on as langgraph goes on."""
    thread = config["configurable"]["thread_id"]
    if not pending and halfway:
        return
    if not pending:
        raise ValueError(
            f"Command(resume=...) on thread {thread!r}, which has nothing pending: no "
            "interrupt is waiting for this answer (it was meant for a pause already answered, "
            "or for another thread). funcware: nothing was run; send a new turn with "
            "invoke({'messages': [...]}) instead, or resume the thread that is paused."
        )
    resume = input.resume
    if isinstance(resume, Mapping) and resume and all(_is_interrupt_id(k) for k in resume):
        ids = [i.id for i in pending]
        unknown = [k for k in resume if k not in ids]
        if unknown:
            raise ValueError(
                f"Command(resume=...) answers interrupt(s) {unknown} on thread {thread!r}, "
                f"which are not pending there (pending: {ids}): each was answered already, or "
                "belongs to another thread. funcware: nothing was run; answer the pending "
                "interrupts by their ids."
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
        readers = [i.describe() for i in _context_readers(graph)]
        who = f" ({'; '.join(readers)})" if readers else ""
        raise TypeError(
            f"context={context!r} ({type(context).__name__}) does not match the agent's "
            f"context_schema={schema.__name__}: hooks read runtime.context as "
            f"{a(schema.__name__)}{who}. Pass context={fix} to invoke/stream."
        )


def _context_readers(graph: Any) -> list[HookImpl]:
    """The hooks whose functions read an attribute named ``context`` (for the error only)."""
    plan = getattr(graph, "plan", None)
    found = []
    for impls in plan.hooks.values() if plan is not None else ():
        for impl in impls:
            for method in (impl.sync, impl.async_):
                func = getattr(method, "__func__", method)
                with contextlib.suppress(ValueError):
                    func = inspect.unwrap(func)
                code = getattr(func, "__code__", None)
                if code is not None and "context" in code.co_names:
                    found.append(impl)
                    break
    return found


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


class AgentGraph(CompiledStateGraph[Any, Any, Any, Any]):
    """The compiled agent: langgraph's graph, with errors that name the hooks involved."""

    plan: AgentPlan
    """What the agent was built from (``explain`` reads it)."""
    run_wraps: tuple[RunWrap, ...]
    """What runs around every run, first outermost (added by features at build)."""

    @classmethod
    def adopt(cls, compiled: CompiledStateGraph[Any, Any, Any, Any], plan: AgentPlan) -> AgentGraph:
        """``compiled`` itself (no copy) as an agent built from ``plan``."""
        compiled.__class__ = cls
        agent = cast("AgentGraph", compiled)
        agent.plan = plan
        agent.run_wraps = ()
        return agent

    def copy(self, update: dict[str, Any] | None = None) -> AgentGraph:
        """A copy (``with_config`` makes one) that keeps the plan and the run wraps."""
        own = {"plan": self.plan, "run_wraps": self.run_wraps}
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
            state = self.get_state(cast(RunnableConfig, config))
            _check_pending(input, config, state.interrupts, bool(state.next))
        _check_context(self, kwargs)
        log = JumpLog()
        observer = watcher()
        run = self._runs() if self.run_wraps else super().stream
        with _NO_RUN if observer is None else observer.run(self, input, config):
            try:
                yield from run(input, _with_log(config, log), **kwargs)
            except GraphRecursionError as exc:
                raise _explained(exc, log) from None

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """``CompiledStateGraph.astream``; a recursion error names the hooks that jumped."""
        _check_resume(self, input, config)
        if _answers_a_pause(self, input, config):
            state = await self.aget_state(cast(RunnableConfig, config))
            _check_pending(input, config, state.interrupts, bool(state.next))
        _check_context(self, kwargs)
        log = JumpLog()
        observer = watcher()
        run = self._aruns() if self.run_wraps else super().astream
        chunks = cast("AsyncGenerator[Any, None]", run(input, _with_log(config, log), **kwargs))
        with _NO_RUN if observer is None else observer.run(self, input, config):
            try:
                async for chunk in chunks:
                    yield chunk
            except GraphRecursionError as exc:
                raise _explained(exc, log) from None
            finally:
                await chunks.aclose()


def _wrapped(
    wrap: Callable[..., Any], graph: AgentGraph, run: Any, input: Any, config: Any, **kwargs: Any
) -> Any:
    """``run`` with ``wrap`` around it, called as ``run`` is."""
    return wrap(graph, input, config, kwargs, run)


_NO_RUN = nullcontext()
