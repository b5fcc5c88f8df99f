"""funcware.hooks.types: the state schema, its field flags, requests and responses."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any, get_args, get_origin

import pytest
import typing_extensions
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.channels.ephemeral_value import EphemeralValue
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolRuntime as LangGraphToolRuntime
from langgraph.prebuilt.tool_node import ToolCallRequest as LangGraphToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command
from typing_extensions import NotRequired

import funcware
from funcware import (
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    OmitFromInput,
    OmitFromOutput,
    PrivateStateAttr,
)
from funcware.hooks import OmitFromSchema
from funcware.testing import ScriptedChatModel


def metadata(field: str) -> tuple[Any, ...]:
    """The ``Annotated`` metadata of an AgentState field (under Required/NotRequired)."""
    hint = typing_extensions.get_type_hints(AgentState, include_extras=True)[field]
    (annotated,) = get_args(hint)
    return annotated.__metadata__


@pytest.fixture
def model() -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([]))


# --- AgentState -------------------------------------------------------------------------


def test_agent_state_fields_and_their_annotations() -> None:
    assert set(typing_extensions.get_type_hints(AgentState)) == {
        "messages",
        "jump_to",
        "structured_response",
    }
    assert add_messages in metadata("messages")
    assert EphemeralValue in metadata("jump_to")
    assert PrivateStateAttr in metadata("jump_to")
    assert metadata("structured_response") == (OmitFromInput,)


def test_langgraph_builds_the_expected_channels_from_agent_state() -> None:
    channels = StateGraph(AgentState).channels
    assert channels["messages"].operator is add_messages  # type: ignore[attr-defined]
    assert isinstance(channels["jump_to"], EphemeralValue)


def test_messages_append_and_jump_to_lasts_one_step() -> None:
    seen: list[object] = []

    def jump(state: AgentState[Any]) -> dict[str, Any]:
        return {"messages": [AIMessage("a")], "jump_to": "model"}

    def step(state: AgentState[Any]) -> dict[str, Any]:
        seen.append(state.get("jump_to"))
        return {"messages": [AIMessage("b")]}

    def last(state: AgentState[Any]) -> None:
        seen.append(state.get("jump_to"))

    graph = StateGraph(AgentState)
    for node in (jump, step, last):
        graph.add_node(node.__name__, node)
    graph.add_edge(START, "jump")
    graph.add_edge("jump", "step")
    graph.add_edge("step", "last")
    graph.add_edge("last", END)
    out = graph.compile().invoke({"messages": [HumanMessage("q")]})

    assert [m.text for m in out["messages"]] == ["q", "a", "b"]
    assert seen == ["model", None]
    assert "jump_to" not in out


def test_agent_state_is_generic_in_the_structured_response() -> None:
    assert get_origin(AgentState[int]) is AgentState
    assert get_args(AgentState[int]) == (int,)

    class Counted(AgentState[int]):
        count: NotRequired[int]

    hints = typing_extensions.get_type_hints(Counted)
    assert {"messages", "jump_to", "structured_response", "count"} <= set(hints)
    assert set(StateGraph(Counted).channels) >= {"messages", "jump_to", "count"}


# --- field flags ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "omit_input", "omit_output"),
    [(OmitFromInput, True, False), (OmitFromOutput, False, True), (PrivateStateAttr, True, True)],
)
def test_schema_flags(flag: OmitFromSchema, omit_input: bool, omit_output: bool) -> None:
    assert isinstance(flag, OmitFromSchema)
    assert (flag.input, flag.output) == (omit_input, omit_output)
    with pytest.raises(dataclasses.FrozenInstanceError):
        flag.input = not omit_input  # type: ignore[misc]


# --- ModelRequest -----------------------------------------------------------------------


def test_model_request_defaults(model: GenericFakeChatModel) -> None:
    messages = [HumanMessage("hi")]
    request: ModelRequest[None] = ModelRequest(model=model, messages=messages)
    assert request.model is model
    assert request.messages is messages
    assert request.system_message is None
    assert request.system_prompt is None
    assert request.tool_choice is None
    assert request.tools == []
    assert request.response_format is None
    assert request.state == {"messages": []}
    assert request.runtime is None
    assert request.model_settings == {}


def test_model_request_defaults_are_not_shared(model: GenericFakeChatModel) -> None:
    one: ModelRequest[None] = ModelRequest(model=model, messages=[])
    two: ModelRequest[None] = ModelRequest(model=model, messages=[])
    assert one.tools is not two.tools
    assert one.model_settings is not two.model_settings
    assert one.state is not two.state


def test_model_request_all_fields(model: GenericFakeChatModel) -> None:
    system = SystemMessage("be brief")
    tool = {"name": "lookup", "description": "d", "parameters": {"type": "object"}}
    state: AgentState[Any] = {"messages": [HumanMessage("hi")]}
    runtime: Runtime[None] = Runtime(context=None)
    request: ModelRequest[None] = ModelRequest(
        model=model,
        messages=[HumanMessage("hi")],
        system_message=system,
        tool_choice="auto",
        tools=[tool],
        response_format={"type": "json"},
        state=state,
        runtime=runtime,
        model_settings={"temperature": 0},
    )
    assert request.system_message is system
    assert request.system_prompt == "be brief"
    assert (request.tool_choice, request.tools) == ("auto", [tool])
    assert request.response_format == {"type": "json"}
    assert request.state is state
    assert request.runtime is runtime
    assert request.model_settings == {"temperature": 0}


def test_system_prompt_keyword_becomes_a_system_message(model: GenericFakeChatModel) -> None:
    request: ModelRequest[None] = ModelRequest(model=model, messages=[], system_prompt="be kind")
    assert isinstance(request.system_message, SystemMessage)
    assert request.system_message.content == "be kind"
    assert request.system_prompt == "be kind"


def test_system_prompt_and_system_message_together_are_refused(
    model: GenericFakeChatModel,
) -> None:
    with pytest.raises(ValueError, match=r"^Cannot specify both system_prompt and system_message"):
        ModelRequest(model=model, messages=[], system_prompt="a", system_message=SystemMessage("b"))


def test_override_returns_a_new_request_and_leaves_the_old_one(
    model: GenericFakeChatModel,
) -> None:
    old: ModelRequest[None] = ModelRequest(
        model=model, messages=[HumanMessage("hi")], system_prompt="old", tool_choice="auto"
    )
    before = dict(vars(old))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # override() must not go through the warning setter
        new = old.override(tool_choice="none", messages=[HumanMessage("other")])
    assert new is not old
    assert type(new) is ModelRequest
    assert new.tool_choice == "none"
    assert [m.text for m in new.messages] == ["other"]
    assert new.system_prompt == "old"
    assert all(getattr(old, key) is value for key, value in before.items())
    assert [m.text for m in old.messages] == ["hi"]


def test_override_system_prompt(model: GenericFakeChatModel) -> None:
    old: ModelRequest[None] = ModelRequest(model=model, messages=[], system_prompt="old")
    new = old.override(system_prompt="x")
    assert isinstance(new.system_message, SystemMessage)
    assert new.system_prompt == "x"
    assert old.system_prompt == "old"
    assert old.override(system_prompt=None).system_message is None
    with pytest.raises(ValueError, match=r"^Cannot specify both system_prompt and system_message"):
        old.override(system_prompt="x", system_message=SystemMessage("y"))


def test_override_unknown_field_names_the_valid_ones(model: GenericFakeChatModel) -> None:
    request: ModelRequest[None] = ModelRequest(model=model, messages=[])
    with pytest.raises(TypeError) as info:
        request.override(temprature=0.5)
    message = str(info.value)
    assert "temprature" in message
    assert "valid fields are: model, messages, system_message, tool_choice, tools," in message
    assert "model_settings, system_prompt" in message


def test_assigning_an_attribute_warns_but_applies(model: GenericFakeChatModel) -> None:
    request: ModelRequest[None] = ModelRequest(model=model, messages=[])
    with pytest.warns(DeprecationWarning, match=r"override\(tool_choice=") as record:
        request.tool_choice = "auto"
    assert record[0].filename == __file__  # points at the assignment, not at funcware
    assert request.tool_choice == "auto"
    with pytest.warns(DeprecationWarning, match="system_prompt"):
        request.system_prompt = "new"  # type: ignore[misc]
    assert request.system_message == SystemMessage("new")


# --- responses and langgraph's own types ----------------------------------------------


def test_model_response() -> None:
    message = AIMessage("done")
    assert ModelResponse(result=[message]).structured_response is None
    response = ModelResponse(result=[message], structured_response={"answer": 42})
    assert response.result == [message]
    assert response.structured_response == {"answer": 42}


def test_extended_model_response() -> None:
    inner = ModelResponse(result=[AIMessage("done")])
    assert ExtendedModelResponse(model_response=inner).command is None
    command = Command(update={"count": 1})
    extended = ExtendedModelResponse(model_response=inner, command=command)
    assert extended.model_response is inner
    assert extended.command is command


def test_tool_call_request_and_tool_runtime_are_langgraphs_own() -> None:
    assert funcware.ToolCallRequest is LangGraphToolCallRequest
    assert funcware.ToolRuntime is LangGraphToolRuntime
    assert funcware.hooks.ToolCallRequest is LangGraphToolCallRequest


def test_override_leaves_the_process_warning_filters_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*args: object, **kwargs: object) -> Any:
        raise AssertionError("override() touched the warning filters")

    monkeypatch.setattr(warnings, "catch_warnings", refuse)
    request: ModelRequest[Any] = ModelRequest(
        model=ScriptedChatModel(responses=[]), messages=[], system_prompt="a"
    )
    with _no_warnings():
        new = request.override(system_message=SystemMessage("b"), tool_choice="auto")
    assert (new.system_prompt, new.tool_choice) == ("b", "auto")
    assert (request.system_prompt, request.tool_choice) == ("a", None)


class _no_warnings:
    def __enter__(self) -> None:
        self.before = list(warnings.filters)

    def __exit__(self, *exc: object) -> None:
        assert list(warnings.filters) == self.before
