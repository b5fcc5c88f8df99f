"""create_agent() end to end, tools: the tool loop, tool wraps, dict-schema and middleware tools.

Every test runs the agent both ways, ``invoke`` and ``ainvoke`` (the ``run`` fixture),
against a :class:`ScriptedChatModel`.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from support import Runner, call, calls_tool

from funcware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ToolCallRequest,
    after_agent,
    create_agent,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.testing import ScriptedChatModel

WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city."}},
            "required": ["city"],
        },
    },
}


def tool_messages(messages: list[BaseMessage]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def make_tools(trace: list[str]) -> list[BaseTool]:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        trace.append(f"add({a}, {b})")
        return a + b

    @tool
    def mul(a: int, b: int) -> int:
        """Multiply two integers."""
        trace.append(f"mul({a}, {b})")
        return a * b

    return [add, mul]


def tagging(name: str, trace: list[str], is_async: bool) -> AgentMiddleware[Any, Any, Any]:
    """A wrap_tool_call tracing ``name> id`` / ``<name id`` and tagging the result's content."""

    def tag(result: Any) -> Any:
        assert isinstance(result, ToolMessage)
        return result.model_copy(update={"content": f"{result.content} [{name}]"})

    if is_async:

        async def alayer(request: ToolCallRequest, handler: Any) -> Any:
            trace.append(f"{name}> {request.tool_call['id']}")
            result = await handler(request)
            trace.append(f"<{name} {request.tool_call['id']}")
            return tag(result)

        return wrap_tool_call(name=name)(alayer)

    def layer(request: ToolCallRequest, handler: Any) -> Any:
        trace.append(f"{name}> {request.tool_call['id']}")
        result = handler(request)
        trace.append(f"<{name} {request.tool_call['id']}")
        return tag(result)

    return wrap_tool_call(name=name)(layer)


def nested(call_id: str, executed: str) -> list[str]:
    return [f"w1> {call_id}", f"w2> {call_id}", executed, f"<w2 {call_id}", f"<w1 {call_id}"]


# -- the tool loop -------------------------------------------------------------------------


def test_three_sequential_tool_calls_through_two_tool_wraps(run: Runner) -> None:
    trace: list[str] = []
    model = ScriptedChatModel(
        responses=[
            calls_tool(call("add", {"a": 1, "b": 2}, "c1")),
            calls_tool(call("mul", {"a": 3, "b": 4}, "c2")),
            calls_tool(call("add", {"a": 5, "b": 6}, "c3")),
            "all done",
        ]
    )
    wraps = [tagging("w1", trace, run.is_async), tagging("w2", trace, run.is_async)]
    agent = create_agent(model, make_tools(trace), middleware=wraps)
    result = run(agent)

    assert trace == [
        *nested("c1", "add(1, 2)"),
        *nested("c2", "mul(3, 4)"),
        *nested("c3", "add(5, 6)"),
    ]
    assert [(m.tool_call_id, m.name, m.content) for m in tool_messages(result["messages"])] == [
        ("c1", "add", "3 [w2] [w1]"),
        ("c2", "mul", "12 [w2] [w1]"),
        ("c3", "add", "11 [w2] [w1]"),
    ]
    assert [m.type for m in result["messages"]] == ["human", *["ai", "tool"] * 3, "ai"]
    assert result["messages"][-1].content == "all done"
    assert len(model.calls) == 4
    # Each turn the model sees everything so far, including the wrapped tool results.
    assert [len(c.messages) for c in model.calls] == [1, 3, 5, 7]
    assert model.calls[3].messages[-1].content == "11 [w2] [w1]"
    assert all(c.tool_names == ["add", "mul"] for c in model.calls)


def test_two_parallel_tool_calls_through_two_tool_wraps(run: Runner) -> None:
    trace: list[str] = []
    model = ScriptedChatModel(
        responses=[
            calls_tool(call("add", {"a": 2, "b": 3}, "p1"), call("mul", {"a": 2, "b": 3}, "p2")),
            "both done",
        ]
    )
    wraps = [tagging("w1", trace, run.is_async), tagging("w2", trace, run.is_async)]
    agent = create_agent(model, make_tools(trace), middleware=wraps)
    result = run(agent)

    assert sorted(trace) == sorted([*nested("p1", "add(2, 3)"), *nested("p2", "mul(2, 3)")])
    for call_id, executed in (("p1", "add(2, 3)"), ("p2", "mul(2, 3)")):
        per_call = [t for t in trace if t.endswith(call_id) or t == executed]
        assert per_call == nested(call_id, executed)
    assert [(m.tool_call_id, m.name, m.content) for m in tool_messages(result["messages"])] == [
        ("p1", "add", "5 [w2] [w1]"),
        ("p2", "mul", "6 [w2] [w1]"),
    ]
    assert [m.type for m in result["messages"]] == ["human", "ai", "tool", "tool", "ai"]
    assert len(model.calls) == 2
    assert [m.type for m in model.calls[1].messages] == ["human", "ai", "tool", "tool"]


