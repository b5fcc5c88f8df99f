"""Regressions found in review: each test pins one behaviour that was wrong once."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import warnings
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.graph import END, START, StateGraph, add_messages
from langgraph.types import Command
from support import Runner, call, calls_tool, hi
from typing_extensions import TypedDict

from funcware import after_model, create_agent, wrap_model_call, wrap_tool_call
from funcware.compose.threads.bridge import run_coroutine_sync
from funcware.testing import ScriptedChatModel

MODES = ["invoke", "ainvoke"]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(return_direct=True)
def final(x: int) -> str:
    """Answer directly."""
    return f"final {x}"


def test_many_parallel_calls_through_alternating_sync_async_layers_do_not_deadlock() -> None:
    @wrap_tool_call
    def outer(request: Any, handler: Any) -> Any:
        time.sleep(0.01)
        return handler(request)

    @wrap_tool_call
    async def middle(request: Any, handler: Any) -> Any:
        return await handler(request)

    @wrap_tool_call
    def inner(request: Any, handler: Any) -> Any:
        return handler(request)

    count = 80  # more than any fixed-size bridge pool of 64 could hold
    model = ScriptedChatModel(
        responses=[
            calls_tool(*(call("add", {"a": i, "b": 1}, f"c{i}") for i in range(count))),
            "ok",
        ]
    )
    agent = create_agent(model, [add], middleware=[outer, middle, inner])

    async def run() -> Any:
        return await asyncio.wait_for(agent.ainvoke(hi()), timeout=60)

    result = asyncio.run(run())
    assert sum(isinstance(m, ToolMessage) for m in result["messages"]) == count


class Parent(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    active_agent: str


def _run_in_parent(inner: Any, other_reply: str) -> Any:
    """Run ``inner`` as node "first" of a parent graph whose node "other" answers."""
    graph = StateGraph(Parent)
    graph.add_node("first", inner)
    graph.add_node("other", lambda state: {"messages": [AIMessage(other_reply)]})
    graph.add_edge(START, "first")
    graph.add_edge("first", END)
    graph.add_edge("other", END)
    return graph.compile().invoke({"messages": [HumanMessage("hi")], "active_agent": "first"})


@tool
def handoff(tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
    """Hand the conversation to the other agent."""
    reply = ToolMessage("handed off", tool_call_id=tool_call_id)
    return Command(
        graph=Command.PARENT, goto="other", update={"messages": [reply], "active_agent": "other"}
    )


@pytest.mark.parametrize("with_wrap", [False, True])
def test_a_handoff_command_to_the_parent_graph_is_not_checked_against_this_agent(
    with_wrap: bool,
) -> None:
    @wrap_tool_call
    def log(request: Any, handler: Any) -> Any:
        return handler(request)

    @after_model
    def noop(state: Any) -> None:
        return None

    model = ScriptedChatModel(responses=[calls_tool(call("handoff", {}, "h1")), "unused"])
    inner = create_agent(model, [handoff], middleware=[log] if with_wrap else [noop])
    result = _run_in_parent(inner, "other agent here")
    assert result["active_agent"] == "other"
    assert result["messages"][-1].content == "other agent here"


@pytest.mark.parametrize("mode", MODES)
def test_invalid_tool_calls_get_an_error_reply_before_the_next_model_call(mode: str) -> None:
    broken = AIMessage(
        "",
        tool_calls=[call("add", {"a": 1, "b": 1}, "good")],
        invalid_tool_calls=[
            {"name": "add", "args": "{oops", "id": "bad", "error": "x", "type": "invalid_tool_call"}
        ],
    )
    model = ScriptedChatModel(responses=[broken, "after"])
    result = Runner(mode)(create_agent(model, [add]))

    kinds = [(m.type, getattr(m, "tool_call_id", None)) for m in result["messages"]]
    assert kinds == [("human", None), ("ai", None), ("tool", "bad"), ("tool", "good"), ("ai", None)]
    reply = result["messages"][2]
    assert reply.status == "error" and "malformed" in reply.content
    second_call = model.calls[1].messages
    assert [m.type for m in second_call] == ["human", "ai", "tool", "tool"]


@pytest.mark.parametrize("mode", MODES)
def test_return_direct_is_read_from_what_ran(mode: str) -> None:
    @wrap_tool_call
    def redirect(request: Any, handler: Any) -> Any:
        if request.tool_call["name"] == "add":  # answer with the direct tool instead
            new_call = {**request.tool_call, "name": "final", "args": {"x": 5}}
            return handler(request.override(tool_call=new_call, tool=final))
        return handler(request)

    model = ScriptedChatModel(responses=[calls_tool(call("add", {"a": 1, "b": 1}, "r1"))])
    result = Runner(mode)(create_agent(model, [add, final], middleware=[redirect]))
    assert [m.content for m in result["messages"]][-1] == "final 5"
    assert len(model.calls) == 1


@pytest.mark.parametrize("mode", MODES)
def test_editing_request_state_in_place_does_not_touch_the_agent_state(mode: str) -> None:
    @wrap_model_call
    def meddle(request: Any, handler: Any) -> Any:
        request.state["messages"].append(HumanMessage("smuggled"))
        return handler(request)

    result = Runner(mode)(create_agent(ScriptedChatModel(responses=["ok"]), middleware=[meddle]))
    assert [m.content for m in result["messages"]] == ["hi", "ok"]


def test_private_event_loops_of_finished_threads_are_closed() -> None:
    async def answer() -> int:
        return 42

    def work() -> None:
        assert run_coroutine_sync(answer()) == 42

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        threads = [threading.Thread(target=work) for _ in range(5)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]


def test_a_node_hook_may_hand_off_to_the_parent_graph() -> None:
    @after_model
    def escalate(state: Any) -> Any:
        return Command(graph=Command.PARENT, goto="other", update={"active_agent": "human"})

    inner = create_agent(ScriptedChatModel(responses=["unsure"]), middleware=[escalate])
    result = _run_in_parent(inner, "a human took over")
    assert result["active_agent"] == "human"
    assert result["messages"][-1].content == "a human took over"
