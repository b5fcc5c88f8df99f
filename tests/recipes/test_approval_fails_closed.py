"""The approval gate fails closed: a resume it does not understand approves nothing.

A typo in a decision's type, an edit without arguments, a wrong number of decisions, an
unknown key or a resume of the wrong shape is refused with a ``ValueError`` that names
it; the gated tool does not run, and the same approval can then be answered correctly.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from funcware import create_agent
from funcware.cookbook.human_approval import ApproveToolCalls
from funcware.testing import ScriptedChatModel

MALFORMED: dict[str, tuple[object, str]] = {
    "typo in reject": ({"decisions": [{"type": "rejct"}]}, "Input tag 'rejct'"),
    "typo in approve": ({"decisions": [{"type": "aprove"}]}, "Input tag 'aprove'"),
    "no type": ({"decisions": [{"message": "no"}]}, "decisions.0"),
    "edit without args": ({"decisions": [{"type": "edit"}]}, "decisions.0.edit.args"),
    "edit args not a dict": ({"decisions": [{"type": "edit", "args": 5}]}, "args"),
    "approve with args": (
        {"decisions": [{"type": "approve", "args": {"amount": 1}}]},
        "Extra inputs are not permitted",
    ),
    "too few decisions": ({"decisions": []}, "at least 1 item"),
    "too many decisions": (
        {"decisions": [{"type": "approve"}, {"type": "approve"}]},
        "at most 1 item",
    ),
    "a bare decision": ({"type": "approve"}, "decisions"),
    "a string": ("approve", "Unexpected human decision"),
}


def refund_agent(paid: list[int]) -> Any:
    def refund(amount: int) -> str:
        """Refund an amount of dollars."""
        paid.append(amount)
        return "refunded"

    proposal = AIMessage("", tool_calls=[{"name": "refund", "args": {"amount": 500}, "id": "r1"}])
    model = ScriptedChatModel(responses=[proposal, "Done."])
    return create_agent(
        model, [refund], middleware=[ApproveToolCalls({"refund"})], checkpointer=InMemorySaver()
    )


@pytest.mark.parametrize("resume, named", MALFORMED.values(), ids=list(MALFORMED))
def test_a_malformed_resume_pays_nothing_and_the_approval_stays_open(
    resume: object, named: str
) -> None:
    paid: list[int] = []
    agent = refund_agent(paid)
    config: Any = {"configurable": {"thread_id": "refund"}}
    agent.invoke({"messages": [HumanMessage("Refund me.")]}, config)

    with pytest.raises(ValueError, match="Unexpected human decision") as refused:
        agent.invoke(Command(resume=resume), config)
    assert named in str(refused.value)
    assert paid == []
    assert agent.get_state(config).interrupts  # still waiting for a decision

    state = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert paid == [500]
    assert state["messages"][-1].content == "Done."


def test_a_typo_is_refused_under_ainvoke_too() -> None:
    paid: list[int] = []
    agent = refund_agent(paid)
    config: Any = {"configurable": {"thread_id": "refund-async"}}

    async def run() -> dict[str, Any]:
        await agent.ainvoke({"messages": [HumanMessage("Refund me.")]}, config)
        with pytest.raises(ValueError, match="Unexpected human decision"):
            await agent.ainvoke(Command(resume={"decisions": [{"type": "rejct"}]}), config)
        assert paid == []
        decisions = [{"type": "reject", "message": "Over the limit."}]
        result: dict[str, Any] = await agent.ainvoke(
            Command(resume={"decisions": decisions}), config
        )
        return result

    state = asyncio.run(run())
    assert paid == []
    answer = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert answer.status == "error" and "Over the limit." in answer.text


def test_the_pause_tells_the_client_the_shape_of_a_valid_resume() -> None:
    agent = refund_agent([])
    config: Any = {"configurable": {"thread_id": "refund-schema"}}
    (pause,) = agent.invoke({"messages": [HumanMessage("Refund me.")]}, config)["__interrupt__"]
    schema = pause.response_schema
    assert schema["required"] == ["decisions"]
    decisions = schema["properties"]["decisions"]
    assert (decisions["minItems"], decisions["maxItems"]) == (1, 1)
    assert set(decisions["items"]["discriminator"]["mapping"]) == {"approve", "edit", "reject"}
