"""The agent's tools, gathered and checked (loaded when the agent or a middleware has any)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, cast

from langchain_core.tools import BaseTool
from langchain_core.tools import tool as make_tool

from funcware.hooks.middleware import AgentMiddleware, is_middleware, origin

__all__ = ["gather_tools", "tool_name"]


def _as_tool(item: object, owner: object = None, index: int = 0) -> BaseTool | dict[str, Any]:
    """``item`` as a tool; ``owner`` is the middleware that brought it, if any."""
    place = (
        f"create_agent(tools=[...])'s tools[{index}]"
        if owner is None
        else f"tools[{index}] of middleware {getattr(owner, 'name', owner)!r} ({origin(owner)})"
    )
    tool = isinstance(item, (BaseTool, dict)) or (callable(item) and not inspect.isclass(item))
    if not tool or is_middleware(item):
        from funcware.compose.graph.argument_errors import tool_problem

        raise TypeError(tool_problem(item, place))
    if isinstance(item, (BaseTool, dict)):
        return item
    return make_tool(cast("Callable[..., Any]", item))


def gather_tools(
    members: Sequence[AgentMiddleware[Any, Any, Any]], tools: Sequence[object]
) -> list[tuple[str, BaseTool | dict[str, Any]]]:
    """``(owner, tool)`` for every tool: the middleware's first, then the agent's (the order
    LangChain binds them in); the owner is ``middleware 'x'`` or ``the agent``."""
    owned = [
        (f"middleware {m.name!r}", _as_tool(t, m, i))
        for m in members
        for i, t in enumerate(getattr(m, "tools", ()) or ())
    ]
    return owned + [("the agent", _as_tool(t, None, i)) for i, t in enumerate(tools)]


def tool_name(item: BaseTool | dict[str, Any]) -> str:
    """A tool's name (a dict schema's ``function.name`` or ``name``)."""
    if isinstance(item, BaseTool):
        return item.name
    function = item.get("function")
    if isinstance(function, dict) and "name" in function:
        return str(function["name"])
    return str(item.get("name", "<unnamed schema>"))
