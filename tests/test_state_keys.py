"""A hook that writes a state key the agent does not have gets an error, not silence."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command
from support import Runner, call, calls_tool
from typing_extensions import NotRequired

from funcware import (
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    before_model,
    compose,
    create_agent,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.compose.steps.keys import UnknownStateKeyError
from funcware.testing import ScriptedChatModel

MODES = ["invoke", "ainvoke"]


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


@pytest.mark.parametrize("mode", MODES)
def test_a_typo_in_a_node_hook_update_names_the_hook_and_suggests_the_key(mode: str) -> None:
    @before_model
    def typo(state: Any) -> Any:
        return {"mesages": [AIMessage("lost")]}

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[typo])
    with pytest.raises(UnknownStateKeyError) as error:
        Runner(mode)(agent)
    message = str(error.value)
    assert "middleware 'typo', hook before_model" in message
    assert "'mesages'" in message and "Did you mean 'messages'?" in message
    assert "test_state_keys.py" in message


@pytest.mark.parametrize("mode", MODES)
def test_a_model_wrap_command_to_an_undeclared_key_is_refused(mode: str) -> None:
    @wrap_model_call
    def tally(request: ModelRequest[Any], handler: Any) -> Any:
        return ExtendedModelResponse(handler(request), Command(update={"tally": 1}))

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[tally])
    with pytest.raises(UnknownStateKeyError, match="middleware 'tally', hook wrap_model_call"):
        Runner(mode)(agent)


@pytest.mark.parametrize("mode", MODES)
def test_a_tool_wrap_command_to_an_undeclared_key_is_refused(mode: str) -> None:
    @wrap_tool_call
    def remember(request: Any, handler: Any) -> Any:
        result = handler(request)
        return Command(update={"messages": [result], "last_tool": "echo"})

    model = ScriptedChatModel(responses=[calls_tool(call("echo", {"text": "x"}, "e1")), "ok"])
    agent = create_agent(model, [echo], middleware=[remember])
    with pytest.raises(UnknownStateKeyError, match="'last_tool'"):
        Runner(mode)(agent)


@pytest.mark.parametrize("mode", MODES)
def test_declared_keys_from_any_schema_are_accepted(mode: str) -> None:
    class Extra(AgentState):
        tally: NotRequired[int]
        last_tool: NotRequired[str]

    @wrap_model_call
    def tally(request: ModelRequest[Any], handler: Any) -> Any:
        return ExtendedModelResponse(handler(request), Command(update={"tally": 1}))

    @wrap_tool_call
    def remember(request: Any, handler: Any) -> Any:
        result = handler(request)
        assert isinstance(result, ToolMessage)
        return Command(update={"messages": [result], "last_tool": request.tool_call["name"]})

    model = ScriptedChatModel(responses=[calls_tool(call("echo", {"text": "x"}, "e1")), "ok"])
    agent = create_agent(model, [echo], middleware=[compose(tally, remember)], state_schema=Extra)
    result = Runner(mode)(agent, {"messages": [HumanMessage("go")]})
    assert result["tally"] == 1 and result["last_tool"] == "echo"


def test_compose_alone_does_not_check_keys() -> None:
    """Standalone, a composite cannot know the agent's schema, so it does not guess."""

    @wrap_model_call
    def tally(request: ModelRequest[Any], handler: Any) -> Any:
        return ExtendedModelResponse(handler(request), Command(update={"tally": 1}))

    request = ModelRequest(model=ScriptedChatModel(responses=[]), messages=[HumanMessage("x")])
    result = compose(tally).wrap_model_call(request, lambda r: AIMessage("ok"))
    assert isinstance(result, ExtendedModelResponse)
    assert result.command is not None and result.command.update == {"tally": 1}
