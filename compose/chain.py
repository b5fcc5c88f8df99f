"""``compose()``: many middleware acting as one.

Wrap hooks become one onion (first argument outermost) whose commands are merged so the
outer layer wins; ``before_*`` hooks run the members in order and ``after_*`` in reverse,
each seeing the state as updated by the ones before it. Composites nest and flatten:
``compose(compose(a, b), c)`` is ``compose(a, b, c)``.

A composite is only a value until its own hooks are called: ``create_agent`` flattens it
into its members and runs every check on the whole list; called alone (a unit test with a
stub handler), it checks its members through the same seams and builds its onions once,
on its first call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import Command

from funcware.compose.graph.arguments import member_problem
from funcware.compose.graph.reducers import Reducer, current_reducers, fold, schema_reducers
from funcware.compose.graph.schema import merge_schemas
from funcware.compose.replacing import Replacement, apply_replacements
from funcware.compose.seams import Build, activate, arrange, transform
from funcware.compose.steps.failures import passed_through
from funcware.compose.steps.nodes import run_node, run_node_async
from funcware.compose.stream.streaming import member_transformers
from funcware.compose.wraps.onion import build_async, build_sync
from funcware.compose.wraps.results import MODEL_CALLS, TOOL_CALLS, as_model_response, returned
from funcware.compose.wraps.updates import Writes, as_update, merge_writes, update_writes
from funcware.hooks.middleware import (
    HOOKS,
    AgentMiddleware,
    HookImpl,
    HookName,
    hook_impls,
)
from funcware.hooks.types import (
    JUMP_TARGETS,
    ExtendedModelResponse,
    ModelCallResult,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
)

__all__ = ["ComposedMiddleware", "compose", "flatten"]


def flatten(
    middleware: Sequence[object], place: str = "compose()'s argument #{}"
) -> list[AgentMiddleware[Any, Any, Any]]:
    """``middleware`` with every composite replaced by its members (checked), and every
    :func:`~funcware.compose.replacing.replace` in the place of the member it names.

    ``place`` names an item in errors; ``{}`` is replaced by its index.
    """
    flat: list[AgentMiddleware[Any, Any, Any]] = []
    replacements: list[tuple[int, Replacement]] = []
    for index, member in enumerate(middleware):
        if isinstance(member, Replacement):
            problem = member_problem(member.middleware, f"{place.format(index)}'s replacement")
            if problem is None and isinstance(member.middleware, ComposedMiddleware):
                problem = (
                    f"{place.format(index)} replaces with a compose() of "
                    f"{len(member.middleware.members)} middleware; replace() takes one "
                    "middleware: replace each member by its name."
                )
            if problem is not None:
                raise TypeError(problem)
            replacements.append((index, member))
            continue
        problem = member_problem(member, place.format(index))
        if problem is not None:
            raise TypeError(problem)
        if isinstance(member, ComposedMiddleware):
            flat.extend(member.members)
        else:
            flat.append(member)  # type: ignore[arg-type]
    return apply_replacements(flat, replacements, place) if replacements else flat


def _base_response(value: object, where: str) -> ModelResponse[Any]:
    response = as_model_response(value)
    if response is None:
        raise TypeError(
            f"the handler given to {where} returned {returned(value)}; "
            "it must return a ModelResponse or an AIMessage."
        )
    return response


class _Built:
    """A composite's checked hooks and its onions, built once."""

    def __init__(self, by_hook: dict[HookName, list[HookImpl]]) -> None:
        self.by_hook = by_hook
        model, tool = by_hook["wrap_model_call"], by_hook["wrap_tool_call"]
        self.model_sync = build_sync(model, MODEL_CALLS)
        self.model_async = build_async(model, MODEL_CALLS)
        self.tool_sync = build_sync(tool, TOOL_CALLS)
        self.tool_async = build_async(tool, TOOL_CALLS)


def _arranged(members: list[Any], build: Build) -> list[Any]:
    """``members`` as the features the build needs arrange them."""
    activate(members, build)
    return arrange(members, build)


