"""Structured output under wrap layers: retries keep their feedback, clear errors, checkpoints.

- A layer that catches a ``StructuredOutputError`` and retries with feedback appended to
  ``request.messages`` gets that feedback kept in the state, before the answer (as
  LangChain keeps it); other in-place edits of a request stay with that call.
- A model with no answer left raises a clear error, not langgraph's
  "generator raised StopIteration".
- A layer that swaps the model resolves the format against the swapped model.
- ``response_format`` classes load from checkpoints in langgraph's strict msgpack mode.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph._internal import _serde
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde import _msgpack
from pydantic import BaseModel, Field
from support import call, calls_tool

from funcware import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    StructuredOutputError,
    ToolStrategy,
    create_agent,
)
from funcware.testing import ScriptedChatModel


class WeatherReport(BaseModel):
    """A weather report."""

    temperature: float
    conditions: str


class RetryWithFeedback(AgentMiddleware):
    """Written the way published retry middleware is: append feedback, call again."""

    def __init__(self, max_retries: int) -> None:
        self.max_retries = max_retries

    def _feedback(self, request: ModelRequest, exc: StructuredOutputError) -> None:
        request.messages.append(HumanMessage(f"Error: {exc}. Please try again."))

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        for attempt in range(self.max_retries + 1):
            try:
                return handler(request)
            except StructuredOutputError as exc:
                if attempt == self.max_retries:
                    raise
                self._feedback(request, exc)
        raise AssertionError("unreachable")

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        for attempt in range(self.max_retries + 1):
            try:
                return await handler(request)
            except StructuredOutputError as exc:
                if attempt == self.max_retries:
                    raise
                self._feedback(request, exc)
        raise AssertionError("unreachable")


def report(call_id: str, **args: Any) -> AIMessage:
    return calls_tool(call("WeatherReport", args, call_id))


def retrying_agent(*answers: AIMessage, retries: int = 2) -> Any:
    return create_agent(
        ScriptedChatModel(responses=list(answers)),
        middleware=[RetryWithFeedback(retries)],
        response_format=ToolStrategy(WeatherReport, handle_errors=False),
        checkpointer=InMemorySaver(),
    )


THREAD = {"configurable": {"thread_id": "t"}}


def kinds(messages: list[Any]) -> list[str]:
    return [type(m).__name__ for m in messages]


def test_the_feedback_of_a_validation_retry_is_kept_before_the_answer() -> None:
    agent = retrying_agent(
        report("1", temperature="warm", conditions="sunny"),
        report("2", temperature=72.5),
        report("3", temperature=72.5, conditions="sunny"),
    )
    result = agent.invoke({"messages": [HumanMessage("weather?")]}, THREAD)
    assert result["structured_response"] == WeatherReport(temperature=72.5, conditions="sunny")
    messages = result["messages"]
    assert kinds(messages) == [
        "HumanMessage",
        "HumanMessage",
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
    ]
    assert all("Please try again" in m.content for m in messages[1:3])
    assert messages[3].tool_calls[0]["id"] == "3"  # the failed attempts' answers are not kept
    # the checkpoint holds the same history
    assert kinds(agent.get_state(THREAD).values["messages"]) == kinds(messages)


async def test_the_feedback_of_an_async_validation_retry_is_kept() -> None:
    agent = retrying_agent(
        report("1", temperature="warm", conditions="rainy"),
        report("2", temperature=75.0, conditions="rainy"),
    )
    result = await agent.ainvoke({"messages": [HumanMessage("weather?")]}, THREAD)
    assert result["structured_response"].temperature == 75.0
    assert kinds(result["messages"]) == ["HumanMessage", "HumanMessage", "AIMessage", "ToolMessage"]


def test_a_retry_that_runs_out_raises_and_keeps_nothing() -> None:
    agent = retrying_agent(
        report("1", temperature="a", conditions="x"),
        report("2", temperature="b", conditions="x"),
        retries=1,
    )
    with pytest.raises(StructuredOutputError):
        agent.invoke({"messages": [HumanMessage("weather?")]}, THREAD)


def test_an_in_place_edit_without_a_structured_output_error_stays_with_its_call() -> None:
    class AddsAReminder(AgentMiddleware):
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            request.messages.append(HumanMessage("reminder: be brief"))
            return handler(request)

    agent = create_agent(
        ScriptedChatModel(responses=[report("1", temperature=1.0, conditions="x")]),
        middleware=[AddsAReminder()],
        response_format=ToolStrategy(WeatherReport, handle_errors=False),
    )
    result = agent.invoke({"messages": [HumanMessage("weather?")]})
    assert kinds(result["messages"]) == ["HumanMessage", "AIMessage", "ToolMessage"]


class RecordsBindings(GenericFakeChatModel):
    """A fake chat model that records what it was bound with."""

    bindings: list[Any] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        self.bindings.append((tools, kwargs))
        return self


def test_a_model_with_no_answer_left_is_a_clear_error_that_explains_the_re_ask() -> None:
    text = RecordsBindings(messages=iter([json.dumps({"temperature": 1.0, "conditions": "x"})]))

    class SwapsTheModel(AgentMiddleware):
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            return handler(request.override(model=text))

    agent = create_agent(
        ScriptedChatModel(responses=["unused"]),
        middleware=[SwapsTheModel()],
        response_format=WeatherReport,
    )
    with pytest.raises(RuntimeError) as caught:
        agent.invoke({"messages": [HumanMessage("weather?")]})
    message = str(caught.value)
    assert "generator raised StopIteration" not in message
    assert "RecordsBindings raised StopIteration" in message
    assert "ToolStrategy(WeatherReport)" in message  # why the model was asked again
    assert "structured_output=True" in message  # the fix


def test_a_swapped_model_with_native_support_is_served_with_the_provider_strategy() -> None:
    native = RecordsBindings(
        messages=iter([json.dumps({"temperature": 75.0, "conditions": "sunny"})]),
        profile={"structured_output": True},
    )

    class SwapsTheModel(AgentMiddleware):
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            return handler(request.override(model=native))

    agent = create_agent(
        ScriptedChatModel(responses=["unused"]),
        middleware=[SwapsTheModel()],
        response_format=WeatherReport,
    )
    result = agent.invoke({"messages": [HumanMessage("weather?")]})
    assert result["structured_response"] == WeatherReport(temperature=75.0, conditions="sunny")
    assert kinds(result["messages"]) == ["HumanMessage", "AIMessage"]
    [(tools, kwargs)] = native.bindings
    assert tools == [] and kwargs["response_format"]["type"] == "json_schema"


@pytest.fixture
def strict_msgpack(monkeypatch: pytest.MonkeyPatch) -> None:
    """langgraph as with LANGGRAPH_STRICT_MSGPACK=true (read at import, so patched here)."""
    monkeypatch.setattr(_serde, "STRICT_MSGPACK_ENABLED", True)
    monkeypatch.setattr(_msgpack, "STRICT_MSGPACK_ENABLED", True)


def test_response_format_classes_load_from_checkpoints_in_strict_msgpack_mode(
    strict_msgpack: None, caplog: pytest.LogCaptureFixture
) -> None:
    agent = create_agent(
        ScriptedChatModel(
            responses=[
                report("1", temperature=1.0, conditions="x"),
                report("2", temperature=2.0, conditions="y"),
            ]
        ),
        response_format=WeatherReport,
        checkpointer=InMemorySaver(),
    )
    with caplog.at_level(logging.WARNING):
        agent.invoke({"messages": [HumanMessage("one")]}, THREAD)
        state = agent.get_state(THREAD)  # read back from the checkpoint
        agent.invoke({"messages": [HumanMessage("two")]}, THREAD)
    assert state.values["structured_response"] == WeatherReport(temperature=1.0, conditions="x")
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "WeatherReport" not in logged, logged
    assert isinstance(agent.get_state(THREAD).values["messages"][-1], ToolMessage)


def test_feedback_passed_through_override_stays_with_its_call_as_on_langchain() -> None:
    class RetryThroughOverride(AgentMiddleware):
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            try:
                return handler(request)
            except StructuredOutputError:
                feedback = HumanMessage("Please try again.")
                return handler(request.override(messages=[*request.messages, feedback]))

    agent = create_agent(
        ScriptedChatModel(
            responses=[
                report("1", temperature="warm", conditions="x"),
                report("2", temperature=1.0, conditions="x"),
            ]
        ),
        middleware=[RetryThroughOverride()],
        response_format=ToolStrategy(WeatherReport, handle_errors=False),
    )
    result = agent.invoke({"messages": [HumanMessage("weather?")]})
    assert kinds(result["messages"]) == ["HumanMessage", "AIMessage", "ToolMessage"]
