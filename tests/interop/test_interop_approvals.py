"""LangChain's ``HumanInTheLoopMiddleware`` fails closed in funcware stacks.

On its own, in its default batched mode, a resume it refuses is saved by langgraph first,
so the pause can never be answered again. In funcware stacks: a malformed resume is refused
with LangChain's sentence, nothing runs and the same pause takes a valid answer; an edit
that turns a call into another gated tool's call is refused; the reviewer is asked only
about calls that will run (beside a tool-call limit, in either order). Needs the
``langchain`` extra.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from support import require_langchain

from funcware import create_agent
from funcware.cookbook.tool_call_limit import ToolCallLimit
from funcware.testing import ScriptedChatModel

lc = require_langchain("langchain.agents.middleware")

RAN: list[tuple[str, Any]] = []
CONFIG: Any = {"configurable": {"thread_id": "hitl"}}


def refund(amount: int) -> str:
    """Refund an amount of dollars."""
    RAN.append(("refund", amount))
    return "refunded"


def delete_account(user: str) -> str:
    """Delete a user's account."""
    RAN.append(("delete_account", user))
    return "deleted"


def lookup(order: str) -> str:
    """Look an order up."""
    RAN.append(("lookup", order))
    return "delivered"


def call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id}


def agent_with(*middleware: Any, turns: list[Any] | None = None) -> Any:
    RAN.clear()
    proposal = AIMessage("", tool_calls=[call("refund", {"amount": 500}, "r1")])
    model = ScriptedChatModel(responses=turns or [proposal, "Done."])
    return create_agent(
        model,
        [refund, delete_account, lookup],
        middleware=list(middleware),
        checkpointer=InMemorySaver(),
    )


def hitl(**options: Any) -> Any:
    gated = {"refund": True, "delete_account": True}
    return lc.HumanInTheLoopMiddleware(interrupt_on=gated, **options)


MALFORMED: dict[str, tuple[object, str]] = {
    "typo in reject": ({"decisions": [{"type": "rejct"}]}, "Decision type 'rejct' is not allowed"),
    "typo in approve": ({"decisions": [{"type": "aprove"}]}, "Decision type 'aprove'"),
    "too many decisions": (
        {"decisions": [{"type": "approve"}, {"type": "approve"}]},
        r"Number of human decisions \(2\) does not match",
    ),
    "no decisions": ({"decisions": []}, r"Number of human decisions \(0\)"),
    "a bare decision": ({"type": "approve"}, r"\{'decisions': \[...\]\} and nothing else"),
    "a string": ("approve", "and nothing else"),
    "edit without its action": ({"decisions": [{"type": "edit"}]}, r"missing \['edited_action'\]"),
    "edit without args": (
        {"decisions": [{"type": "edit", "edited_action": {"name": "refund"}}]},
        "edited_action must be",
    ),
    "unknown key": ({"decisions": [{"type": "approve", "args": {}}]}, r"unknown \['args'\]"),
    "respond without a message": ({"decisions": [{"type": "respond"}]}, r"missing \['message'\]"),
}


@pytest.mark.parametrize("resume, named", MALFORMED.values(), ids=list(MALFORMED))
def test_a_malformed_resume_runs_nothing_and_the_pause_can_be_answered_again(
    resume: object, named: str
) -> None:
    agent = agent_with(hitl())
    agent.invoke({"messages": [HumanMessage("Refund me.")]}, CONFIG)
    with pytest.raises(ValueError, match=r"^Unexpected human decision") as refused:
        agent.invoke(Command(resume=resume), CONFIG)
    assert refused.match(named)
    assert RAN == []
    assert agent.get_state(CONFIG).interrupts  # still waiting

    state = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), CONFIG)
    assert RAN == [("refund", 500)]
    assert state["messages"][-1].content == "Done."


def test_a_decision_type_the_tool_does_not_allow_is_refused() -> None:
    only_reject = {"refund": {"allowed_decisions": ["reject"]}}
    agent = agent_with(lc.HumanInTheLoopMiddleware(interrupt_on=only_reject))
    agent.invoke({"messages": [HumanMessage("Refund me.")]}, CONFIG)
    with pytest.raises(ValueError, match=r"'approve' is not allowed for tool 'refund'"):
        agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), CONFIG)
    state = agent.invoke(Command(resume={"decisions": [{"type": "reject"}]}), CONFIG)
    assert RAN == []
    answer = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert answer.status == "error"


