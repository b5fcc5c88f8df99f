"""Every recipe that gates something fails closed: a value it does not understand is refused
with an error that names it, and lets nothing through.

One test per gate: ``ApproveToolCalls`` (tool names, conditions), ``ToolCallLimit`` (limit,
exit behaviour), ``OncePerToolCall`` (tool names, calls without an id), ``ContentGuard``
(patterns), ``ModelCallCounter`` (limit) and ``select_tools`` (toolset). The decisions of an
approval are covered in ``test_approval_fails_closed.py`` and ``test_approval_misdirected.py``.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from funcware import create_agent
from funcware.cookbook.content_guard import ContentGuard
from funcware.cookbook.human_approval import ApproveToolCalls
from funcware.cookbook.model_call_counter import ModelCallCounter
from funcware.cookbook.once_per_call import CallLedger, OncePerToolCall
from funcware.cookbook.tool_call_limit import ToolCallLimit
from funcware.cookbook.tool_selection import select_tools
from funcware.testing import ScriptedChatModel

CONFIG: Any = {"configurable": {"thread_id": "gate"}}


def refund_agent(paid: list[int], *middleware: Any, call_id: str | None = "r1") -> Any:
    def refund(amount: int) -> str:
        """Refund an amount of dollars."""
        paid.append(amount)
        return "refunded"

    call = {"name": "refund", "args": {"amount": 500}, "id": call_id}
    model = ScriptedChatModel(responses=[AIMessage("", tool_calls=[call]), "Done."])
    return create_agent(model, [refund], middleware=list(middleware), checkpointer=InMemorySaver())


def test_approval_refuses_a_bare_string_of_tool_names() -> None:
    with pytest.raises(TypeError, match=r"needs_approval is 'refund'; give a collection"):
        ApproveToolCalls("refund")
    with pytest.raises(TypeError, match="needs_approval"):
        ApproveToolCalls([1])  # type: ignore[list-item]


def test_approval_refuses_a_condition_that_answers_neither_true_nor_false() -> None:
    paid: list[int] = []
    forgot_return = ApproveToolCalls({"refund"}, when={"refund": lambda call: None})  # type: ignore[dict-item,return-value]
    agent = refund_agent(paid, forgot_return)
    with pytest.raises(TypeError, match=r"when\['refund'\] returned None .* Nothing was run"):
        agent.invoke({"messages": [HumanMessage("Refund me.")]}, CONFIG)
    assert paid == []


@pytest.mark.parametrize(
    "limit, exit_behavior",
    [
        ("2", "continue"),
        (-1, "continue"),
        (2.5, "continue"),
        (True, "continue"),
        (None, "continue"),
        (1, "stop"),
        (1, "End"),
    ],
)
def test_tool_call_limit_refuses_a_limit_or_exit_behaviour_it_does_not_know(
    limit: Any, exit_behavior: Any
) -> None:
    with pytest.raises(ValueError, match=r"ToolCallLimit\((limit|exit_behavior)="):
        ToolCallLimit(limit=limit, exit_behavior=exit_behavior)


def test_tool_call_limit_zero_runs_nothing() -> None:
    paid: list[int] = []
    state = refund_agent(paid, ToolCallLimit(limit=0)).invoke(
        {"messages": [HumanMessage("Refund me.")]}, CONFIG
    )
    assert paid == []
    (refusal,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert refusal.status == "error" and "limit reached" in refusal.text


def test_once_per_call_refuses_a_bare_string_of_tool_names() -> None:
    with pytest.raises(TypeError, match=r"tools='refund'.*pass through unguarded"):
        OncePerToolCall(CallLedger.sqlite(), tools="refund")


def test_once_per_call_refuses_a_call_without_an_id_and_runs_nothing() -> None:
    paid: list[int] = []
    once = OncePerToolCall(CallLedger.sqlite(), tools={"refund"})
    agent = refund_agent(paid, once, call_id=None)
    with pytest.raises(ValueError, match="has no id, so it has no stable key"):
        agent.invoke({"messages": [HumanMessage("Refund me.")]}, CONFIG)
    assert paid == []


@pytest.mark.parametrize("patterns", ["password", ["password"], re.compile("password")])
def test_content_guard_refuses_patterns_that_are_not_compiled_patterns(patterns: Any) -> None:
    with pytest.raises(TypeError, match=r"ContentGuard\(patterns=.*compiled patterns"):
        ContentGuard(patterns)


@pytest.mark.parametrize("limit", [float("nan"), "3", -1, None])
def test_model_call_counter_refuses_a_limit_that_is_not_a_count(limit: Any) -> None:
    with pytest.raises(ValueError, match=r"ModelCallCounter\(limit="):
        ModelCallCounter(limit=limit)


def test_tool_selection_refuses_an_unknown_toolset_before_the_model_sees_any_tool() -> None:
    model = ScriptedChatModel(responses=["hello"])
    agent = create_agent(model, [], middleware=[select_tools])
    with pytest.raises(ValueError, match="unknown toolset 'maths'"):
        agent.invoke({"messages": [HumanMessage("2 + 2?")], "toolset": "maths"})
    assert model.calls == []