def test_sync_and_async_tool_wraps_mix_in_one_onion(run: Runner) -> None:
    trace: list[str] = []
    model = ScriptedChatModel(
        responses=[calls_tool(call("add", {"a": 1, "b": 1}, "c1")), "done"],
    )
    wraps = [tagging("w1", trace, is_async=True), tagging("w2", trace, is_async=False)]
    result = run(create_agent(model, make_tools(trace), middleware=wraps))
    assert trace == nested("c1", "add(1, 1)")
    assert tool_messages(result["messages"])[0].content == "2 [w2] [w1]"


def test_return_direct_tool_ends_the_loop_and_runs_after_agent(run: Runner) -> None:
    trace: list[str] = []

    @tool(return_direct=True)
    def answer(text: str) -> str:
        """Give the final answer."""
        return f"answer: {text}"

    @after_agent
    def audit(state: AgentState[Any]) -> None:
        trace.append("after_agent audit")

    model = ScriptedChatModel(responses=[calls_tool(call("answer", {"text": "42"}, "r1"))])
    result = run(create_agent(model, [answer], middleware=[audit]))
    assert [m.type for m in result["messages"]] == ["human", "ai", "tool"]
    assert result["messages"][-1].content == "answer: 42"
    assert trace == ["after_agent audit"]
    assert len(model.calls) == 1


# -- dict-schema tools ---------------------------------------------------------------------


def weather_server(served: list[str]) -> AgentMiddleware[Any, Any, Any]:
    @wrap_tool_call
    def serve_weather(request: ToolCallRequest, handler: Any) -> Any:
        if request.tool_call["name"] != "get_weather":
            return handler(request)
        assert request.tool is None  # a dict tool has no implementation to hand over
        city = request.tool_call["args"]["city"]
        served.append(city)
        return ToolMessage(
            content=f"Sunny in {city}",
            name="get_weather",
            tool_call_id=request.tool_call["id"],
        )

    return serve_weather


def test_dict_schema_tool_served_by_wrap_tool_call(run: Runner) -> None:
    served: list[str] = []
    model = ScriptedChatModel(
        responses=[calls_tool(call("get_weather", {"city": "Paris"}, "w1")), "Take sunglasses."]
    )
    agent = create_agent(model, tools=[WEATHER], middleware=[weather_server(served)])
    result = run(agent)

    assert model.calls[0].tool_names == ["get_weather"]
    assert model.calls[0].tools == [WEATHER]  # bound as given
    assert served == ["Paris"]
    [reply] = tool_messages(result["messages"])
    assert (reply.tool_call_id, reply.name, reply.content, reply.status) == (
        "w1",
        "get_weather",
        "Sunny in Paris",
        "success",
    )
    assert result["messages"][-1].content == "Take sunglasses."
    assert model.calls[1].messages[-1].content == "Sunny in Paris"


def test_dict_schema_tool_next_to_a_function_tool(run: Runner) -> None:
    served: list[str] = []
    trace: list[str] = []
    model = ScriptedChatModel(
        responses=[
            calls_tool(
                call("get_weather", {"city": "Oslo"}, "w1"), call("add", {"a": 1, "b": 2}, "a1")
            ),
            "done",
        ]
    )
    tools = [*make_tools(trace)[:1], WEATHER]
    agent = create_agent(model, tools=tools, middleware=[weather_server(served)])
    result = run(agent)

    assert model.calls[0].tool_names == ["add", "get_weather"]
    assert served == ["Oslo"]
    assert trace == ["add(1, 2)"]
    assert {m.tool_call_id: m.content for m in tool_messages(result["messages"])} == {
        "w1": "Sunny in Oslo",
        "a1": "3",
    }


@pytest.mark.parametrize("with_wrap", [False, True], ids=["no-wrap", "pass-through-wrap"])
def test_unserved_dict_schema_tool_yields_an_error_tool_message(
    run: Runner, with_wrap: bool
) -> None:
    @wrap_tool_call
    def pass_through(request: ToolCallRequest, handler: Any) -> Any:
        return handler(request)

    model = ScriptedChatModel(
        responses=[calls_tool(call("get_weather", {"city": "Rome"}, "w1")), "Sorry."]
    )
    middleware = [pass_through] if with_wrap else []
    result = run(create_agent(model, tools=[WEATHER], middleware=middleware))

    [reply] = tool_messages(result["messages"])
    assert reply.status == "error"
    assert reply.tool_call_id == "w1"
    assert reply.name == "get_weather"
    assert "'get_weather'" in reply.content
    assert "JSON schema" in reply.content
    assert "has no implementation" in reply.content
    assert "wrap_tool_call" in reply.content  # how to serve it
    assert "create_agent(tools=[...])" in reply.content  # or how to give it a body
    assert result["messages"][-1].content == "Sorry."
    assert model.calls[1].messages[-1] == reply


