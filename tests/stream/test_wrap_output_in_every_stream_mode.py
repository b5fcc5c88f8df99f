"""What a wrap produces reaches every stream mode, and invalid tool calls."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from harness import contents, tool_calls
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.types import Command
from support import hi, lookup
from typing_extensions import NotRequired

from funcware import (
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    after_model,
    create_agent,
    wrap_model_call,
)
from funcware.testing import ScriptedChatModel


class Counted(AgentState):
    count: NotRequired[int]
    log: NotRequired[Annotated[list[str], operator.add]]


@wrap_model_call(state_schema=Counted)
def cached(request: ModelRequest[Any], handler: Any) -> ExtendedModelResponse[Any]:
    """Answers from a cache without calling the model, and notes the hit."""
    return ExtendedModelResponse(
        model_response=ModelResponse(result=[AIMessage("from the cache")]),
        command=Command(update={"messages": [HumanMessage("cache hit")], "count": 1}),
    )


@wrap_model_call
def fallback(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any] | AIMessage:
    try:
        return handler(request)
    except RuntimeError:
        return AIMessage("the fallback answer")


@wrap_model_call(state_schema=Counted)
def logged(request: ModelRequest[Any], handler: Any) -> ExtendedModelResponse[Any]:
    response = handler(request)
    return ExtendedModelResponse(
        model_response=response,
        command=Command(update={"log": [f"saw {len(request.messages)}"], "count": 2}),
    )


def streamed(agent: Any) -> list[tuple[str, str, str]]:
    return [
        (message.type, message.text, metadata["langgraph_node"])
        for message, metadata in agent.stream(hi(), stream_mode="messages")
    ]


def test_a_short_circuited_answer_with_a_command_is_streamed() -> None:
    agent = create_agent(ScriptedChatModel(responses=[]), middleware=[cached])
    assert streamed(agent) == [("ai", "from the cache", "model"), ("human", "cache hit", "model")]
    result = create_agent(ScriptedChatModel(responses=[]), middleware=[cached]).invoke(hi())
    assert contents(result["messages"]) == ["hi", "from the cache", "cache hit"]
    assert result["count"] == 1


def test_a_fallback_answer_inside_a_commanding_layer_is_streamed() -> None:
    def agent() -> Any:
        model = ScriptedChatModel(responses=[RuntimeError("down")])
        return create_agent(model, middleware=[logged, fallback])

    assert streamed(agent()) == [("ai", "the fallback answer", "model")]
    result = agent().invoke(hi())
    assert contents(result["messages"]) == ["hi", "the fallback answer"]
    assert (result["log"], result["count"]) == (["saw 1"], 2)


def test_updates_show_the_model_nodes_writes_as_one_update() -> None:
    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[logged])
    (chunk,) = agent.stream(hi(), stream_mode="updates")
    update = chunk["model"]
    assert contents(update["messages"]) == ["ok"]
    assert (update["log"], update["count"]) == (["saw 1"], 2)


def invalid_call() -> AIMessage:
    return AIMessage(
        "",
        invalid_tool_calls=[
            {
                "name": "lookup",
                "args": "{oops",
                "id": "bad1",
                "error": "x",
                "type": "invalid_tool_call",
            }
        ],
    )


@after_model(can_jump_to=["model"])
def retry_once(state: Any) -> dict[str, Any] | None:
    last = state["messages"][-1]
    if isinstance(last, AIMessage) and last.invalid_tool_calls:
        return {"jump_to": "model"}
    return None


def test_an_invalid_tool_call_gets_langchains_reply_and_the_request_keeps_the_old_state() -> None:
    seen: list[tuple[list[str], list[str]]] = []

    @wrap_model_call
    def watch(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any] | AIMessage:
        seen.append(
            (
                [m.type for m in request.messages],
                [m.type for m in request.state["messages"]],
            )
        )
        return handler(request)

    def agent() -> Any:
        model = ScriptedChatModel(responses=[invalid_call(), "fixed"])
        return create_agent(model, [lookup], middleware=[retry_once, watch])

    result = agent().invoke(hi())
    reply = result["messages"][2]
    assert isinstance(reply, ToolMessage)
    assert reply.content == (
        "Tool call lookup with id bad1 could not be executed - arguments were malformed "
        "or truncated."
    )
    assert (reply.tool_call_id, reply.status, reply.name) == ("bad1", "error", "lookup")
    assert seen[1] == (["human", "ai", "tool"], ["human", "ai"])
    # the repaired history is what the state keeps, and the reply is streamed
    assert contents(result["messages"])[-1] == "fixed"
    assert ("tool", reply.content, "model") in streamed(agent())


def test_the_repaired_history_is_streamed_with_the_layers_writes() -> None:
    def agent() -> Any:
        model = ScriptedChatModel(responses=[invalid_call(), "fixed"])
        return create_agent(model, [lookup], middleware=[retry_once, logged])

    # as LangChain's: the model's answers as they come, then the node's new messages
    # (the history is rewritten through a RemoveMessage, which the stream shows too)
    assert [m[0] for m in streamed(agent())] == ["ai", "ai", "remove", "tool"]
    result = agent().invoke(hi())
    assert [m.type for m in result["messages"]] == ["human", "ai", "tool", "ai"]
    assert result["log"] == ["saw 1", "saw 3"]


def test_values_stream_ends_with_the_invoke_result() -> None:
    def agent() -> Any:
        model = ScriptedChatModel(responses=[tool_calls(("lookup", {"key": "k"})), "done"])
        return create_agent(model, [lookup], middleware=[logged])

    final = list(agent().stream(hi(), stream_mode="values"))[-1]
    result = agent().invoke(hi())

    def shape(messages: list[BaseMessage]) -> list[tuple[str, str]]:
        return [(m.type, m.text) for m in messages]

    assert shape(final["messages"]) == shape(result["messages"])
    assert final["log"] == result["log"] == ["saw 1", "saw 3"]
