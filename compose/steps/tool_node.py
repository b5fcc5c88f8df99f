"""The tool node's wrapper: the composed onion of ``wrap_tool_call`` layers around each tool.

Given to langgraph's ``ToolNode`` as its ``wrap_tool_call``/``awrap_tool_call``; loaded
only by an agent that has a tool node.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.errors import GraphInterrupt

from funcware.compose.observing import watcher
from funcware.compose.steps.failures import passed_through
from funcware.compose.stream.hidden import (
    agent_config,
    current_config,
    hidden_calls,
    runnable_config,
    visible_layers,
)
from funcware.compose.wraps.onion import Onions
from funcware.compose.wraps.results import tool_calls
from funcware.hooks.middleware import HookImpl
from funcware.hooks.types import ToolCallRequest

__all__ = ["ToolWrapper"]


class ToolWrapper:
    """The ``wrap_tool_call``/``awrap_tool_call`` given to langgraph's ``ToolNode``.

    Runs the composed tool onion; innermost, a call to a dict-schema tool (which has no
    implementation) becomes an error ``ToolMessage`` instead of reaching the tool node,
    and a call to an unknown tool lists every known tool, schema tools included.
    """

    def __init__(
        self,
        wraps: Sequence[HookImpl],
        schema_only: frozenset[str],
        tool_names: Sequence[str],
        state_keys: frozenset[str] | None,
    ) -> None:
        self.schema_only = schema_only
        self.tool_names = list(tool_names)
        self.wraps = tuple(wraps)
        self.onions = Onions(visible_layers(wraps), tool_calls(state_keys))

    def _unimplemented(self, request: ToolCallRequest) -> ToolMessage | None:
        """An error message for a call that reached the core with no tool to run."""
        name = request.tool_call["name"]
        if request.tool is not None:
            return None
        if name in self.schema_only:
            content = (
                f"Error: tool {name!r} was given to the agent as a JSON schema and has no "
                "implementation. Handle its calls in a wrap_tool_call middleware (return a "
                "ToolMessage without calling the handler), or pass a function or BaseTool "
                "to create_agent(tools=[...])."
            )
        elif self.schema_only:  # ToolNode's own message would not list the schema tools
            content = (
                f"Error: {name} is not a valid tool, try one of [{', '.join(self.tool_names)}]."
            )
        else:
            return None
        return ToolMessage(
            content=content, name=name, tool_call_id=request.tool_call["id"], status="error"
        )

    def _answered(self, request: ToolCallRequest, result: Any) -> Any:
        """``result`` if it answers ``request``'s tool call (a reply with its id)."""
        if isinstance(result, ToolMessage) and result.tool_call_id != request.tool_call["id"]:
            layers = "; ".join(impl.describe() for impl in self.wraps)
            raise ValueError(
                f"A wrap_tool_call returned a ToolMessage with tool_call_id="
                f"{result.tool_call_id!r} for the call {request.tool_call['name']!r} whose id "
                f"is {request.tool_call['id']!r} (the tool wraps of this agent: {layers}), so "
                "the model's tool call would stay unanswered and a provider would reject the "
                "next request. Reply with ToolMessage(..., tool_call_id="
                "request.tool_call['id']), or return what handler(request) returned."
            )
        return result

    def _interrupted(self, exc: GraphInterrupt, request: ToolCallRequest) -> None:
        from funcware.compose.steps.pauses import refuse_unresumable

        config = getattr(request.runtime, "config", None)
        refuse_unresumable(exc, config, f"the tool {request.tool_call['name']!r}")

    def __call__(self, request: ToolCallRequest, execute: Any) -> Any:
        observer = watcher()

        def tail(req: ToolCallRequest) -> Any:
            with passed_through:
                unimplemented = self._unimplemented(req)
                if unimplemented is not None:
                    return unimplemented
                own = agent_config()  # the tool itself runs with the node's config
                with current_config(own) if own is not None else nullcontext():
                    if observer is not None:
                        return observer.tool(req.tool_call["name"], req, execute)
                    return execute(req)

        try:
            with hidden_calls(_config_of(request) if self.wraps else None):
                onion = self.onions.sync(observer)
                return self._answered(request, onion(request, tail)[0])
        except GraphInterrupt as exc:
            self._interrupted(exc, request)
            raise

    async def acall(self, request: ToolCallRequest, execute: Any) -> Any:
        """Async wrapper."""
        observer = None  # asked once the node's config is current (Python 3.10)

        async def tail(req: ToolCallRequest) -> Any:
            with passed_through:
                unimplemented = self._unimplemented(req)
                if unimplemented is not None:
                    return unimplemented
                own = agent_config()
                with current_config(own) if own is not None else nullcontext():
                    if observer is not None:
                        return await observer.atool(req.tool_call["name"], req, execute)
                    return await execute(req)

        config = _config_of(request)
        try:
            with runnable_config(config), hidden_calls(config if self.wraps else None):
                observer = watcher()
                onion = self.onions.async_(observer)
                return self._answered(request, (await onion(request, tail))[0])
        except GraphInterrupt as exc:
            self._interrupted(exc, request)
            raise


def _config_of(request: ToolCallRequest) -> RunnableConfig | None:
    """The tool node's config for ``request`` (its runtime's, else the current one)."""
    config = getattr(request.runtime, "config", None)
    return config if config is not None else var_child_runnable_config.get()
