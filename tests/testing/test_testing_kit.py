"""The hook test kit: one middleware's hook, run without an agent, in both modes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.types import Command
from typing_extensions import NotRequired

from funcware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    before_model,
    dynamic_prompt,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.errors import InvalidJumpError
from funcware.testing import ScriptedChatModel, arun_hook, run_hook

MODES = ["sync", "async"]


class KitState(AgentState):
    stopped: NotRequired[bool]
    n: NotRequired[int]
    tagged: NotRequired[bool]


@before_model(can_jump_to=["end"], state_schema=KitState)
def limit(state: Any) -> Any:
    if len(state["messages"]) >= 2:
        return {"jump_to": "end", "stopped": True}
    return None


@pytest.mark.parametrize("mode", MODES)
def test_node_hook_update_and_jump(mode: Any) -> None:
    quiet = run_hook(limit, "before_model", state={"messages": [HumanMessage("a")]}, mode=mode)
    assert quiet.returned is None and quiet.jump is None and quiet.update is None
    stopped = run_hook(
        limit, "before_model", state={"messages": [HumanMessage("a"), AIMessage("b")]}, mode=mode
    )
    assert stopped.jump == "end"
    assert stopped.update == {"stopped": True}


@pytest.mark.parametrize("mode", MODES)
def test_async_only_and_class_hooks_run_in_both_modes(mode: Any) -> None:
    class Greeter(AgentMiddleware):
        async def abefore_agent(self, state: Any, runtime: Any) -> Any:
            return {"messages": [AIMessage(f"hello {runtime.context['user']}")]}

    result = run_hook(Greeter(), "before_agent", context={"user": "ada"}, mode=mode)
    assert result.update is not None
    assert result.update["messages"][0].content == "hello ada"


@pytest.mark.parametrize("mode", MODES)
def test_node_hook_command_is_reported(mode: Any) -> None:
    @before_model(can_jump_to=["model"], state_schema=KitState)
    def again(state: Any) -> Any:
        return Command(update={"jump_to": "model", "n": 1})

    result = run_hook(again, "before_model", mode=mode)
    assert result.command is not None
    assert result.jump == "model" and result.update == {"n": 1}


def test_undeclared_jump_is_still_an_error() -> None:
    @before_model
    def sneaky(state: Any) -> Any:
        return {"jump_to": "end"}

    with pytest.raises(InvalidJumpError, match="sneaky"):
        run_hook(sneaky, "before_model")


@pytest.mark.parametrize("mode", MODES)
def test_model_wrap_retry_counts_handler_calls(mode: Any) -> None:
    @wrap_model_call
    def retry(request: ModelRequest[Any], handler: Any) -> Any:
        for attempt in range(3):
            try:
                return handler(request)
            except ConnectionError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    result = run_hook(
        retry, "wrap_model_call", responses=[ConnectionError(), ConnectionError(), "ok"], mode=mode
    )
    assert result.handler_calls == 3
    assert result.returned.result[0].content == "ok"


@pytest.mark.parametrize("mode", MODES)
def test_model_wrap_command_and_seen_requests(mode: Any) -> None:
    @wrap_model_call(state_schema=KitState)
    def tag(request: ModelRequest[Any], handler: Any) -> Any:
        response = handler(request.override(system_prompt="tagged"))
        return ExtendedModelResponse(response, Command(update={"tagged": True}))

    result = run_hook(tag, "wrap_model_call", responses=[AIMessage("fine")], mode=mode)
    assert result.update == {"tagged": True}
    assert result.command is not None
    assert [r.system_prompt for r in result.requests] == ["tagged"]


@pytest.mark.parametrize("mode", MODES)
def test_dynamic_prompt_with_state_messages(mode: Any) -> None:
    @dynamic_prompt
    async def prompt(request: ModelRequest[Any]) -> str:
        return f"{len(request.messages)} messages so far"

    state = {"messages": [HumanMessage("a"), AIMessage("b"), HumanMessage("c")]}
    result = run_hook(prompt, "wrap_model_call", state=state, responses=["x"], mode=mode)
    assert result.requests[0].system_prompt == "3 messages so far"


@pytest.mark.parametrize("mode", MODES)
def test_tool_wrap_with_a_string_response_and_short_circuit(mode: Any) -> None:
    @wrap_tool_call
    def weather(request: Any, handler: Any) -> Any:
        if request.tool_call["name"] == "get_weather":
            return ToolMessage("sunny", tool_call_id=request.tool_call["id"])
        return handler(request)

    served = run_hook(
        weather,
        "wrap_tool_call",
        tool_call={"name": "get_weather", "args": {}, "id": "w", "type": "tool_call"},
        mode=mode,
    )
    assert served.handler_calls == 0 and served.returned.content == "sunny"
    passed = run_hook(weather, "wrap_tool_call", responses=["42"], mode=mode)
    assert passed.handler_calls == 1 and passed.returned.content == "42"


def test_asking_for_a_hook_the_middleware_lacks() -> None:
    with pytest.raises(ValueError, match="does not define wrap_model_call"):
        run_hook(limit, "wrap_model_call")


def test_too_few_scripted_responses() -> None:
    @wrap_model_call
    def twice(request: Any, handler: Any) -> Any:
        handler(request)
        return handler(request)

    with pytest.raises(AssertionError, match="2 times, but only 1 response was scripted"):
        run_hook(twice, "wrap_model_call", responses=["one"])


def test_arun_hook_in_an_async_test() -> None:
    async def main() -> Any:
        return await arun_hook(limit, "before_model", state={"messages": [1, 2]})

    assert asyncio.run(main()).jump == "end"


async def test_run_hook_async_mode_inside_a_running_loop() -> None:
    result = run_hook(limit, "before_model", state={"messages": [1, 2]}, mode="async")
    assert result.jump == "end"


def test_the_scripted_model_docstring_shows_how_to_script_a_tool_call() -> None:
    doc = ScriptedChatModel.__doc__ or ""
    assert "tool_calls=" in doc and "AIMessage" in doc