def test_call_to_a_nonexistent_tool_yields_an_error_listing_known_tools(run: Runner) -> None:
    seen: list[Any] = []

    @wrap_tool_call
    def look(request: ToolCallRequest, handler: Any) -> Any:
        seen.append(request.tool)
        return handler(request)

    model = ScriptedChatModel(
        responses=[calls_tool(call("launch_rockets", {}, "x1")), "I cannot do that."]
    )
    result = run(create_agent(model, make_tools([]), middleware=[look]))

    assert seen == [None]
    [reply] = tool_messages(result["messages"])
    assert reply.status == "error"
    assert reply.tool_call_id == "x1"
    assert "launch_rockets is not a valid tool" in reply.content
    assert "[add, mul]" in reply.content
    assert result["messages"][-1].content == "I cannot do that."


def test_call_to_a_nonexistent_tool_without_wraps(run: Runner) -> None:
    model = ScriptedChatModel(responses=[calls_tool(call("nope", {}, "n1")), "ok"])
    result = run(create_agent(model, make_tools([])))
    [reply] = tool_messages(result["messages"])
    assert reply.status == "error"
    assert "nope is not a valid tool, try one of [add, mul]" in reply.content


def test_unknown_tool_error_lists_schema_tools_too(run: Runner) -> None:
    model = ScriptedChatModel(responses=[calls_tool(call("nope", {}, "n1")), "ok"])
    result = run(create_agent(model, [*make_tools([]), WEATHER]))
    [reply] = tool_messages(result["messages"])
    assert reply.status == "error"
    assert "nope is not a valid tool, try one of [add, mul, get_weather]" in reply.content


# -- tools brought by middleware -------------------------------------------------------------


def test_middleware_tools_are_bound_and_executed(run: Runner) -> None:
    trace: list[str] = []
    add, mul = make_tools(trace)

    class Adds(AgentMiddleware[Any, Any, Any]):
        tools = (add,)

    @wrap_model_call(tools=[mul])
    def passthrough(request: ModelRequest[Any], handler: Any) -> Any:
        return handler(request)

    model = ScriptedChatModel(
        responses=[
            calls_tool(call("add", {"a": 1, "b": 2}, "a1"), call("mul", {"a": 3, "b": 3}, "m1")),
            "done",
        ]
    )
    result = run(create_agent(model, middleware=[Adds(), passthrough]))

    assert model.calls[0].tool_names == ["add", "mul"]
    assert sorted(trace) == ["add(1, 2)", "mul(3, 3)"]
    assert {m.tool_call_id: m.content for m in tool_messages(result["messages"])} == {
        "a1": "3",
        "m1": "9",
    }


def test_middleware_brings_a_dict_tool_and_serves_it(run: Runner) -> None:
    @wrap_tool_call(tools=[WEATHER])
    def weather(request: ToolCallRequest, handler: Any) -> Any:
        if request.tool_call["name"] == "get_weather":
            return ToolMessage(
                content="Rainy", name="get_weather", tool_call_id=request.tool_call["id"]
            )
        return handler(request)

    model = ScriptedChatModel(
        responses=[calls_tool(call("get_weather", {"city": "Bergen"}, "w1")), "Umbrella."]
    )
    trace: list[str] = []
    result = run(create_agent(model, make_tools(trace), middleware=[weather]))

    assert model.calls[0].tool_names == ["add", "mul", "get_weather"]
    assert [m.content for m in tool_messages(result["messages"])] == ["Rainy"]
    assert trace == []


def test_tool_added_per_call_by_a_wrap_is_served_by_a_tool_wrap(run: Runner) -> None:
    trace: list[str] = []
    [secret] = make_tools(trace)[1:]

    @wrap_model_call
    def offer(request: ModelRequest[Any], handler: Any) -> Any:
        return handler(request.override(tools=[*request.tools, secret]))

    @wrap_tool_call
    def serve(request: ToolCallRequest, handler: Any) -> Any:
        if request.tool_call["name"] == secret.name:
            return handler(request.override(tool=secret))
        return handler(request)

    model = ScriptedChatModel(responses=[calls_tool(call("mul", {"a": 6, "b": 7}, "s1")), "done"])
    result = run(create_agent(model, middleware=[offer, serve]))

    assert model.calls[0].tool_names == ["mul"]
    assert trace == ["mul(6, 7)"]
    assert [m.content for m in tool_messages(result["messages"])] == ["42"]


def test_tool_wrap_answering_without_the_tool_skips_execution(run: Runner) -> None:
    trace: list[str] = []

    @wrap_tool_call
    def deny(request: ToolCallRequest, handler: Any) -> Any:
        return ToolMessage(
            content="denied", tool_call_id=request.tool_call["id"], name="add", status="error"
        )

    model = ScriptedChatModel(responses=[calls_tool(call("add", {"a": 1, "b": 1}, "d1")), "ok"])
    result = run(create_agent(model, make_tools(trace), middleware=[deny]))
    assert trace == []
    [reply] = tool_messages(result["messages"])
    assert (reply.content, reply.status) == ("denied", "error")


MODES = ["invoke", "ainvoke"]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(return_direct=True)
def final(x: int) -> str:
    """Answer directly."""
    return f"final {x}"


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
