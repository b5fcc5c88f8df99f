"""What reaches the user's ``messages`` stream from model calls that middleware makes.

- A model a ``wrap_tool_call`` calls itself (a grader) is hidden, as in a
  ``wrap_model_call`` or a node hook; the tool's own run is not.
- A ``wrap_model_call`` that streams the agent's model itself (eager tool calling)
  streams it token by token, as the agent's own call would.
- ``stream_internal_calls=True`` on a wrap layer shows that layer's own model calls,
  and only its own: layers inside it stay hidden unless they opt in too.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from funcware import (
    AgentMiddleware,
    ModelResponse,
    create_agent,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.testing import StreamingScriptedChatModel


def hi() -> dict[str, Any]:
    return {"messages": [HumanMessage("hi")]}


def grader() -> StreamingScriptedChatModel:
    return StreamingScriptedChatModel(responses=[AIMessage("graded secretly")] * 4)


def streamed(agent: Any, *, mode: str = "sync") -> list[str]:
    """The text of every token the messages stream delivers."""
    if mode == "sync":
        return [str(c.content) for c, _ in agent.stream(hi(), stream_mode="messages")]

    async def collect() -> list[str]:
        return [str(c.content) async for c, _ in agent.astream(hi(), stream_mode="messages")]

    return asyncio.run(collect())


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def tool_calling_model() -> StreamingScriptedChatModel:
    return StreamingScriptedChatModel(
        responses=[
            AIMessage("", tool_calls=[{"name": "lookup", "args": {"key": "k"}, "id": "c1"}]),
            AIMessage("all done"),
        ]
    )


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_model_a_tool_wrap_streams_itself_stays_out_of_the_stream(mode: str) -> None:
    side = grader()

    class GradesTools(AgentMiddleware):
        def wrap_tool_call(self, request: Any, handler: Any) -> Any:
            "".join(str(c.content) for c in side.stream("grade this call"))
            return handler(request)

        async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
            async for _ in side.astream("grade this call"):
                pass
            return await handler(request)

    agent = create_agent(tool_calling_model(), [lookup], middleware=[GradesTools()])
    text = "".join(streamed(agent, mode=mode))
    assert "graded" not in text and "secretly" not in text
    assert "value of k" in text  # the tool's own result still streams
    assert "all done" in text


def test_a_tool_wrap_that_opts_in_shows_its_models_tokens() -> None:
    side = grader()

    class GradesInTheOpen(AgentMiddleware):
        stream_internal_calls = True

        def wrap_tool_call(self, request: Any, handler: Any) -> Any:
            for _ in side.stream("grade this call"):
                pass
            return handler(request)

    agent = create_agent(tool_calling_model(), [lookup], middleware=[GradesInTheOpen()])
    assert "graded secretly" in "".join(streamed(agent))


def test_the_tool_wrap_decorator_takes_the_opt_in_too() -> None:
    side = grader()

    @wrap_tool_call(stream_internal_calls=True)
    def grades_tools(request: Any, handler: Any) -> Any:
        for _ in side.stream("grade this call"):
            pass
        return handler(request)

    agent = create_agent(tool_calling_model(), [lookup], middleware=[grades_tools])
    assert "graded secretly" in "".join(streamed(agent))


class StreamsTheAgentModel(AgentMiddleware):
    """Eager tool calling, as published: stream the request's model, act on the chunks."""

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        gathered: Any = None
        for chunk in request.model.stream(request.messages):
            gathered = chunk if gathered is None else gathered + chunk
        return ModelResponse(result=[AIMessage(content=gathered.content, id=gathered.id)])

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        gathered: Any = None
        async for chunk in request.model.astream(request.messages):
            gathered = chunk if gathered is None else gathered + chunk
        return ModelResponse(result=[AIMessage(content=gathered.content, id=gathered.id)])


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_wrap_that_streams_the_agents_model_streams_token_by_token(mode: str) -> None:
    model = StreamingScriptedChatModel(responses=[AIMessage("one two three four")], chunk_size=4)
    agent = create_agent(model, [], middleware=[StreamsTheAgentModel()])
    tokens = [t for t in streamed(agent, mode=mode) if t]
    assert len(tokens) > 1, tokens  # tokens, not one whole message
    assert "".join(tokens) == "one two three four"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_stream_internal_calls_on_a_model_wrap_shows_its_own_calls_only(mode: str) -> None:
    shown, hidden = (
        StreamingScriptedChatModel(responses=[AIMessage("shown words")] * 2),
        StreamingScriptedChatModel(responses=[AIMessage("hidden words")] * 2),
    )

    @wrap_model_call(stream_internal_calls=True)
    async def outer(request: Any, handler: Any) -> Any:
        async for _ in shown.astream("x"):
            pass
        return await handler(request)

    @wrap_model_call
    def inner(request: Any, handler: Any) -> Any:
        for _ in hidden.stream("x"):
            pass
        return handler(request)

    agent = create_agent(
        StreamingScriptedChatModel(responses=[AIMessage("the answer")]),
        [],
        middleware=[outer, inner],
    )
    text = "".join(streamed(agent, mode=mode))
    assert "shown words" in text
    assert "hidden" not in text
    assert text.endswith("the answer")


def test_without_the_opt_in_a_model_wraps_own_calls_stay_hidden() -> None:
    side = grader()

    @wrap_model_call
    def grades(request: Any, handler: Any) -> Any:
        for _ in side.stream("x"):
            pass
        return handler(request)

    agent = create_agent(
        StreamingScriptedChatModel(responses=[AIMessage("the answer")]), [], middleware=[grades]
    )
    assert "".join(streamed(agent)) == "the answer"


def test_events_see_the_agent_models_run_started_once_under_an_eager_layer() -> None:
    model = StreamingScriptedChatModel(responses=[AIMessage("a b c d")], chunk_size=2)
    agent = create_agent(model, [], middleware=[StreamsTheAgentModel()])

    async def kinds() -> list[str]:
        return [e["event"] async for e in agent.astream_events(hi(), version="v2")]

    events = asyncio.run(kinds())
    assert events.count("on_chat_model_start") == 1
    assert events.count("on_chat_model_stream") >= 2
