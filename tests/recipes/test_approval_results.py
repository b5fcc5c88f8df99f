"""``ReviewToolResults`` holds a listed tool's result until a human decides; the model sees
only what the reviewer let through, alone and beside ``ApproveToolCalls``."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from funcware import create_agent
from funcware.cookbook.human_approval import ApproveToolCalls, ReviewToolResults
from funcware.testing import ScriptedChatModel

CONFIG: Any = {"configurable": {"thread_id": "results"}}
SECRET = "A1: paid with card 4111-1111-1111-1111"


def lookup(order: str) -> str:
    """Look an order up."""
    return SECRET


def weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}."


def agent_with(*middleware: Any) -> tuple[Any, list[list[BaseMessage]]]:
    seen: list[list[BaseMessage]] = []

    def respond(messages: list[BaseMessage]) -> AIMessage:
        seen.append(list(messages))
        if len(seen) == 1:
            calls = [
                {"name": "lookup", "args": {"order": "A1"}, "id": "l1"},
                {"name": "weather", "args": {"city": "Oslo"}, "id": "w1"},
            ]
            return AIMessage("", tool_calls=calls)
        return AIMessage("Answered.")

    model = ScriptedChatModel(respond=respond)
    agent = create_agent(
        model, [lookup, weather], middleware=list(middleware), checkpointer=InMemorySaver()
    )
    return agent, seen


def results_seen(messages: list[BaseMessage]) -> dict[str, tuple[str, str]]:
    return {m.tool_call_id: (m.text, m.status) for m in messages if isinstance(m, ToolMessage)}


def test_the_model_does_not_see_a_held_result_before_the_decision() -> None:
    agent, seen = agent_with(ReviewToolResults({"lookup"}))
    (pause,) = agent.invoke({"messages": [HumanMessage("Where is A1?")]}, CONFIG)["__interrupt__"]
    assert pause.value == {"results": [{"tool_call_id": "l1", "name": "lookup", "content": SECRET}]}
    assert len(seen) == 1  # the model has not been called with the result

    agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), CONFIG)
    assert results_seen(seen[1])["l1"] == (SECRET, "success")


@pytest.mark.parametrize(
    "decision, shown",
    [
        ({"type": "edit", "content": "A1: paid by card"}, ("A1: paid by card", "success")),
        (
            {"type": "reject", "message": "Card data."},
            ("Withheld by a reviewer: Card data.", "error"),
        ),
    ],
    ids=["edit", "reject"],
)
def test_the_model_sees_only_what_the_reviewer_let_through(
    decision: dict[str, Any], shown: tuple[str, str]
) -> None:
    agent, seen = agent_with(ReviewToolResults({"lookup"}))
    agent.invoke({"messages": [HumanMessage("Where is A1?")]}, CONFIG)
    state = agent.invoke(Command(resume={"decisions": [decision]}), CONFIG)
    assert results_seen(seen[1]) == {"l1": shown, "w1": ("Sunny in Oslo.", "success")}
    assert SECRET not in str(state["messages"])  # replaced in place, in the state too
    assert state["messages"][-1].content == "Answered."


@pytest.mark.parametrize(
    "resume",
    [
        {"decisions": [{"type": "aprove"}]},
        {"decisions": [{"type": "edit"}]},
        {"decisions": [{"type": "approve", "tool_call_id": "w1"}]},
        {"decisions": []},
        "approve",
    ],
    ids=["typo", "edit-without-content", "another-call", "none", "a-string"],
)
def test_a_malformed_result_decision_shows_nothing_and_the_review_stays_open(
    resume: object,
) -> None:
    agent, seen = agent_with(ReviewToolResults({"lookup"}))
    agent.invoke({"messages": [HumanMessage("Where is A1?")]}, CONFIG)
    with pytest.raises(ValueError, match="Unexpected human decision"):
        agent.invoke(Command(resume=resume), CONFIG)
    assert len(seen) == 1 and agent.get_state(CONFIG).interrupts
    agent.invoke(Command(resume={"decisions": [{"type": "reject"}]}), CONFIG)
    assert results_seen(seen[1])["l1"][1] == "error"


def test_results_are_held_beside_an_approval_of_the_calls() -> None:
    agent, seen = agent_with(ApproveToolCalls({"lookup"}), ReviewToolResults({"lookup"}))
    (ask,) = agent.invoke({"messages": [HumanMessage("Where is A1?")]}, CONFIG)["__interrupt__"]
    assert [r["name"] for r in ask.value["review"]] == ["lookup"]
    (hold,) = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), CONFIG)[
        "__interrupt__"
    ]
    assert [r["tool_call_id"] for r in hold.value["results"]] == ["l1"]
    edit = {"type": "edit", "content": "A1: delivered"}
    state = agent.invoke(Command(resume={"decisions": [edit]}), CONFIG)
    assert results_seen(seen[1])["l1"] == ("A1: delivered", "success")
    assert state["messages"][-1].content == "Answered."


def test_review_tool_results_refuses_a_bare_string_of_tool_names() -> None:
    with pytest.raises(TypeError, match="tools is 'lookup'; give a collection"):
        ReviewToolResults("lookup")
