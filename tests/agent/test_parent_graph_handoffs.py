"""An agent run as a node of a parent graph hands off to it: a tool's or a node hook's
``Command(graph=Command.PARENT)`` goes to the parent, unchecked against this agent's nodes.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.graph import END, START, StateGraph, add_messages
from langgraph.types import Command
from support import call, calls_tool
from typing_extensions import TypedDict

from funcware import after_model, create_agent, wrap_tool_call
from funcware.testing import ScriptedChatModel


class Parent(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    active_agent: str


def _run_in_parent(inner: Any, other_reply: str) -> Any:
    """Run ``inner`` as node "first" of a parent graph whose node "other" answers."""
    graph = StateGraph(Parent)
    graph.add_node("first", inner)
    graph.add_node("other", lambda state: {"messages": [AIMessage(other_reply)]})
    graph.add_edge(START, "first")
    graph.add_edge("first", END)
    graph.add_edge("other", END)
    return graph.compile().invoke({"messages": [HumanMessage("hi")], "active_agent": "first"})


@tool
def handoff(tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
    """Hand the conversation to the other agent."""
    reply = ToolMessage("handed off", tool_call_id=tool_call_id)
    return Command(
        graph=Command.PARENT, goto="other", update={"messages": [reply], "active_agent": "other"}
    )


@pytest.mark.parametrize("with_wrap", [False, True])
def test_a_handoff_command_to_the_parent_graph_is_not_checked_against_this_agent(
    with_wrap: bool,
) -> None:
    @wrap_tool_call
    def log(request: Any, handler: Any) -> Any:
        return handler(request)

    @after_model
    def noop(state: Any) -> None:
        return None

    model = ScriptedChatModel(responses=[calls_tool(call("handoff", {}, "h1")), "unused"])
    inner = create_agent(model, [handoff], middleware=[log] if with_wrap else [noop])
    result = _run_in_parent(inner, "other agent here")
    assert result["active_agent"] == "other"
    assert result["messages"][-1].content == "other agent here"


def test_a_node_hook_may_hand_off_to_the_parent_graph() -> None:
    @after_model
    def escalate(state: Any) -> Any:
        return Command(graph=Command.PARENT, goto="other", update={"active_agent": "human"})

    inner = create_agent(ScriptedChatModel(responses=["unsure"]), middleware=[escalate])
    result = _run_in_parent(inner, "a human took over")
    assert result["active_agent"] == "human"
    assert result["messages"][-1].content == "a human took over"
