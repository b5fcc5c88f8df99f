"""The implementations under test, behind one small interface.

``funcware`` and ``langchain`` expose the same names (``create_agent``, the hook decorators,
``AgentMiddleware``), so every scenario is written once against an :class:`Api`. The
``langgraph`` floor is a hand-written ``StateGraph`` (model node, tool node, conditional
edge) with no middleware at all.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["FLOOR", "IMPLS", "LIBRARIES", "Api", "available", "build_floor", "load_api"]

FUNCWARE = "funcware"
LANGCHAIN = "langchain"
FLOOR = "langgraph"
LIBRARIES = (FUNCWARE, LANGCHAIN)
IMPLS = (FUNCWARE, LANGCHAIN, FLOOR)


@dataclass(frozen=True)
class Api:
    """One middleware library: the agent factory, the decorators and the base class."""

    name: str
    create_agent: Callable[..., Any]
    before_model: Callable[..., Any]
    after_model: Callable[..., Any]
    wrap_model_call: Callable[..., Any]
    wrap_tool_call: Callable[..., Any]
    AgentMiddleware: type


def available(impl: str) -> bool:
    """Whether ``impl`` (or another top-level package) can be imported here."""
    top = {FUNCWARE: FUNCWARE, LANGCHAIN: LANGCHAIN, FLOOR: FLOOR}.get(impl, impl)
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def load_api(impl: str) -> Api:
    """The :class:`Api` of ``funcware`` or ``langchain``."""
    if impl == FUNCWARE:
        import funcware as mw

        return Api(
            FUNCWARE,
            mw.create_agent,
            mw.before_model,
            mw.after_model,
            mw.wrap_model_call,
            mw.wrap_tool_call,
            mw.AgentMiddleware,
        )
    if impl == LANGCHAIN:
        from langchain.agents import create_agent
        from langchain.agents import middleware as lc

        return Api(
            LANGCHAIN,
            create_agent,
            lc.before_model,
            lc.after_model,
            lc.wrap_model_call,
            lc.wrap_tool_call,
            lc.AgentMiddleware,
        )
    raise ValueError(f"{impl!r} is not a middleware library (use {' or '.join(LIBRARIES)})")


def build_floor(model: Any, tools: Sequence[Any], *, checkpointer: Any = None) -> Any:
    """The hand-written agent loop: ``model`` node, ``tools`` node, one conditional edge.

    Written the way the LangGraph docs write it (plain node function, ``tools_condition``),
    with the recursion limit both libraries set, so long tool loops run.
    """
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    bound = model.bind_tools(tools)

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", call_model)
    graph.add_node("tools", ToolNode(list(tools)))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "model")
    return graph.compile(checkpointer=checkpointer).with_config(recursion_limit=9_999)