class ComposedMiddleware(AgentMiddleware[Any, Any, Any]):
    """Several middleware acting as one. Build it with :func:`compose`."""

    def __init__(
        self, members: Sequence[object], name: str | None = None, order: str = "check"
    ) -> None:
        if len(members) == 1 and isinstance(members[0], (list, tuple)):
            raise TypeError(
                f"compose() takes middleware as separate arguments, but got one "
                f"{type(members[0]).__name__}. Unpack it: compose(*middleware)."
            )
        if name is not None and (not isinstance(name, str) or not name):
            raise TypeError(f"compose(name={name!r}) must be a non-empty str.")
        given = flatten(members)
        self.order = order
        """The ``order=`` it was given (``"check"`` or ``"auto"``), for the features."""
        self.members: tuple[AgentMiddleware[Any, Any, Any], ...] = tuple(
            _arranged(given, Build("compose()", {"order": order}, report=False))
            if order != "check"
            else given
        )
        self.name = name or "+".join(m.name for m in self.members) or "compose()"
        self.state_schema = merge_schemas(
            [(f"middleware {m.name!r}", m.state_schema) for m in self.members],
            name=f"ComposedState_{len(self.members)}",
        )
        self.tools = [tool for m in self.members for tool in getattr(m, "tools", ())]
        self.transformers = member_transformers(self.members)
        self._reducers = schema_reducers(self.state_schema)
        self._built: _Built | None = None

    def _ready(self) -> _Built:
        """The members' hooks and onions, checked and built on the first call."""
        if self._built is None:
            build = Build("compose()", {"order": self.order} if self.order != "check" else {})
            _arranged(list(self.members), build)
            by_hook: dict[HookName, list[HookImpl]] = {hook: [] for hook in HOOKS}
            for member in self.members:
                for hook, impl in hook_impls(member).items():
                    by_hook[hook].append(transform(impl, build))
            self._built = _Built(by_hook)
        return self._built

    def _own_hooks(self) -> dict[HookName, HookImpl]:
        own: dict[HookName, HookImpl] = {}
        for hook in HOOKS:
            impls = [impl for m in self.members if (impl := hook_impls(m).get(hook))]
            if not impls:
                continue
            jumps = {t for impl in impls for t in impl.can_jump_to}
            own[hook] = HookImpl(
                self,
                hook,
                getattr(self, hook),
                getattr(self, "a" + hook),
                tuple(t for t in JUMP_TARGETS if t in jumps),
            )
        return own

    def __funcware_hooks__(self) -> dict[HookName, HookImpl]:
        return self._own_hooks()

    def __repr__(self) -> str:
        return f"compose({', '.join(repr(m) for m in self.members)})"

    # -- wrap hooks ---------------------------------------------------------------

    def _model_result(self, response: ModelResponse[Any], writes: Writes) -> ModelCallResult[Any]:
        if not writes:
            return response
        merged = merge_writes(writes, frozenset(current_reducers(self._reducers)))
        return ExtendedModelResponse(response, Command(update=as_update(merged)))

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any] | AIMessage],
    ) -> ModelCallResult[Any]:
        """Run the members' model wraps around ``handler``; merge their commands."""
        where = f"{self.name}.wrap_model_call"

        def tail(r: ModelRequest[Any]) -> ModelResponse[Any]:
            with passed_through:
                return _base_response(handler(r), where)

        response, writes = self._ready().model_sync(request, tail)
        return self._model_result(response, writes)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any] | AIMessage]],
    ) -> ModelCallResult[Any]:
        """Async :meth:`wrap_model_call`."""
        where = f"{self.name}.awrap_model_call"

        async def tail(r: ModelRequest[Any]) -> ModelResponse[Any]:
            with passed_through:
                return _base_response(await handler(r), where)

        response, writes = await self._ready().model_async(request, tail)
        return self._model_result(response, writes)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run the members' tool wraps around ``handler``."""

        def tail(r: ToolCallRequest) -> ToolMessage | Command[Any]:
            with passed_through:
                return handler(r)

        result, _ = self._ready().tool_sync(request, tail)
        return result  # type: ignore[no-any-return]

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async :meth:`wrap_tool_call`."""

        async def tail(r: ToolCallRequest) -> ToolMessage | Command[Any]:
            with passed_through:
                return await handler(r)

        result, _ = await self._ready().tool_async(request, tail)
        return result  # type: ignore[no-any-return]

    # -- node hooks ---------------------------------------------------------------

    def _members_for(self, hook: HookName) -> list[HookImpl]:
        impls = self._ready().by_hook[hook]
        return list(reversed(impls)) if hook.startswith("after_") else impls

    def _fold(
        self,
        state: Any,
        writes: list[tuple[str, Any]],
        result: dict[str, Any] | Command[Any],
        reducers: dict[str, Reducer],
    ) -> tuple[Any, bool]:
        """Apply one member's result to the running state; say whether to stop here.

        The next member sees the state as the agent would hold it: every reducer key
        (the agent's, where the composite runs as one node of a graph) reduced.
        """
        update = result.update if isinstance(result, Command) else result
        new = update_writes(update, self.name)
        writes.extend(new)
        state = dict(state)
        for key, value in new:
            fold(state, key, value, reducers)
        jumped = any(key == "jump_to" and value is not None for key, value in new)
        return state, jumped or (isinstance(result, Command) and bool(result.goto))

    def _finish(
        self,
        writes: list[tuple[str, Any]],
        last: dict[str, Any] | Command[Any] | None,
        reducers: dict[str, Reducer],
    ) -> dict[str, Any] | Command[Any] | None:
        if not writes and not isinstance(last, Command):
            return None
        update = as_update(merge_writes(writes, frozenset(reducers)))
        if isinstance(last, Command) and (last.goto or last.graph):
            return Command(update=update, goto=last.goto, graph=last.graph)
        return update if isinstance(update, dict) else Command(update=update)

    def _run_members(self, hook: HookName, state: Any, runtime: Any) -> Any:
        writes: list[tuple[str, Any]] = []
        result: dict[str, Any] | Command[Any] | None = None
        reducers = current_reducers(self._reducers)
        for impl in self._members_for(hook):
            result = run_node(impl, state, runtime)
            if result is not None:
                state, stop = self._fold(state, writes, result, reducers)
                if stop:
                    break
        return self._finish(writes, result, reducers)

    async def _arun_members(self, hook: HookName, state: Any, runtime: Any) -> Any:
        writes: list[tuple[str, Any]] = []
        result: dict[str, Any] | Command[Any] | None = None
        reducers = current_reducers(self._reducers)
        for impl in self._members_for(hook):
            result = await run_node_async(impl, state, runtime)
            if result is not None:
                state, stop = self._fold(state, writes, result, reducers)
                if stop:
                    break
        return self._finish(writes, result, reducers)

    def before_agent(self, state: Any, runtime: Any) -> Any:
        """Run the members' ``before_agent`` hooks in order."""
        return self._run_members("before_agent", state, runtime)

    async def abefore_agent(self, state: Any, runtime: Any) -> Any:
        """Async :meth:`before_agent`."""
        return await self._arun_members("before_agent", state, runtime)

    def before_model(self, state: Any, runtime: Any) -> Any:
        """Run the members' ``before_model`` hooks in order."""
        return self._run_members("before_model", state, runtime)

    async def abefore_model(self, state: Any, runtime: Any) -> Any:
        """Async :meth:`before_model`."""
        return await self._arun_members("before_model", state, runtime)

    def after_model(self, state: Any, runtime: Any) -> Any:
        """Run the members' ``after_model`` hooks in reverse order."""
        return self._run_members("after_model", state, runtime)

    async def aafter_model(self, state: Any, runtime: Any) -> Any:
        """Async :meth:`after_model`."""
        return await self._arun_members("after_model", state, runtime)

    def after_agent(self, state: Any, runtime: Any) -> Any:
        """Run the members' ``after_agent`` hooks in reverse order."""
        return self._run_members("after_agent", state, runtime)

    async def aafter_agent(self, state: Any, runtime: Any) -> Any:
        """Async :meth:`after_agent`."""
        return await self._arun_members("after_agent", state, runtime)


def compose(
    *middleware: AgentMiddleware[Any, Any, Any] | Replacement,
    name: str | None = None,
    order: Literal["check", "auto"] = "check",
) -> ComposedMiddleware:
    """Many middleware as one; the first is the outermost layer.

    The result is itself a middleware: use it in ``create_agent``, nest it in another
    ``compose``, or call its hooks directly with a stub handler to unit-test an onion.
    ``replace(m)`` among them puts ``m`` in the place of the member of the same name
    (``replace(m, name=...)``: of that name). ``create_agent`` checks the whole flattened
    list (declared constraints, hazards);
    a composite called alone checks its members the same way on its first call. With
    ``order="auto"`` the members are sorted to satisfy their declared constraints.
    """
    return ComposedMiddleware(middleware, name=name, order=order)
