"""The recipes' guarantees in the stacks that broke them: a refund beside a lookup
(an approval and a tool-call limit) in both orders, the limit deciding before the reviewer,
``human_approval``'s per-tool ``when=``, and guards that find the model's answer behind
messages other hooks appended after it.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from funcware import MiddlewareOrderError, MiddlewareOrderWarning, create_agent
from funcware.cookbook.content_guard import ContentGuard
from funcware.cookbook.guarded_stream import mask_answer
from funcware.cookbook.human_approval import ApproveToolCalls
from funcware.cookbook.tool_call_limit import ToolCallLimit
from funcware.testing import ScriptedChatModel

RAN: list[tuple[str, dict[str, Any]]] = []


@tool
def refund(amount: int) -> str:
    """Refund an amount of dollars."""
    RAN.append(("refund", {"amount": amount}))
    return f"Refunded ${amount}."


@tool
def lookup_order(order_id: str) -> str:
    """Look an order up."""
    RAN.append(("lookup_order", {"order_id": order_id}))
    return f"Order {order_id}: delivered."


CONFIG: RunnableConfig = {"configurable": {"thread_id": "support"}}
SUPPORT_TURN = AIMessage(
    "",
    tool_calls=[
        {"name": "refund", "args": {"amount": 500}, "id": "r1"},
        {"name": "lookup_order", "args": {"order_id": "A1"}, "id": "l1"},
    ],
)
NEXT_TURN = AIMessage(
    "", tool_calls=[{"name": "lookup_order", "args": {"order_id": "A2"}, "id": "l2"}]
)


def support_agent(*middleware: Any) -> Any:
    RAN.clear()
    model = ScriptedChatModel(responses=[SUPPORT_TURN, NEXT_TURN, "All done."])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MiddlewareOrderWarning)  # the run decides here
        return create_agent(
            model, [refund, lookup_order], middleware=list(middleware), checkpointer=InMemorySaver()
        )


def start() -> dict[str, Any]:
    return {"messages": [HumanMessage("Refund order A1, then check A2.")]}


@pytest.mark.parametrize("approval_first", [True, False], ids=["approval-outer", "limit-outer"])
def test_the_refund_waits_for_approval_beside_a_tool_call_limit(approval_first: bool) -> None:
    approval, limit = ApproveToolCalls({"refund"}), ToolCallLimit(limit=1)
    stack = [approval, limit] if approval_first else [limit, approval]
    try:
        agent = support_agent(*stack)
    except MiddlewareOrderError as refused:  # refusing to build, with the reason, is allowed
        assert "ApproveToolCalls" in str(refused) and "ToolCallLimit" in str(refused)
        return
    paused = agent.invoke(start(), CONFIG)
    (pause,) = paused["__interrupt__"]
    assert [r["name"] for r in pause.value["review"]] == ["refund"]
    assert ("refund", {"amount": 500}) not in RAN  # nothing paid before the decision

    state = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), CONFIG)
    assert RAN == [("refund", {"amount": 500})]  # approved, then run; the limit refused the rest
    assert state["run_tool_calls"] == 1


@pytest.mark.parametrize("approval_first", [True, False], ids=["approval-outer", "limit-outer"])
def test_the_limit_decides_before_the_reviewer_in_either_order(approval_first: bool) -> None:
    # The limit refuses in its model wrap, before any after_model hook: the lookup over the
    # budget is answered before the reviewer is asked, and a rejection frees no budget.
    approval, limit = ApproveToolCalls({"refund"}), ToolCallLimit(limit=1)
    agent = support_agent(*([approval, limit] if approval_first else [limit, approval]))
    (pause,) = agent.invoke(start(), CONFIG)["__interrupt__"]
    assert [r["tool_call_id"] for r in pause.value["review"]] == ["r1"]
    reject = {"type": "reject", "message": "Refunds over $100 need a manager."}
    state = agent.invoke(Command(resume={"decisions": [reject]}), CONFIG)

    assert RAN == []  # the refund was rejected, both lookups were over the limit
    assert state["run_tool_calls"] == 1
    refused = [m for m in state["messages"] if isinstance(m, ToolMessage) and m.status == "error"]
    assert sorted(m.tool_call_id for m in refused) == ["l1", "l2", "r1"]


def large(call: Any) -> bool:
    return bool(call["args"]["amount"] > 100)


def test_approval_with_when_pauses_only_for_calls_whose_condition_is_true() -> None:
    small = AIMessage("", tool_calls=[{"name": "refund", "args": {"amount": 40}, "id": "s1"}])
    RAN.clear()
    model = ScriptedChatModel(responses=[small, SUPPORT_TURN, "Done."])
    approval = ApproveToolCalls({"refund"}, when={"refund": large})
    agent = create_agent(
        model, [refund, lookup_order], middleware=[approval], checkpointer=InMemorySaver()
    )
    paused = agent.invoke(start(), CONFIG)
    assert RAN[0] == ("refund", {"amount": 40})  # ran without a pause
    (pause,) = paused["__interrupt__"]
    assert [(r["tool_call_id"], r["args"]) for r in pause.value["review"]] == [
        ("r1", {"amount": 500})
    ]
    assert ("refund", {"amount": 500}) not in RAN


def test_approval_refuses_a_condition_for_a_tool_it_does_not_review() -> None:
    with pytest.raises(ValueError, match=r"when= has conditions for \['delete'\].*needs_approval"):
        ApproveToolCalls({"refund"}, when={"delete": large})
    with pytest.raises(TypeError, match=r"when\['refund'\] is True; give a function"):
        ApproveToolCalls({"refund"}, when={"refund": True})  # type: ignore[dict-item]


@tool
def send_message(to: str, body: str) -> str:
    """Send a chat message."""
    RAN.append(("send_message", {"to": to, "body": body}))
    return "Sent."


def test_the_content_guard_finds_the_answer_behind_a_limits_refusal() -> None:
    RAN.clear()
    leak = AIMessage(
        "Sure: the admin password is hunter2.",
        tool_calls=[{"name": "send_message", "args": {"to": "bob", "body": "hunter2"}, "id": "m1"}],
    )
    model = ScriptedChatModel(responses=[leak, "Sent."])
    # ToolCallLimit is inner: its after_model runs first and appends a refusal after the answer.
    agent = create_agent(model, [send_message], middleware=[ContentGuard(), ToolCallLimit(limit=0)])
    state = agent.invoke(start())
    assert not any("hunter2" in m.text for m in state["messages"])
    assert not [m for m in state["messages"] if isinstance(m, ToolMessage)]  # no orphan answer
    assert RAN == []


def test_mask_answer_masks_the_answer_behind_an_appended_message() -> None:
    answer = AIMessage(
        "Write to jane.doe@example.com.",
        tool_calls=[{"name": "lookup_order", "args": {"order_id": "A1"}, "id": "l1"}],
    )
    model = ScriptedChatModel(responses=[answer, "Done."])
    agent = create_agent(model, [lookup_order], middleware=[mask_answer, ToolCallLimit(limit=0)])
    state = agent.invoke(start())
    assert not any("@example.com" in m.text for m in state["messages"])