def test_a_malformed_resume_is_refused_under_ainvoke_too() -> None:
    agent = agent_with(hitl())

    async def run() -> None:
        await agent.ainvoke({"messages": [HumanMessage("Refund me.")]}, CONFIG)
        with pytest.raises(ValueError, match="Unexpected human decision"):
            await agent.ainvoke(Command(resume={"decisions": [{"type": "rejct"}]}), CONFIG)
        await agent.ainvoke(Command(resume={"decisions": [{"type": "approve"}]}), CONFIG)

    asyncio.run(run())
    assert RAN == [("refund", 500)]


def test_an_edit_into_another_gated_tool_is_refused() -> None:
    agent = agent_with(hitl())
    agent.invoke({"messages": [HumanMessage("Refund me.")]}, CONFIG)
    switch = {"type": "edit", "edited_action": {"name": "delete_account", "args": {"user": "x"}}}
    with pytest.raises(ValueError, match="into a call to 'delete_account', which needs its own"):
        agent.invoke(Command(resume={"decisions": [switch]}), CONFIG)
    assert RAN == []
    assert agent.get_state(CONFIG).interrupts

    same_tool = {"type": "edit", "edited_action": {"name": "refund", "args": {"amount": 50}}}
    agent.invoke(Command(resume={"decisions": [same_tool]}), CONFIG)
    assert RAN == [("refund", 50)]


def test_an_edit_into_a_tool_nobody_gates_follows_that_tools_policy() -> None:
    agent = agent_with(hitl())
    agent.invoke({"messages": [HumanMessage("Refund me.")]}, CONFIG)
    to_lookup = {"type": "edit", "edited_action": {"name": "lookup", "args": {"order": "A1"}}}
    agent.invoke(Command(resume={"decisions": [to_lookup]}), CONFIG)
    assert RAN == [("lookup", "A1")]  # lookup needs no review, as if the model had asked


@pytest.mark.parametrize("approval_first", [True, False], ids=["hitl-outer", "limit-outer"])
def test_the_reviewer_is_not_asked_about_a_call_the_limit_refuses(approval_first: bool) -> None:
    small_first = AIMessage(
        "",
        tool_calls=[call("refund", {"amount": 20}, "r20"), call("refund", {"amount": 500}, "r500")],
    )
    stack = [hitl(), ToolCallLimit(limit=1)]
    agent = agent_with(*(stack if approval_first else stack[::-1]), turns=[small_first, "Done."])
    (pause,) = agent.invoke({"messages": [HumanMessage("Refund both.")]}, CONFIG)["__interrupt__"]
    assert [r["args"] for r in pause.value["action_requests"]] == [{"amount": 20}]

    state = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), CONFIG)
    assert RAN == [("refund", 20)]
    answer = next(m for m in state["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert [c["id"] for c in answer.tool_calls] == ["r20", "r500"]  # the refused call is kept
    refused = next(m for m in state["messages"] if getattr(m, "tool_call_id", "") == "r500")
    assert refused.status == "error"


def test_a_second_review_in_the_same_run_pauses_again() -> None:
    turns = [
        AIMessage("", tool_calls=[call("refund", {"amount": 500}, "r1")]),
        AIMessage("", tool_calls=[call("delete_account", {"user": "bob"}, "d1")]),
        "Done.",
    ]
    agent = agent_with(hitl(), turns=turns)
    agent.invoke({"messages": [HumanMessage("Refund, then close.")]}, CONFIG)
    paused = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), CONFIG)
    (pause,) = paused["__interrupt__"]  # the old answer does not decide the new review
    assert [r["name"] for r in pause.value["action_requests"]] == ["delete_account"]
    assert RAN == [("refund", 500)]
    agent.invoke(Command(resume={"decisions": [{"type": "reject"}]}), CONFIG)
    assert RAN == [("refund", 500)]


def test_per_call_mode_is_left_to_its_own_typed_pause() -> None:
    agent = agent_with(hitl(interrupt_mode="per_call"))
    (pause,) = agent.invoke({"messages": [HumanMessage("Refund me.")]}, CONFIG)["__interrupt__"]
    assert pause.response_schema is not None
    with pytest.raises(Exception, match="rejct"):
        agent.invoke(Command(resume={pause.id: {"type": "rejct"}}), CONFIG)
    assert RAN == []
    agent.invoke(Command(resume={pause.id: {"type": "approve"}}), CONFIG)
    assert RAN == [("refund", 500)]
