"""A composite's own hooks, run: members checked, onions built once, commands merged.

Loaded when a composite's hooks are called (alone in a test, or as one node of another
agent); ``create_agent`` flattens composites and never calls them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import Command

from funcware.compose.chain import arranged
from funcware.compose.graph.reducers import Reducer, current_reducers, fold, schema_reducers
from funcware.compose.seams import Build, transform
from funcware.compose.steps.failures import passed_through
from funcware.compose.steps.nodes import run_node, run_node_async
from funcware.compose.wraps.onion import build_async, build_sync
from funcware.compose.wraps.results import MODEL_CALLS, TOOL_CALLS, as_model_response
from funcware.compose.wraps.updates import Writes, as_update, merge_writes, update_writes
from funcware.hooks.middleware import HOOKS, HookImpl, HookName, hook_impls
from funcware.hooks.types import (
    ExtendedModelResponse,
    ModelCallResult,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
)
from funcware.hooks.wording import returned

if TYPE_CHECKING:
    from funcware.compose.chain import ComposedMiddleware

__all__ = ["CompositeCalls"]


def _base_response(value: object, where: str) -> ModelResponse[Any]:
    response = as_model_response(value)
    if response is None:
        raise TypeError(
            f"the handler given to {where} returned {returned(value)}; "
            "it must return a ModelResponse or an AIMessage."
        )
    return response


class CompositeCalls:
    """A composite's checked hooks and its onions, built on its first own call."""

    def __init__(self, composite: ComposedMiddleware) -> None:
        build = Build("compose()", {"order": composite.order} if composite.order != "check" else {})
        arranged(list(composite.members), build)
        by_hook: dict[HookName, list[HookImpl]] = {hook: [] for hook in HOOKS}
        for member in composite.members:
            for hook, impl in hook_impls(member).items():
                by_hook[hook].append(transform(impl, build))
        self.name = composite.name
        self.by_hook = by_hook
        self.reducers = schema_reducers(composite.state_schema)
        model, tool = by_hook["wrap_model_call"], by_hook["wrap_tool_call"]
        self.model_sync = build_sync(model, MODEL_CALLS)
        self.model_async = build_async(model, MODEL_CALLS)
        self.tool_sync = build_sync(tool, TOOL_CALLS)
        self.tool_async = build_async(tool, TOOL_CALLS)

    # -- wrap hooks ---------------------------------------------------------------

    def _model_result(self, response: ModelResponse[Any], writes: Writes) -> ModelCallResult[Any]:
        if not writes:
            return response
        merged = merge_writes(writes, frozenset(current_reducers(self.reducers)))
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

        response, writes = self.model_sync(request, tail)
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

        response, writes = await self.model_async(request, tail)
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

        result, _ = self.tool_sync(request, tail)
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

        result, _ = await self.tool_async(request, tail)
        return result  # type: ignore[no-any-return]

    # -- node hooks ---------------------------------------------------------------

    def _members_for(self, hook: HookName) -> list[HookImpl]:
        impls = self.by_hook[hook]
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

    def run(self, hook: HookName, state: Any, runtime: Any) -> Any:
        """Run the members' ``hook`` (``after_*``: in reverse), each on the state so far."""
        writes: list[tuple[str, Any]] = []
        result: dict[str, Any] | Command[Any] | None = None
        reducers = current_reducers(self.reducers)
        for impl in self._members_for(hook):
            result = run_node(impl, state, runtime)
            if result is not None:
                state, stop = self._fold(state, writes, result, reducers)
                if stop:
                    break
        return self._finish(writes, result, reducers)

    async def arun(self, hook: HookName, state: Any, runtime: Any) -> Any:
        """Async :meth:`run`."""
        writes: list[tuple[str, Any]] = []
        result: dict[str, Any] | Command[Any] | None = None
        reducers = current_reducers(self.reducers)
        for impl in self._members_for(hook):
            result = await run_node_async(impl, state, runtime)
            if result is not None:
                state, stop = self._fold(state, writes, result, reducers)
                if stop:
                    break
        return self._finish(writes, result, reducers)
