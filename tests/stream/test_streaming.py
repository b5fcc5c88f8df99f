"""stream/astream: "updates" (named after hook nodes), "messages", "values" and "custom"."""

from __future__ import annotations

from typing import Any

import pytest
from harness import Driver, StreamingScriptedModel, contents, tool_calls
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt
from support import hi, lookup

from funcware import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
    after_agent,
    after_model,
    before_agent,
    before_model,
    create_agent,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.testing import ScriptedChatModel


def script() -> list[Any]:
    return [tool_calls(("lookup", {"key": "tide"}), text="let me check"), "high tide at noon"]


@before_agent
def opening(state: Any, runtime: Runtime[Any]) -> dict[str, Any]:
    runtime.stream_writer({"hook": "before_agent"})
    return {"messages": [HumanMessage("(be brief)")]}


@before_model
async def counting(state: Any, runtime: Runtime[Any]) -> None:
    runtime.stream_writer({"hook": "before_model", "messages": len(state["messages"])})


@wrap_model_call
def around_model(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
    request.runtime.stream_writer({"hook": "wrap_model_call"})
    return handler(request)


@wrap_model_call
async def async_around_model(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
    get_stream_writer()({"hook": "async_wrap_model_call"})
    return await handler(request)


@after_model
def checking(state: Any, runtime: Runtime[Any]) -> None:
    runtime.stream_writer({"hook": "after_model"})


@wrap_tool_call
async def around_tool(request: ToolCallRequest, handler: Any) -> Any:
    request.runtime.stream_writer({"hook": "wrap_tool_call", "tool": request.tool_call["name"]})
    return await handler(request)


@after_agent
def closing(state: Any, runtime: Runtime[Any]) -> dict[str, Any]:
    runtime.stream_writer({"hook": "after_agent"})
    return {"messages": [AIMessage("(bye)", id="bye")]}


MIDDLEWARE: list[AgentMiddleware[Any, Any, Any]] = [
    opening,
    counting,
    around_model,
    async_around_model,
    checking,
    around_tool,
    closing,
]


def agent(model: Any | None = None, **kwargs: Any) -> Any:
    return create_agent(
        model or StreamingScriptedModel(responses=script()),
        [lookup],
        middleware=MIDDLEWARE,
        **kwargs,
    )


LOOP = ["counting.before_model", "model", "checking.after_model"]


def test_updates_are_keyed_by_the_hook_node_names(driver: Driver) -> None:
    chunks = driver.stream(agent(), hi(), stream_mode="updates")

    assert [name for chunk in chunks for name in chunk] == [
        "opening.before_agent",
        *LOOP,
        "tools",
        *LOOP,
        "closing.after_agent",
    ]
    updates = [(name, update) for chunk in chunks for name, update in chunk.items()]
    assert contents(updates[0][1]["messages"]) == ["(be brief)"]
    assert updates[1] == ("counting.before_model", None)
    assert [m.text for m in updates[2][1]["messages"]] == ["let me check"]
    assert isinstance(updates[4][1]["messages"][0], ToolMessage)
    assert contents(updates[-1][1]["messages"]) == ["(bye)"]


def test_messages_stream_model_tokens_tool_results_and_hook_messages(driver: Driver) -> None:
    chunks = driver.stream(agent(), hi(), stream_mode="messages")

    by_node: dict[str, list[Any]] = {}
    for message, metadata in chunks:
        by_node.setdefault(metadata["langgraph_node"], []).append(message)
    assert set(by_node) == {"opening.before_agent", "model", "tools", "closing.after_agent"}
    tokens = by_node["model"]
    assert all(isinstance(t, AIMessageChunk) for t in tokens)
    text = "".join(t.text for t in tokens)
    assert text == "let me check" + "high tide at noon"
    assert len(tokens) > 2  # streamed word by word, not as one message
    tool_chunks = [c for t in tokens for c in t.tool_call_chunks]
    assert [c["name"] for c in tool_chunks] == ["lookup"]
    assert [m.text for m in by_node["tools"]] == ["value of tide"]
    assert [m.text for m in by_node["opening.before_agent"]] == ["(be brief)"]
    assert [m.text for m in by_node["closing.after_agent"]] == ["(bye)"]


def test_values_stream_the_whole_state_after_each_step(driver: Driver) -> None:
    states = driver.stream(agent(), hi(), stream_mode="values")
    result = driver.invoke(agent(), hi())

    # the input, then each step that wrote something (hooks returning None write nothing)
    sizes = [len(s["messages"]) for s in states]
    assert sizes == [1, 2, 3, 4, 5, 6]
    assert contents(states[-1]["messages"]) == contents(result["messages"])
    assert contents(result["messages"]) == [
        "hi",
        "(be brief)",
        "let me check",
        "value of tide",
        "high tide at noon",
        "(bye)",
    ]


def test_custom_stream_carries_what_hooks_write(driver: Driver) -> None:
    chunks = driver.stream(agent(), hi(), stream_mode="custom")

    model_step = [
        {"hook": "wrap_model_call"},
        {"hook": "async_wrap_model_call"},
        {"hook": "after_model"},
    ]
    assert chunks == [
        {"hook": "before_agent"},
        {"hook": "before_model", "messages": 2},
        *model_step,
        {"hook": "wrap_tool_call", "tool": "lookup"},
        {"hook": "before_model", "messages": 4},
        *model_step,
        {"hook": "after_agent"},
    ]


def test_several_stream_modes_at_once(driver: Driver) -> None:
    chunks = driver.stream(agent(), hi(), stream_mode=["updates", "custom"])

    modes = [mode for mode, _ in chunks]
    assert set(modes) == {"updates", "custom"}
    custom = [data["hook"] for mode, data in chunks if mode == "custom"]
    assert custom[0] == "before_agent" and custom[-1] == "after_agent"
    # a hook's custom output comes before the update of its node
    first_update = modes.index("updates")
    assert modes[:first_update] == ["custom"]
    assert list(chunks[first_update][1]) == ["opening.before_agent"]


def test_a_non_streaming_model_still_streams_its_message(driver: Driver) -> None:
    model = ScriptedChatModel(responses=script())
    chunks = driver.stream(agent(model), hi(), stream_mode="messages")

    from_model = [m for m, meta in chunks if meta["langgraph_node"] == "model"]
    assert [m.text for m in from_model] == ["let me check", "high tide at noon"]


@pytest.mark.parametrize("mode", ["updates", "values"])
def test_an_interrupt_shows_in_the_stream_and_streaming_resumes(
    driver: Driver, thread: dict[str, Any], mode: str
) -> None:
    @after_model
    def confirm(state: Any) -> None:
        if state["messages"][-1].tool_calls:
            interrupt("run the tool?")

    model = ScriptedChatModel(responses=script())
    graph = create_agent(model, [lookup], middleware=[confirm], checkpointer=InMemorySaver())

    first = driver.stream(graph, hi(), thread, stream_mode="updates")
    assert list(first[-1]) == ["__interrupt__"]
    assert first[-1]["__interrupt__"][0].value == "run the tool?"

    rest = driver.stream(graph, Command(resume=True), thread, stream_mode=mode)
    if mode == "updates":
        assert [name for chunk in rest for name in chunk] == [
            "confirm.after_model",
            "tools",
            "model",
            "confirm.after_model",
        ]
    else:
        assert contents(rest[-1]["messages"])[-1] == "high tide at noon"
    assert len(model.calls) == 2
