"""A wrap layer that streams the agent's model itself streams as on LangChain 1.5.

The same eager-streaming middleware class (LangChain's base, so both libraries take it)
delivers the same tokens, from the same node, in funcware's stream as in LangChain's.

Needs the ``langchain`` extra; skipped without it, failed when ``FUNCWARE_REQUIRE_LANGCHAIN=1``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from support import require_langchain

import funcware
from funcware.testing import StreamingScriptedChatModel

lc_agents = require_langchain("langchain.agents")
lc_mw = require_langchain("langchain.agents.middleware")


class StreamsTheAgentModel(lc_mw.AgentMiddleware):  # type: ignore[misc, name-defined]
    """Eager tool calling, as published: stream the request's model, act on the chunks."""

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        gathered: Any = None
        for chunk in request.model.stream(request.messages):
            gathered = chunk if gathered is None else gathered + chunk
        return lc_mw.ModelResponse(result=[AIMessage(content=gathered.content, id=gathered.id)])

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        gathered: Any = None
        async for chunk in request.model.astream(request.messages):
            gathered = chunk if gathered is None else gathered + chunk
        return lc_mw.ModelResponse(result=[AIMessage(content=gathered.content, id=gathered.id)])


def stream_of(builder: Any, mode: str) -> list[tuple[str, Any]]:
    model = StreamingScriptedChatModel(
        responses=[AIMessage("eager tokens arrive one by one")], chunk_size=5
    )
    agent = builder(model, [], middleware=[StreamsTheAgentModel()])
    inputs = {"messages": [HumanMessage("hi")]}
    if mode == "sync":
        pairs = list(agent.stream(inputs, stream_mode="messages"))
    else:

        async def collect() -> list[Any]:
            return [pair async for pair in agent.astream(inputs, stream_mode="messages")]

        pairs = asyncio.run(collect())
    return [(str(chunk.content), meta.get("langgraph_node")) for chunk, meta in pairs]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_eager_streaming_of_the_agents_model_matches_langchains_stream(mode: str) -> None:
    ours = stream_of(funcware.create_agent, mode)
    theirs = stream_of(lc_agents.create_agent, mode)
    assert ours == theirs
    assert len([text for text, _ in ours if text]) > 1
