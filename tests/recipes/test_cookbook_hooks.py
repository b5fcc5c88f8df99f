"""Recipe hooks unit-tested with the hook test kit, in sync and async mode alike."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from funcware.cookbook import (
    content_guard,
    message_limit,
    model_call_counter,
    model_fallback,
    model_retry,
    pii_redaction,
    schema_tool,
    tool_retry,
)
from funcware.testing import ScriptedChatModel, run_hook

MODES = ["sync", "async"]


@pytest.mark.parametrize("mode", MODES)
def test_message_limit_jumps_only_at_the_limit(mode: Any) -> None:
    short = {"messages": [HumanMessage("q")] * (message_limit.MAX_MESSAGES - 1)}
    long = {"messages": [HumanMessage("q")] * message_limit.MAX_MESSAGES}
    assert (
        run_hook(message_limit.message_limit, "before_model", state=short, mode=mode).jump is None
    )
    stopped = run_hook(message_limit.message_limit, "before_model", state=long, mode=mode)
    assert stopped.jump == "end"
    assert stopped.update is not None and "Stopping" in stopped.update["messages"][0].content


@pytest.mark.parametrize("mode", MODES)
def test_model_call_counter_counts_from_state(mode: Any) -> None:
    counter = model_call_counter.ModelCallCounter(limit=5)
    state = {"messages": [HumanMessage("q"), AIMessage("a")], "model_calls": 2}
    result = run_hook(counter, "after_model", state=state, mode=mode)
    assert result.update == {"model_calls": 3, "last_seen": 2}


@pytest.mark.parametrize("mode", MODES)
def test_model_retry_retries_then_answers(mode: Any) -> None:
    waits: list[float] = []
    retry = model_retry.ModelRetry(max_retries=2, base_delay=0.5, sleep=waits.append)
    result = run_hook(
        retry, "wrap_model_call", responses=[TimeoutError(), TimeoutError(), "ok"], mode=mode
    )
    assert result.handler_calls == 3
    assert result.returned.result[0].content == "ok"
    assert waits == [0.5, 1.0]


@pytest.mark.parametrize("mode", MODES)
def test_model_fallback_switches_model(mode: Any) -> None:
    backup = ScriptedChatModel(responses=[])
    fallback = model_fallback.ModelFallback(backup)
    result = run_hook(
        fallback, "wrap_model_call", responses=[RuntimeError("down"), "ok"], mode=mode
    )
    assert result.handler_calls == 2
    assert result.requests[1].model is backup


@pytest.mark.parametrize("mode", MODES)
def test_tool_retry_turns_the_last_failure_into_an_error_message(mode: Any) -> None:
    retry = tool_retry.ToolRetry(max_retries=1, sleep=lambda _: None)
    result = run_hook(retry, "wrap_tool_call", responses=[OSError("x"), OSError("y")], mode=mode)
    assert result.handler_calls == 2
    assert result.returned.status == "error"


@pytest.mark.parametrize("mode", MODES)
def test_schema_tool_answers_without_the_handler(mode: Any) -> None:
    call = {"name": "get_weather", "args": {"city": "Oslo"}, "id": "w1", "type": "tool_call"}
    result = run_hook(schema_tool.serve_weather, "wrap_tool_call", tool_call=call, mode=mode)
    assert result.handler_calls == 0
    assert "Oslo" in result.returned.content


@pytest.mark.parametrize("mode", MODES)
def test_content_guard_replaces_and_ends(mode: Any) -> None:
    guard = content_guard.ContentGuard()
    leaked = AIMessage("the password is hunter2", id="a1")
    result = run_hook(guard, "after_model", state={"messages": [leaked]}, mode=mode)
    assert result.jump == "end"
    assert result.update is not None
    [replacement] = result.update["messages"]
    assert replacement.id == "a1" and "hunter2" not in replacement.content


@pytest.mark.parametrize("mode", MODES)
def test_pii_redaction_hides_the_email_from_the_model(mode: Any) -> None:
    state = {"messages": [HumanMessage("write to ada@example.com")]}
    result = run_hook(
        pii_redaction.pii_redaction, "wrap_model_call", state=state, responses=["ok"], mode=mode
    )
    assert "ada@example.com" not in result.requests[0].messages[0].content
