"""Stream guards and LangChain: ``to_langchain`` warns that ``stream=`` is not applied there,
and LangChain middleware in a funcware agent with a buffering guard stream what the state keeps."""

from __future__ import annotations

import re
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from support import require_langchain

from funcware import AgentState, after_model, create_agent
from funcware.testing import StreamingScriptedChatModel

lc_middleware = require_langchain("langchain.agents.middleware")

EMAIL = re.compile(r"[a-z.]+@[a-z]+\.[a-z]+")


@after_model(stream="buffer")
def mask(state: AgentState) -> dict[str, Any] | None:
    last = state["messages"][-1]
    if isinstance(last, AIMessage) and EMAIL.search(last.text):
        return {"messages": [last.model_copy(update={"content": EMAIL.sub("[x]", last.text)})]}
    return None


def test_to_langchain_warns_that_the_stream_policy_is_not_applied() -> None:
    from funcware.interop import to_langchain

    with pytest.warns(UserWarning, match=r"middleware 'mask' .*stream='buffer'.*does not apply"):
        to_langchain(mask)


def test_langchain_middleware_beside_a_buffering_guard() -> None:
    model = StreamingScriptedChatModel(responses=["ask bob@mail.com"], chunk_size=3)
    agent = create_agent(
        model, [], middleware=[lc_middleware.ModelCallLimitMiddleware(run_limit=3), mask]
    )
    chunks = [
        c.text
        for c, _ in agent.stream({"messages": [HumanMessage("hi")]}, stream_mode="messages")
        if isinstance(c, AIMessageChunk) and c.text
    ]
    assert chunks == ["ask [x]"]
