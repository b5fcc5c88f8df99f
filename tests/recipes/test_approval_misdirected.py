"""A resume that answers the wrong thing is refused, never applied to another call.

- a decision naming another call (``tool_call_id``) is refused and the approval stays open;
- a resume on a thread with nothing pending (a fresh thread, an approval already answered)
  is refused at the agent's entry: nothing runs, the model is not called (langgraph would
  start the run afresh with no input, or drop the answer in silence);
- a resume addressed by interrupt id to a pause already answered is refused, and the pause
  that is pending still takes its own answer;
- an edit that names another tool is refused: an edit keeps the tool.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from funcware import create_agent
from funcware.cookbook.human_approval import ApproveToolCalls
from funcware.testing import ScriptedChatModel

CONFIG: Any = {"configurable": {"thread_id": "refunds"}}
APPROVE = {"decisions": [{"type": "approve"}]}


def refund_turn(amount: int, call_id: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": "refund", "args": {"amount": amount}, "id": call_id}])


def two_turn_agent(paid: list[int]) -> tuple[Any, ScriptedChatModel]:
    """Two user turns, each asking for one refund that needs approval."""

    def refund(amount: int) -> str:
        """Refund an amount of dollars."""
        paid.append(amount)
        return "refunded"

    model = ScriptedChatModel(
        responses=[refund_turn(500, "r1"), "Paid $500.", refund_turn(900, "r2"), "Paid $900."]
    )
    agent = create_agent(
        model, [refund], middleware=[ApproveToolCalls({"refund"})], checkpointer=InMemorySaver()
    )
    return agent, model


def test_a_decision_for_another_call_is_refused_and_the_approval_stays_open() -> None:
    paid: list[int] = []
    agent, _ = two_turn_agent(paid)
    agent.invoke({"messages": [HumanMessage("Refund $500.")]}, CONFIG)
    wrong = {"decisions": [{"type": "approve", "tool_call_id": "r2"}]}
    with pytest.raises(ValueError, match=r"decision 0 is for tool call 'r2'.*'r1'"):
        agent.invoke(Command(resume=wrong), CONFIG)
    assert paid == [] and agent.get_state(CONFIG).interrupts

    right = {"decisions": [{"type": "approve", "tool_call_id": "r1"}]}
    agent.invoke(Command(resume=right), CONFIG)
    assert paid == [500]


def test_a_resume_on_a_fresh_thread_is_refused_and_nothing_runs() -> None:
    paid: list[int] = []
    agent, model = two_turn_agent(paid)
    with pytest.raises(ValueError, match=r"on thread 'refunds', which has nothing pending"):
        agent.invoke(Command(resume=APPROVE), CONFIG)
    assert paid == [] and model.calls == []
    assert agent.get_state(CONFIG).values == {}


def test_a_second_answer_to_an_approval_already_answered_is_refused() -> None:
    paid: list[int] = []
    agent, model = two_turn_agent(paid)
    agent.invoke({"messages": [HumanMessage("Refund $500.")]}, CONFIG)
    agent.invoke(Command(resume=APPROVE), CONFIG)
    before = agent.get_state(CONFIG)

    with pytest.raises(ValueError, match="nothing pending"):
        agent.invoke(Command(resume=APPROVE), CONFIG)
    assert paid == [500] and len(model.calls) == 2
    assert agent.get_state(CONFIG).config == before.config  # no new checkpoint


def test_an_answer_addressed_to_an_old_pause_is_refused_beside_a_new_one() -> None:
    paid: list[int] = []
    agent, _ = two_turn_agent(paid)
    (first,) = agent.invoke({"messages": [HumanMessage("Refund $500.")]}, CONFIG)["__interrupt__"]
    agent.invoke(Command(resume={first.id: APPROVE}), CONFIG)
    (second,) = agent.invoke({"messages": [HumanMessage("And $900.")]}, CONFIG)["__interrupt__"]
    assert second.id != first.id

    with pytest.raises(ValueError, match=rf"interrupt\(s\) \['{first.id}'\].*not pending"):
        agent.invoke(Command(resume={first.id: APPROVE}), CONFIG)
    assert paid == [500] and agent.get_state(CONFIG).interrupts

    reject = {"decisions": [{"type": "reject", "tool_call_id": "r2"}]}
    agent.invoke(Command(resume={second.id: reject}), CONFIG)
    assert paid == [500]


def test_a_bare_answer_naming_the_old_call_does_not_decide_the_new_one() -> None:
    paid: list[int] = []
    agent, _ = two_turn_agent(paid)
    agent.invoke({"messages": [HumanMessage("Refund $500.")]}, CONFIG)
    old = {"decisions": [{"type": "approve", "tool_call_id": "r1"}]}
    agent.invoke(Command(resume=old), CONFIG)
    agent.invoke({"messages": [HumanMessage("And $900.")]}, CONFIG)

    with pytest.raises(ValueError, match="meant for another approval, or for one already"):
        agent.invoke(Command(resume=old), CONFIG)  # sent twice, e.g. a client retry
    assert paid == [500] and agent.get_state(CONFIG).interrupts


def test_nothing_pending_is_refused_under_ainvoke_too() -> None:
    paid: list[int] = []
    agent, model = two_turn_agent(paid)
    with pytest.raises(ValueError, match="nothing pending"):
        asyncio.run(agent.ainvoke(Command(resume=APPROVE), CONFIG))
    assert paid == [] and model.calls == []


def test_an_edit_that_names_another_tool_is_refused() -> None:
    paid: list[int] = []
    agent, _ = two_turn_agent(paid)
    agent.invoke({"messages": [HumanMessage("Refund $500.")]}, CONFIG)
    switch = {"type": "edit", "name": "delete_account", "args": {"user": "bob"}}
    with pytest.raises(ValueError, match=r"decisions\.0\.edit\.name: Extra inputs"):
        agent.invoke(Command(resume={"decisions": [switch]}), CONFIG)
    assert paid == [] and agent.get_state(CONFIG).interrupts
