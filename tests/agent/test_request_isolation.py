"""What one model call's layers do to their request never leaks to other calls or runs."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool
from support import Runner

from funcware import ModelRequest, after_model, create_agent, wrap_model_call
from funcware.testing import ScriptedChatModel


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


def test_editing_the_system_message_in_place_changes_that_call_only() -> None:
    prompt = SystemMessage(content=[{"type": "text", "text": "Be brief."}])

    @wrap_model_call
    def add_block(request: ModelRequest[Any], handler: Any) -> Any:
        assert request.system_message is not None
        blocks = request.system_message.content
        assert isinstance(blocks, list)
        blocks.append({"type": "text", "text": "extra"})
        return handler(request)

    model = ScriptedChatModel(responses=["one", "two"])
    agent = create_agent(model, system_prompt=prompt, middleware=[add_block])
    agent.invoke({"messages": [HumanMessage("a")]})
    agent.invoke({"messages": [HumanMessage("b")]})

    assert [len(call.messages[0].content) for call in model.calls] == [2, 2]
    assert prompt.content == [{"type": "text", "text": "Be brief."}]


def test_recorded_calls_are_snapshots() -> None:
    @wrap_model_call
    def mutate_after(request: ModelRequest[Any], handler: Any) -> Any:
        response = handler(request)
        request.messages[0].content = "changed afterwards"
        return response

    model = ScriptedChatModel(responses=["ok"])
    create_agent(model, middleware=[mutate_after]).invoke({"messages": [HumanMessage("orig")]})
    assert model.calls[0].messages[0].content == "orig"


def test_tool_calls_rewritten_without_a_type_still_reach_the_tools() -> None:
    @after_model
    def rewrite(state: Any) -> Any:
        last = state["messages"][-1]
        if not last.tool_calls:
            return None
        calls = [
            {"name": "echo", "args": {"text": "rewritten"}, "id": c["id"]} for c in last.tool_calls
        ]
        return {"messages": [last.model_copy(update={"tool_calls": calls})]}

    model = ScriptedChatModel(
        responses=[
            AIMessage("", tool_calls=[{"name": "echo", "args": {"text": "x"}, "id": "e1"}]),
            "done",
        ]
    )
    result = create_agent(model, [echo], middleware=[rewrite]).invoke(
        {"messages": [HumanMessage("go")]}
    )
    assert [m.content for m in result["messages"] if m.type == "tool"] == ["rewritten"]


def test_the_agent_runs_with_langchains_recursion_limit() -> None:
    agent = create_agent(ScriptedChatModel(responses=[]))
    assert agent.config is not None and agent.config["recursion_limit"] == 9_999


MODES = ["invoke", "ainvoke"]


@pytest.mark.parametrize("mode", MODES)
def test_editing_request_state_in_place_does_not_touch_the_agent_state(mode: str) -> None:
    @wrap_model_call
    def meddle(request: Any, handler: Any) -> Any:
        request.state["messages"].append(HumanMessage("smuggled"))
        return handler(request)

    result = Runner(mode)(create_agent(ScriptedChatModel(responses=["ok"]), middleware=[meddle]))
    assert [m.content for m in result["messages"]] == ["hi", "ok"]
