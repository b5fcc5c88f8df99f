"""create_agent() end to end: hook order, jumps, graph, prompts, commands, retries, streams.

Every test runs the agent both ways, ``invoke`` and ``ainvoke`` (the ``run`` fixture),
against a :class:`ScriptedChatModel`. Tool execution is covered in ``test_agent_tools.py``.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import BaseTool, tool
from langgraph.errors import GraphRecursionError
from langgraph.types import Command
from support import Runner, call, calls_tool, hi
from typing_extensions import NotRequired

from funcware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelCallResult,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
    after_agent,
    after_model,
    before_agent,
    before_model,
    compose,
    create_agent,
    dynamic_prompt,
    hook_config,
    wrap_model_call,
)
from funcware.errors import DoubleCallWarning, InvalidJumpError
from funcware.testing import ScriptedChatModel

HERE = os.path.basename(__file__)


# -- running an agent both ways ------------------------------------------------------


# -- helpers ---------------------------------------------------------------------------


def contents(messages: list[BaseMessage]) -> list[tuple[str, Any]]:
    return [(m.type, m.content) for m in messages]


class ModelStarts(BaseCallbackHandler):
    """Writes ``"model"`` to a trace each time the chat model is called."""

    run_inline = True

    def __init__(self, trace: list[str]) -> None:
        self.trace = trace

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.trace.append("model")


def traced_model(trace: list[str], responses: list[Any]) -> ScriptedChatModel:
    return ScriptedChatModel(responses=responses, callbacks=[ModelStarts(trace)])


def make_adder(trace: list[str]) -> BaseTool:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        trace.append("add")
        return a + b

    return add


class Tracer(AgentMiddleware[Any, Any, Any]):
    """Every hook, sync and async, writing its name (and its flavour) to a shared trace."""

    def __init__(self, name: str, trace: list[str], flavours: set[str] | None = None) -> None:
        self.name = name
        self.trace = trace
        self.flavours = flavours if flavours is not None else set()

    def _node(self, hook: str, flavour: str) -> None:
        self.flavours.add(flavour)
        self.trace.append(f"{hook} {self.name}")

    def before_agent(self, state: Any, runtime: Any) -> None:
        self._node("before_agent", "sync")

    async def abefore_agent(self, state: Any, runtime: Any) -> None:
        self._node("before_agent", "async")

    def before_model(self, state: Any, runtime: Any) -> None:
        self._node("before_model", "sync")

    async def abefore_model(self, state: Any, runtime: Any) -> None:
        self._node("before_model", "async")

    def after_model(self, state: Any, runtime: Any) -> None:
        self._node("after_model", "sync")

    async def aafter_model(self, state: Any, runtime: Any) -> None:
        self._node("after_model", "async")

    def after_agent(self, state: Any, runtime: Any) -> None:
        self._node("after_agent", "sync")

    async def aafter_agent(self, state: Any, runtime: Any) -> None:
        self._node("after_agent", "async")

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse]
    ) -> ModelCallResult:
        self.flavours.add("sync")
        self.trace.append(f"{self.name}>")
        response = handler(request)
        self.trace.append(f"<{self.name}")
        return response

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse]],
    ) -> ModelCallResult:
        self.flavours.add("async")
        self.trace.append(f"{self.name}>")
        response = await handler(request)
        self.trace.append(f"<{self.name}")
        return response

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[..., Any]) -> Any:
        self.flavours.add("sync")
        self.trace.append(f"tool {self.name}>")
        result = handler(request)
        self.trace.append(f"tool <{self.name}")
        return result

    async def awrap_tool_call(self, request: ToolCallRequest, handler: Callable[..., Any]) -> Any:
        self.flavours.add("async")
        self.trace.append(f"tool {self.name}>")
        result = await handler(request)
        self.trace.append(f"tool <{self.name}")
        return result


class Audit(AgentMiddleware[Any, Any, Any]):
    """Records before_agent and after_agent only (to see that after_agent runs after a jump)."""

    def __init__(self, name: str, trace: list[str]) -> None:
        self.name = name
        self.trace = trace

    def before_agent(self, state: Any, runtime: Any) -> None:
        self.trace.append(f"before_agent {self.name}")

    def after_agent(self, state: Any, runtime: Any) -> None:
        self.trace.append(f"after_agent {self.name}")


# -- hook order --------------------------------------------------------------------------


def test_hook_order_with_three_middleware_across_a_tool_loop(run: Runner) -> None:
    trace: list[str] = []
    flavours: set[str] = set()
    names = ["m1", "m2", "m3"]
    middleware = [Tracer(n, trace, flavours) for n in names]
    model = traced_model(trace, [calls_tool(call("add", {"a": 1, "b": 2}, "c1")), "done"])
    agent = create_agent(model, [make_adder(trace)], middleware=middleware)

    result = run(agent)

    turn = [
        *(f"before_model {n}" for n in names),
        "m1>",
        "m2>",
        "m3>",
        "model",
        "<m3",
        "<m2",
        "<m1",
        *(f"after_model {n}" for n in reversed(names)),
    ]
    tool_call = ["tool m1>", "tool m2>", "tool m3>", "add", "tool <m3", "tool <m2", "tool <m1"]
    assert trace == [
        *(f"before_agent {n}" for n in names),
        *turn,
        *tool_call,
        *turn,
        *(f"after_agent {n}" for n in reversed(names)),
    ]
    assert flavours == ({"async"} if run.is_async else {"sync"})
    assert contents(result["messages"]) == [
        ("human", "hi"),
        ("ai", ""),
        ("tool", "3"),
        ("ai", "done"),
    ]


def test_decorated_class_and_composed_middleware_mix_and_flatten(run: Runner) -> None:
    trace: list[str] = []

    @before_model
    def first(state: AgentState[Any]) -> None:
        trace.append("before_model first")

    @after_model
    def first_after(state: AgentState[Any], runtime: Any) -> None:
        trace.append("after_model first_after")

    @wrap_model_call
    def outer(request: ModelRequest[Any], handler: Any) -> Any:
        trace.append("outer>")
        response = handler(request)
        trace.append("<outer")
        return response

    @before_model
    async def grouped(state: AgentState[Any]) -> None:
        trace.append("before_model grouped")

    group = compose(Tracer("inner", trace), grouped, name="group")
    last = Tracer("last", trace)
    model = traced_model(trace, ["done"])
    agent = create_agent(model, middleware=[first, outer, group, first_after, last])

    nodes = set(agent.get_graph().nodes)
    assert {
        "first.before_model",
        "inner.before_model",
        "grouped.before_model",
        "inner.after_model",
        "first_after.after_model",
        "last.before_model",
    } <= nodes
    assert not any(n.startswith("group.") for n in nodes)  # flattened, no composite node

    result = run(agent)

    assert trace == [
        "before_agent inner",
        "before_agent last",
        "before_model first",
        "before_model inner",
        "before_model grouped",
        "before_model last",
        "outer>",
        "inner>",
        "last>",
        "model",
        "<last",
        "<inner",
        "<outer",
        "after_model last",
        "after_model first_after",
        "after_model inner",
        "after_agent last",
        "after_agent inner",
    ]
    assert result["messages"][-1].content == "done"


def test_nested_compose_is_flattened_into_graph_nodes() -> None:
    trace: list[str] = []
    a, b, c = (Tracer(n, trace) for n in "abc")
    agent = create_agent(ScriptedChatModel(responses=[]), middleware=[compose(compose(a, b), c)])
    nodes = [n for n in agent.get_graph().nodes if "." in n]
    assert nodes == [
        f"{m}.{hook}"
        for hook in ("before_agent", "before_model", "after_model", "after_agent")
        for m in "abc"
    ]


# -- graph -------------------------------------------------------------------------------


def test_get_graph_node_names() -> None:
    @before_agent
    def setup(state: AgentState[Any]) -> None:
        return None

    @before_model(can_jump_to=["end"])
    def guard(state: AgentState[Any]) -> None:
        return None

    @after_model
    def check(state: AgentState[Any]) -> None:
        return None

    @after_agent
    def cleanup(state: AgentState[Any]) -> None:
        return None

    @wrap_model_call
    def around(request: ModelRequest[Any], handler: Any) -> Any:
        return handler(request)

    agent = create_agent(
        ScriptedChatModel(responses=[]),
        [make_adder([])],
        middleware=[setup, guard, around, check, cleanup],
    )
    graph = agent.get_graph()
    assert set(graph.nodes) == {
        "__start__",
        "__end__",
        "model",
        "tools",
        "setup.before_agent",
        "guard.before_model",
        "check.after_model",
        "cleanup.after_agent",
    }
    edges = {(e.source, e.target) for e in graph.edges}
    assert ("__start__", "setup.before_agent") in edges
    assert ("setup.before_agent", "guard.before_model") in edges
    assert ("guard.before_model", "model") in edges
    assert ("guard.before_model", "cleanup.after_agent") in edges  # the declared jump to end
    assert ("model", "check.after_model") in edges
    assert ("tools", "guard.before_model") in edges
    assert ("cleanup.after_agent", "__end__") in edges


def test_middleware_name_clash_is_a_value_error_naming_both() -> None:
    @before_model(name="dup")
    def one(state: AgentState[Any]) -> None:
        return None

    @after_model(name="dup")
    def two(state: AgentState[Any]) -> None:
        return None

    with pytest.raises(ValueError, match="'dup'") as caught:
        create_agent(ScriptedChatModel(responses=[]), middleware=[one, two])
    message = str(caught.value)
    assert f"{HERE}:{one.__wrapped__.__code__.co_firstlineno}" in message
    assert f"{HERE}:{two.__wrapped__.__code__.co_firstlineno}" in message
    assert "name=" in message


def test_class_middleware_name_clash_names_both_and_suggests_name() -> None:
    trace: list[str] = []
    with pytest.raises(ValueError, match="'same'") as caught:
        create_agent(
            ScriptedChatModel(responses=[]),
            middleware=[Tracer("same", trace), Audit("same", trace)],
        )
    message = str(caught.value)
    assert "Tracer" in message
    assert "Audit" in message
    assert "name=" in message


# -- jumps ---------------------------------------------------------------------------------


def once(target: str) -> Callable[[], str | None]:
    """A function returning ``target`` the first time it is called, then ``None``."""
    fired: list[bool] = []

    def next_jump() -> str | None:
        if fired:
            return None
        fired.append(True)
        return target

    return next_jump


def test_self_jump_to_model_from_the_first_before_model_reruns_it(run: Runner) -> None:
    trace: list[str] = []
    jump = once("model")

    @before_model(can_jump_to=["model"])
    def gate(state: AgentState[Any]) -> dict[str, Any] | None:
        target = jump()
        trace.append(f"before_model gate -> {target}")
        return {"jump_to": target} if target else None

    model = traced_model(trace, ["ok"])
    agent = create_agent(model, middleware=[Audit("audit", trace), gate, Tracer("m2", trace)])
    result = run(agent)

    assert [t for t in trace if "before_model" in t or t == "model"] == [
        "before_model gate -> model",
        "before_model gate -> None",
        "before_model m2",
        "model",
    ]
    assert len(model.calls) == 1
    assert "jump_to" not in result
    assert contents(result["messages"]) == [("human", "hi"), ("ai", "ok")]


def test_jump_to_model_from_a_later_before_model_restarts_at_the_first(run: Runner) -> None:
    trace: list[str] = []
    jump = once("model")

    @before_model(can_jump_to=["model"])
    def second(state: AgentState[Any]) -> dict[str, Any] | None:
        trace.append("before_model second")
        target = jump()
        return {"jump_to": target} if target else None

    model = traced_model(trace, ["ok"])
    agent = create_agent(model, middleware=[Tracer("m1", trace), second, Tracer("m3", trace)])
    run(agent)

    assert [t for t in trace if "before_model" in t or t == "model"] == [
        "before_model m1",
        "before_model second",
        "before_model m1",
        "before_model second",
        "before_model m3",
        "model",
    ]


def test_before_model_jump_to_end_skips_the_model_but_runs_after_agent(run: Runner) -> None:
    trace: list[str] = []

    @before_model(can_jump_to=["end"])
    def block(state: AgentState[Any]) -> dict[str, Any]:
        trace.append("before_model block")
        return {"jump_to": "end", "messages": [AIMessage("blocked")]}

    model = traced_model(trace, [])
    middleware = [Tracer("m1", trace), block, Tracer("m3", trace)]
    agent = create_agent(model, [make_adder(trace)], middleware=middleware)
    result = run(agent)

    assert trace == [
        "before_agent m1",
        "before_agent m3",
        "before_model m1",
        "before_model block",
        "after_agent m3",
        "after_agent m1",
    ]
    assert model.calls == []
    assert "jump_to" not in result
    assert contents(result["messages"]) == [("human", "hi"), ("ai", "blocked")]


def test_before_model_jump_to_tools_runs_the_tool_then_loops(run: Runner) -> None:
    trace: list[str] = []
    jump = once("tools")

    @before_model(can_jump_to=["tools"])
    def pre_call(state: AgentState[Any]) -> dict[str, Any] | None:
        trace.append("before_model pre_call")
        if jump() is None:
            return None
        return {"jump_to": "tools", "messages": [calls_tool(call("add", {"a": 2, "b": 5}, "p1"))]}

    model = traced_model(trace, ["done"])
    agent = create_agent(model, [make_adder(trace)], middleware=[pre_call])
    result = run(agent)

    assert trace == ["before_model pre_call", "add", "before_model pre_call", "model"]
    assert "jump_to" not in result
    assert contents(result["messages"]) == [
        ("human", "hi"),
        ("ai", ""),
        ("tool", "7"),
        ("ai", "done"),
    ]
    assert contents(model.calls[0].messages) == contents(result["messages"][:3])


def test_after_model_jump_to_end_skips_pending_tools_and_runs_after_agent(run: Runner) -> None:
    trace: list[str] = []

    @after_model(can_jump_to=["end"])
    def stop(state: AgentState[Any]) -> dict[str, Any]:
        trace.append("after_model stop")
        return {"jump_to": "end"}

    model = traced_model(trace, [calls_tool(call("add", {"a": 1, "b": 1}, "c1"))])
    # after_model runs in reverse: m3's first, then stop's; m1's is skipped by the jump.
    middleware = [Tracer("m1", trace), stop, Tracer("m3", trace)]
    agent = create_agent(model, [make_adder(trace)], middleware=middleware)
    result = run(agent)

    assert [t for t in trace if not t.startswith(("before", "m1>", "m3>", "<m"))] == [
        "model",
        "after_model m3",
        "after_model stop",
        "after_agent m3",
        "after_agent m1",
    ]
    assert "add" not in trace
    assert "jump_to" not in result
    assert [m.type for m in result["messages"]] == ["human", "ai"]


def test_after_model_jump_to_model_calls_the_model_again(run: Runner) -> None:
    trace: list[str] = []
    jump = once("model")

    @after_model(can_jump_to=["model"])
    def again(state: AgentState[Any]) -> dict[str, Any] | None:
        trace.append("after_model again")
        target = jump()
        return {"jump_to": target} if target else None

    model = traced_model(trace, ["first", "second"])
    agent = create_agent(model, middleware=[Tracer("m1", trace), again])
    result = run(agent)

    assert [t for t in trace if not t.startswith(("m1>", "<m1"))] == [
        "before_agent m1",
        "before_model m1",
        "model",
        "after_model again",
        "before_model m1",
        "model",
        "after_model again",
        "after_model m1",
        "after_agent m1",
    ]
    assert "jump_to" not in result
    assert contents(result["messages"]) == [("human", "hi"), ("ai", "first"), ("ai", "second")]


def test_after_model_jump_to_tools_runs_tools_then_loops(run: Runner) -> None:
    trace: list[str] = []
    jump = once("tools")

    @after_model(can_jump_to=["tools"])
    def force(state: AgentState[Any]) -> dict[str, Any] | None:
        trace.append("after_model force")
        if jump() is None:
            return None
        return {"jump_to": "tools", "messages": [calls_tool(call("add", {"a": 5, "b": 5}, "f1"))]}

    model = traced_model(trace, ["first", "second"])
    agent = create_agent(model, [make_adder(trace)], middleware=[Audit("audit", trace), force])
    result = run(agent)

    assert trace == [
        "before_agent audit",
        "model",
        "after_model force",
        "add",
        "model",
        "after_model force",
        "after_agent audit",
    ]
    assert "jump_to" not in result
    assert contents(result["messages"]) == [
        ("human", "hi"),
        ("ai", "first"),
        ("ai", ""),
        ("tool", "10"),
        ("ai", "second"),
    ]


def test_jump_to_end_from_a_class_hook_declared_with_hook_config(run: Runner) -> None:
    trace: list[str] = []

    class Stop(AgentMiddleware[Any, Any, Any]):
        @hook_config(can_jump_to=["end"])
        def before_model(self, state: Any, runtime: Any) -> dict[str, Any]:
            return {"jump_to": "end"}

        @hook_config(can_jump_to=["end"])
        async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any]:
            return {"jump_to": "end"}

    model = traced_model(trace, [])
    result = run(create_agent(model, middleware=[Audit("a", trace), Stop()]))
    assert trace == ["before_agent a", "after_agent a"]
    assert list(result) == ["messages"]
    assert contents(result["messages"]) == [("human", "hi")]


@pytest.mark.parametrize("hook", ["before_model", "after_model"])
def test_undeclared_jump_is_an_error_naming_middleware_hook_and_targets(
    run: Runner, hook: str
) -> None:
    decorator = before_model if hook == "before_model" else after_model

    @decorator
    def sneaky(state: AgentState[Any]) -> dict[str, Any]:
        return {"jump_to": "end"}

    agent = create_agent(ScriptedChatModel(responses=["x", "y"]), middleware=[sneaky])
    with pytest.raises(InvalidJumpError) as caught:
        run(agent)
    message = str(caught.value)
    assert "middleware 'sneaky'" in message
    assert f"hook {hook}" in message
    assert "jump_to='end'" in message
    assert "Allowed targets: none declared" in message
    assert "can_jump_to=['end']" in message
    assert f"{HERE}:{sneaky.__wrapped__.__code__.co_firstlineno}" in message


def test_jump_to_a_target_declared_elsewhere_is_an_error_listing_allowed(run: Runner) -> None:
    @after_model(can_jump_to=["end", "model"])
    def picky(state: AgentState[Any]) -> dict[str, Any]:
        return {"jump_to": "tools"}

    agent = create_agent(ScriptedChatModel(responses=["x"]), [make_adder([])], middleware=[picky])
    with pytest.raises(InvalidJumpError) as caught:
        run(agent)
    message = str(caught.value)
    assert "middleware 'picky'" in message
    assert "hook after_model" in message
    assert "did not declare" in message
    assert "Allowed targets: 'model', 'end'" in message


def test_jump_to_an_unknown_target_is_an_error(run: Runner) -> None:
    @before_model(can_jump_to=["end"])
    def lost(state: AgentState[Any]) -> dict[str, Any]:
        return {"jump_to": "nowhere"}

    model = ScriptedChatModel(responses=["x"])
    with pytest.raises(InvalidJumpError) as caught:
        run(create_agent(model, middleware=[lost]))
    message = str(caught.value)
    assert "middleware 'lost'" in message
    assert "hook before_model" in message
    assert "'nowhere'" in message
    assert "not a jump target" in message
    assert "Allowed targets: 'end'" in message
    assert model.calls == []


def test_undeclared_jump_in_a_command_update_is_an_error(run: Runner) -> None:
    class Commander(AgentMiddleware[Any, Any, Any]):
        def after_model(self, state: Any, runtime: Any) -> Command[Any]:
            return Command(update={"jump_to": "model"})

    with pytest.raises(InvalidJumpError, match=r"'Commander', hook after_model"):
        run(create_agent(ScriptedChatModel(responses=["x"]), middleware=[Commander()]))


# -- system prompt ---------------------------------------------------------------------------


@pytest.mark.parametrize("prompt", ["Be brief.", SystemMessage("Be brief.")], ids=["str", "msg"])
def test_system_prompt_reaches_request_as_system_message(
    run: Runner, prompt: str | SystemMessage
) -> None:
    seen: list[tuple[Any, list[str]]] = []

    @wrap_model_call
    def look(request: ModelRequest[Any], handler: Any) -> Any:
        seen.append((request.system_message, [m.type for m in request.messages]))
        assert request.system_prompt == "Be brief."
        return handler(request)

    model = ScriptedChatModel(responses=[calls_tool(call("add", {"a": 1, "b": 1}, "c")), "ok"])
    agent = create_agent(model, [make_adder([])], system_prompt=prompt, middleware=[look])
    result = run(agent)

    assert len(seen) == 2
    for message, types in seen:
        assert isinstance(message, SystemMessage)
        assert message.content == "Be brief."
        assert "system" not in types  # request.messages never holds the system message
    assert [c.system_prompt for c in model.calls] == ["Be brief.", "Be brief."]
    assert [m.type for m in model.calls[1].messages] == ["system", "human", "ai", "tool"]
    assert [m.type for m in result["messages"]] == ["human", "ai", "tool", "ai"]


def test_no_system_prompt_means_no_system_message(run: Runner) -> None:
    seen: list[Any] = []

    @wrap_model_call
    def look(request: ModelRequest[Any], handler: Any) -> Any:
        seen.append(request.system_message)
        return handler(request)

    model = ScriptedChatModel(responses=["ok"])
    run(create_agent(model, middleware=[look]))
    assert seen == [None]
    assert model.calls[0].system_prompt is None
    assert [m.type for m in model.calls[0].messages] == ["human"]


@pytest.mark.parametrize("as_message", [False, True], ids=["returns-str", "returns-msg"])
def test_dynamic_prompt_replaces_the_prompt_per_call(run: Runner, as_message: bool) -> None:
    bases: list[str | None] = []

    @dynamic_prompt
    def per_turn(request: ModelRequest[Any]) -> str | SystemMessage:
        bases.append(request.system_prompt)
        turn = sum(isinstance(m, AIMessage) for m in request.messages)
        text = f"{request.system_prompt} (turn {turn})"
        return SystemMessage(text) if as_message else text

    responses: list[Any] = [
        calls_tool(call("add", {"a": 1, "b": 2}, "c1")),
        calls_tool(call("add", {"a": 3, "b": 4}, "c2")),
        "done",
    ]
    model = ScriptedChatModel(responses=responses)
    agent = create_agent(model, [make_adder([])], system_prompt="Base.", middleware=[per_turn])
    result = run(agent)

    assert bases == ["Base.", "Base.", "Base."]  # the agent's prompt, not the last call's
    assert [c.system_prompt for c in model.calls] == [
        "Base. (turn 0)",
        "Base. (turn 1)",
        "Base. (turn 2)",
    ]
    for recorded in model.calls:
        assert [m.type for m in recorded.messages].count("system") == 1
    assert not any(isinstance(m, SystemMessage) for m in result["messages"])


# -- requests are each call's own ------------------------------------------------------------


def test_editing_request_lists_in_place_changes_that_call_only(run: Runner) -> None:
    seen: list[tuple[list[str], list[str]]] = []

    @wrap_model_call
    def meddle(request: ModelRequest[Any], handler: Any) -> Any:
        if not seen:
            request.messages.append(HumanMessage("injected"))
            request.tools.pop()
        seen.append(
            (
                [str(m.content) for m in request.messages],
                [t.name for t in request.tools if isinstance(t, BaseTool)],
            )
        )
        return handler(request)

    @tool
    def mul(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    model = ScriptedChatModel(
        responses=[calls_tool(call("add", {"a": 1, "b": 2}, "c1")), "done", "again"]
    )
    agent = create_agent(model, [make_adder([]), mul], middleware=[meddle])
    result = run(agent)

    assert [str(m.content) for m in model.calls[0].messages] == ["hi", "injected"]
    assert model.calls[0].tool_names == ["add"]
    # Not the state ...
    assert contents(result["messages"]) == [
        ("human", "hi"),
        ("ai", ""),
        ("tool", "3"),
        ("ai", "done"),
    ]
    # ... not the next call ...
    assert seen[1] == (["hi", "", "3"], ["add", "mul"])
    assert [str(m.content) for m in model.calls[1].messages] == ["hi", "", "3"]
    assert model.calls[1].tool_names == ["add", "mul"]
    # ... and not the next run of the same agent.
    run(agent)
    assert seen[2] == (["hi"], ["add", "mul"])
    assert model.calls[2].tool_names == ["add", "mul"]


def test_wrap_model_call_adding_an_unknown_base_tool_is_a_value_error(run: Runner) -> None:
    @tool
    def secret(x: int) -> int:
        """A tool the agent was never given."""
        return x

    @wrap_model_call
    def sneak(request: ModelRequest[Any], handler: Any) -> Any:
        return handler(request.override(tools=[*request.tools, secret]))

    model = ScriptedChatModel(responses=["x"])
    agent = create_agent(model, [make_adder([])], middleware=[sneak])
    with pytest.raises(ValueError, match=r"\['secret'\]") as caught:
        run(agent)
    message = str(caught.value)
    assert "create_agent(tools=[...])" in message  # fix 1: register it
    assert "`tools` attribute" in message
    assert "wrap_tool_call" in message  # fix 2: serve it from a tool wrap
    assert "['add']" in message  # what the agent does know
    assert "middleware 'sneak', hook wrap_model_call" in message  # who may have added it
    assert "test_agent.py" in message
    assert model.calls == []


# -- commands from wrap_model_call -----------------------------------------------------------


class LabelState(AgentState[Any]):
    label: NotRequired[str]


def labelling(name: str, is_async: bool) -> AgentMiddleware[Any, Any, Any]:
    """A wrap_model_call writing ``label=name`` and a message from ``name`` via a command."""

    def extend(response: ModelResponse[Any]) -> ExtendedModelResponse[Any]:
        command = Command(update={"label": name, "messages": [HumanMessage(f"from {name}")]})
        return ExtendedModelResponse(response, command)

    if is_async:

        async def alayer(request: ModelRequest[Any], handler: Any) -> Any:
            return extend(await handler(request))

        return wrap_model_call(name=name, state_schema=LabelState)(alayer)

    def layer(request: ModelRequest[Any], handler: Any) -> Any:
        return extend(handler(request))

    return wrap_model_call(name=name, state_schema=LabelState)(layer)


@pytest.mark.parametrize(
    ("outer_async", "inner_async"),
    [(False, False), (True, True), (False, True), (True, False)],
    ids=["sync-sync", "async-async", "sync-async", "async-sync"],
)
def test_commands_from_two_layers_merge_outer_wins(
    run: Runner, outer_async: bool, inner_async: bool
) -> None:
    middleware = [labelling("outer", outer_async), labelling("inner", inner_async)]
    agent = create_agent(ScriptedChatModel(responses=["answer"]), middleware=middleware)
    result = run(agent)

    assert result["label"] == "outer"
    assert contents(result["messages"]) == [
        ("human", "hi"),
        ("ai", "answer"),
        ("human", "from inner"),
        ("human", "from outer"),
    ]


def test_commands_merge_with_a_custom_state_schema_given_to_create_agent(run: Runner) -> None:
    middleware = [labelling("a", run.is_async), labelling("b", run.is_async)]
    agent = create_agent(
        ScriptedChatModel(responses=["answer"]), middleware=middleware, state_schema=LabelState
    )
    result = run(agent, {**hi(), "label": "start"})
    assert result["label"] == "a"
    assert [m.content for m in result["messages"]][-2:] == ["from b", "from a"]


# -- retries ---------------------------------------------------------------------------------


def retrying(attempts: int, errors: list[str], is_async: bool) -> AgentMiddleware[Any, Any, Any]:
    """A wrap_model_call calling ``handler`` up to ``attempts`` times until it succeeds."""
    if is_async:

        async def aretry(request: ModelRequest[Any], handler: Any) -> Any:
            for _ in range(attempts - 1):
                try:
                    return await handler(request)
                except RuntimeError as exc:
                    errors.append(str(exc))
            return await handler(request)

        return wrap_model_call(name="retry")(aretry)

    def retry(request: ModelRequest[Any], handler: Any) -> Any:
        for _ in range(attempts - 1):
            try:
                return handler(request)
            except RuntimeError as exc:
                errors.append(str(exc))
        return handler(request)

    return wrap_model_call(name="retry")(retry)


def test_retry_layer_around_a_model_that_fails_twice(run: Runner) -> None:
    errors: list[str] = []
    model = ScriptedChatModel(responses=[RuntimeError("x"), RuntimeError("y"), "ok"])
    agent = create_agent(model, middleware=[retrying(3, errors, run.is_async)])
    result = run(agent)

    assert errors == ["x", "y"]
    assert len(model.calls) == 3
    assert contents(result["messages"]) == [("human", "hi"), ("ai", "ok")]


def test_retry_that_gives_up_raises_the_models_error(run: Runner) -> None:
    errors: list[str] = []
    model = ScriptedChatModel(responses=[RuntimeError("x"), RuntimeError("y"), "ok"])
    agent = create_agent(model, middleware=[retrying(2, errors, run.is_async)])
    with pytest.raises(RuntimeError) as caught:
        run(agent)
    assert caught.value.args == ("y",)
    assert errors == ["x"]
    assert len(model.calls) == 2


def test_retry_keeps_only_the_commands_of_the_last_inner_attempt(run: Runner) -> None:
    @wrap_model_call(name="retry_bad")
    def retry_bad(request: ModelRequest[Any], handler: Any) -> Any:
        response = handler(request)
        if response.result[0].content == "bad":
            response = handler(request)
        return response

    model = ScriptedChatModel(responses=["bad", "good"])
    agent = create_agent(model, middleware=[retry_bad, labelling("inner", run.is_async)])
    with pytest.warns(DoubleCallWarning, match="'retry_bad'"):  # it asks again after "bad"
        result = run(agent)
    assert contents(result["messages"]) == [
        ("human", "hi"),
        ("ai", "good"),
        ("human", "from inner"),
    ]
    assert result["label"] == "inner"


# -- streaming -------------------------------------------------------------------------------


def test_stream_updates_are_keyed_by_hook_node_names(run: Runner) -> None:
    trace: list[str] = []
    model = ScriptedChatModel(responses=[calls_tool(call("add", {"a": 1, "b": 2}, "c1")), "done"])
    middleware = [Tracer("m1", trace), Tracer("m2", trace)]
    agent = create_agent(model, [make_adder(trace)], middleware=middleware)

    chunks = run.stream(agent)

    assert all(len(chunk) == 1 for chunk in chunks)
    turn = ["m1.before_model", "m2.before_model", "model", "m2.after_model", "m1.after_model"]
    assert [next(iter(chunk)) for chunk in chunks] == [
        "m1.before_agent",
        "m2.before_agent",
        *turn,
        "tools",
        *turn,
        "m2.after_agent",
        "m1.after_agent",
    ]
    model_updates = [chunk["model"] for chunk in chunks if "model" in chunk]
    assert [u["messages"][-1].content for u in model_updates] == ["", "done"]
    tool_update = next(chunk["tools"] for chunk in chunks if "tools" in chunk)
    assert isinstance(tool_update["messages"][0], ToolMessage)


def test_stream_shows_a_hooks_own_update_under_its_node(run: Runner) -> None:
    @before_model(name="greeter")
    def greet(state: AgentState[Any]) -> dict[str, list[AnyMessage]]:
        return {"messages": [HumanMessage("from greeter")]}

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[greet])
    chunks = run.stream(agent)
    assert [next(iter(c)) for c in chunks] == ["greeter.before_model", "model"]
    assert chunks[0]["greeter.before_model"]["messages"][0].content == "from greeter"


# -- an endless jump loop names the hook ------------------------------------------


def test_an_endless_jump_loop_names_the_hook_and_how_often_it_jumped() -> None:
    @after_model(can_jump_to=["model"])
    def again(state: Any) -> Any:
        return {"jump_to": "model"}

    agent = create_agent(ScriptedChatModel(responses=["x"] * 50), middleware=[again])
    with pytest.raises(GraphRecursionError) as caught:
        agent.invoke(hi(), {"recursion_limit": 30})
    message = str(caught.value)
    assert message.startswith("Recursion limit of 30 reached without hitting a stop condition.")
    assert "middleware 'again', hook after_model" in message
    assert "jumped to 'model' 15 times" in message  # 30 steps: 15 rounds of model + after_model


def test_a_tool_loop_without_jumps_says_that_no_hook_jumped() -> None:
    from langchain_core.tools import tool

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    call = AIMessage("", tool_calls=[{"name": "ping", "args": {}, "id": "c"}])
    agent = create_agent(ScriptedChatModel(responses=[call] * 40), [ping])
    with pytest.raises(GraphRecursionError, match="no middleware hook jumped"):
        agent.invoke(hi(), {"recursion_limit": 12})
