"""What was wrong with an argument of ``create_agent``, ``compose`` or ``explain``, in words.

Each mistake gets a sentence naming the call, the list position and the fix, and cites the
file:line of a class or function passed by mistake. Loaded only when a check fails.
"""

from __future__ import annotations

import inspect
from typing import Any

from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolNode

from funcware.hooks.middleware import is_middleware, origin, where
from funcware.hooks.options import DECORATORS
from funcware.hooks.wording import a

__all__ = ["member_problem", "not_a_class", "not_a_list", "tool_problem"]

_DECORATORS = frozenset(DECORATORS)
_DECORATOR_MODULES = ("funcware.hooks.decorators", "langchain.agents.middleware")


def _is_middleware_class(item: type) -> bool:
    """A middleware class of funcware's or of another library (any ``AgentMiddleware``)."""
    return any(klass.__name__ == "AgentMiddleware" for klass in item.__mro__)


def _what(item: object) -> str:
    """``item`` in words, with its file:line when it is a class or a function."""
    if inspect.isclass(item):
        return f"the class {item.__qualname__} ({where(item)})"
    if inspect.isfunction(item) or inspect.ismethod(item):
        return f"the function {item.__qualname__} ({where(item)})"
    if isinstance(item, BaseTool):
        return f"the tool {item.name!r}"
    if is_middleware(item):
        return f"the middleware {getattr(item, 'name', item)!r} ({origin(item)})"
    text = repr(item)
    return f"{text if len(text) <= 60 else text[:57] + '...'} ({type(item).__name__})"


def _decorator_hint(func: Any) -> str:
    try:
        params = list(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        params = []
    if params[:1] == ["request"] and "handler" in params:
        return "@wrap_model_call (or @wrap_tool_call)"
    if params[:1] == ["request"]:
        return "@dynamic_prompt"
    return "@before_model (or another hook decorator)"


def member_problem(item: object, place: str) -> str | None:
    """Why ``item`` (found at ``place``, e.g. ``middleware[1]``) is not a middleware; or None."""
    if is_middleware(item):
        return None
    module = getattr(item, "__module__", "") or ""
    name = getattr(item, "__name__", "")
    if name in _DECORATORS and module.startswith(_DECORATOR_MODULES):
        return (
            f"{place} is the decorator @{name} itself, not a middleware. Decorate a "
            f"function with it (`@{name}` above `def my_hook(...)`) and pass that function."
        )
    if item is None:
        return (
            f"{place} is None. Remove it; to include a middleware only sometimes, build "
            "the list with a condition, e.g. [m for m in (a, b) if m is not None]."
        )
    if inspect.isclass(item):
        if _is_middleware_class(item):
            return f"{place} is {_what(item)}, not an instance. Pass {item.__qualname__}()."
        return (
            f"{place} is {_what(item)}, which is not a middleware. Subclass "
            "AgentMiddleware and pass an instance, or decorate a function with a hook decorator."
        )
    if isinstance(item, BaseTool):
        return f"{place} is {_what(item)}. Pass tools as create_agent(tools=[...])."
    if isinstance(item, (list, tuple)):
        return (
            f"{place} is {a(type(item).__name__)} of {len(item)} items. List the middleware "
            "themselves (middleware=[*group]) or combine them first with compose(*group)."
        )
    if callable(item):
        return (
            f"{place} is {_what(item)}, a plain callable, not a middleware. Decorate it "
            f"with {_decorator_hint(item)} to make it one."
        )
    return f"{place} is {_what(item)}, not a middleware. Pass middleware instances."


def tool_problem(item: object, place: str) -> str | None:
    """Why ``item`` (at ``place``, e.g. ``tools[0]``) is not a tool; or None."""
    if is_middleware(item):
        return f"{place} is {_what(item)}. Pass middleware as create_agent(middleware=[...])."
    if isinstance(item, (BaseTool, dict)):
        return None
    if inspect.isclass(item) and issubclass(item, BaseTool):
        return f"{place} is {_what(item)}, not an instance. Pass {item.__qualname__}()."
    if callable(item) and not inspect.isclass(item):
        return None
    return f"{place} is {_what(item)}; a tool is a BaseTool, a function, or a dict JSON schema."


def not_a_list(value: object, call: str, argument: str, noun: str) -> TypeError:
    """The error for a ``value`` given where a list of ``noun`` was due."""
    if isinstance(value, ToolNode):
        names = ", ".join(value.tools_by_name) or "none"
        return TypeError(
            f"'ToolNode' object is not iterable. {call}({argument}=...) takes the tools "
            f"themselves, not a ToolNode (the agent builds its own tool node); this ToolNode "
            f"holds: {names}. Pass {argument}=[...] with those tools, e.g. "
            f"{argument}=list(tool_node.tools_by_name.values())."
        )
    name = getattr(value, "__name__", None) or getattr(value, "name", None)
    inside = name if isinstance(name, str) and name.isidentifier() else "..."
    return TypeError(
        f"{call}({argument}=...) takes a list of {noun}, but got {_what(value)}. "
        f"Pass {argument}=[{inside}] (a one-item list for one)."
    )


def not_a_class(value: object, argument: str) -> TypeError:
    """The error for a ``state_schema``/``context_schema`` that is not a class."""
    if argument == "state_schema":
        kind, use = "a TypedDict class deriving from AgentState", "the input state"
    else:
        kind, use = "a class (a dataclass, TypedDict or pydantic model)", "invoke(context=...)"
    cls = type(value)
    if cls.__module__ == "builtins":
        example = "MyState" if argument == "state_schema" else "MyContext"
        fix = f"Pass the class itself, e.g. {argument}={example}."
    else:
        fix = f"Pass the class itself, {argument}={cls.__qualname__}, and give the value to {use}."
    return TypeError(
        f"create_agent({argument}=...) got {_what(value)}, not a class; it must be {kind}. {fix}"
    )
