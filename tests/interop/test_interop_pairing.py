"""LangChain's built-ins that touch the history keep the tool-call pairing contract.

Each runs on a funcware agent with a checkpointer, where it rewrites, answers or ends:
SummarizationMiddleware cutting a conversation of tool calls, HumanInTheLoopMiddleware
approving, editing and rejecting, the tool-call and model-call limits at each exit
behaviour, PIIMiddleware redacting input, output and tool results. A
``ToolCallPairingWarning`` fails the test. Needs the ``langchain`` extra.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from harness import Driver
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from support import require_langchain

from funcware import ToolCallPairingWarning, create_agent
from funcware.pairing.contract import is_paired
from funcware.testing import ScriptedChatModel

lc = require_langchain("langchain.agents.middleware")


def lookup(city: str) -> str:
    """Look up the weather in a city."""
    return f"sunny in {city}; details from ops@example.com"


def calls(index: int, city: str = "Paris") -> AIMessage:
    call = {"name": "lookup", "args": {"city": city}, "id": f"call-{index}", "type": "tool_call"}
    return AIMessage("", tool_calls=[call])


def run(
    driver: Driver,
    middleware: list[Any],
    responses: list[Any],
    resumes: list[Any] = (),  # type: ignore[assignment]
) -> list[Any]:
    model = ScriptedChatModel(responses=responses)
    agent = create_agent(model, [lookup], middleware=middleware, checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "pairing"}}
    with warnings.catch_warnings():
        warnings.simplefilter("error", ToolCallPairingWarning)
        driver.invoke(agent, {"messages": [HumanMessage("Weather? Mail joe@example.com")]}, thread)
        for resume in resumes:
            driver.invoke(agent, Command(resume=resume), thread)
    for call in model.calls:
        assert is_paired(call.messages)
    messages: list[Any] = driver.get_state(agent, thread).values["messages"]
    assert is_paired(messages)
    return messages


def kinds(messages: list[Any]) -> list[str]:
    return [type(m).__name__ for m in messages]


def test_summarization_keeps_each_call_with_its_answer(driver: Driver) -> None:
    summarizer = ScriptedChatModel(responses=["the summary"] * 5)
    middleware = lc.SummarizationMiddleware(
        model=summarizer, trigger=("messages", 4), keep=("messages", 2)
    )
    messages = run(driver, [middleware], [calls(1), calls(2, "Rome"), calls(3, "Oslo"), "done"])
    assert "the summary" in messages[0].text and messages[-1].text == "done"


@pytest.mark.parametrize(
    "decision",
    [
        {"type": "approve"},
        {"type": "edit", "edited_action": {"name": "lookup", "args": {"city": "Rome"}}},
        {"type": "reject", "message": "not now"},
    ],
    ids=lambda d: d["type"],
)
def test_human_in_the_loop_answers_every_call(driver: Driver, decision: dict[str, Any]) -> None:
    middleware = lc.HumanInTheLoopMiddleware(interrupt_on={"lookup": True})
    messages = run(driver, [middleware], [calls(1), "done"], [{"decisions": [decision]}])
    assert kinds(messages) == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]


@pytest.mark.parametrize("exit_behavior", ["continue", "end"])
def test_the_tool_call_limit_answers_the_calls_it_blocks(
    driver: Driver, exit_behavior: str
) -> None:
    middleware = lc.ToolCallLimitMiddleware(run_limit=1, exit_behavior=exit_behavior)
    messages = run(driver, [middleware], [calls(1), calls(2, "Rome"), "done"])
    blocked = [m for m in messages if isinstance(m, ToolMessage) and m.tool_call_id == "call-2"]
    assert len(blocked) == 1 and blocked[0].status == "error"


def test_the_model_call_limit_ends_after_the_answers(driver: Driver) -> None:
    middleware = lc.ModelCallLimitMiddleware(run_limit=1, exit_behavior="end")
    messages = run(driver, [middleware], [calls(1), "done"])
    assert kinds(messages)[:3] == ["HumanMessage", "AIMessage", "ToolMessage"]


def test_pii_redaction_rewrites_messages_in_place(driver: Driver) -> None:
    middleware = lc.PIIMiddleware(
        "email",
        strategy="redact",
        apply_to_input=True,
        apply_to_output=True,
        apply_to_tool_results=True,
    )
    messages = run(driver, [middleware], [calls(1), "done"])
    assert "@example.com" not in " ".join(m.text for m in messages)
