"""``effects="strict"`` watches what declared layers do and refuses the undeclared.

Every effect kind a layer can have is done once by a layer that did not declare it (an
``UndeclaredEffectError`` naming the middleware, the hook, its file:line and the effect)
and once by one that did (it runs). Each case runs for hooks written sync and async,
through ``invoke`` and ``ainvoke`` (the ``driver`` fixture), as a decorated function, as
a class, and inside ``compose()``; and through ``funcware.testing.run_hook``, strict by
default. With the default ``effects="warn"`` nothing is watched.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt
from support import call, calls_tool, hi

from funcware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    UndeclaredEffectError,
    before_model,
    compose,
    create_agent,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.effects.declarations import declarations
from funcware.testing import ScriptedChatModel, arun_hook, run_hook
from funcware.testing.kit import HookResult


class State(AgentState[Any], total=False):
    x: int


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return f"echo {text}"


EXTRA_TOOL = {"type": "function", "function": {"name": "extra", "parameters": {}}}
OTHER = ScriptedChatModel(responses=["from the other model"] * 1000)
DOWN = ScriptedChatModel(responses=[ConnectionError("down")] * 1000)


@dataclass(frozen=True)
class Plan:
    """What a wrap layer does: change the request, call the handler n times, change the result."""

    prepare: Callable[[Any], Any] = lambda r: r
    calls: int = 1
    finish: Callable[[Any, Any], Any] = lambda request, response: response
    also: tuple[str, ...] = ()
    """Effects the layer has before this one (declared in both tests)."""
    catch: bool = False
    """Whether the layer turns its handler's error into ``finish(request, None)``."""


def _tool_message(request: Any, text: str) -> ToolMessage:
    return ToolMessage(text, tool_call_id=request.tool_call["id"], name="echo")


def _append_message(request: Any) -> Any:
    request.messages.append(HumanMessage("added in place"))
    return request


MODEL_CASES: dict[str, Plan] = {
    "request.model": Plan(prepare=lambda r: r.override(model=OTHER)),
    "request.messages": Plan(prepare=_append_message),
    "request.system_message": Plan(prepare=lambda r: r.override(system_prompt="new prompt")),
    "request.tools": Plan(prepare=lambda r: r.override(tools=[EXTRA_TOOL])),
    "request.tool_choice": Plan(prepare=lambda r: r.override(tool_choice="none")),
    "request.model_settings": Plan(prepare=lambda r: r.override(model_settings={"t": 1})),
    "handler.retry": Plan(calls=2),
    "handler.skip": Plan(calls=0, finish=lambda req, resp: AIMessage("skipped")),
    "model.answer.rewrite": Plan(finish=lambda req, resp: AIMessage("replaced")),
    "model.error.recover": Plan(
        prepare=lambda r: r.override(model=DOWN),
        finish=lambda req, resp: AIMessage("the model is down"),
        also=("request.model",),
        catch=True,
    ),
    "state.x": Plan(finish=lambda req, resp: ExtendedModelResponse(resp, Command(update={"x": 1}))),
}

TOOL_CASES: dict[str, Plan] = {
    "tool.args": Plan(
        prepare=lambda r: r.override(tool_call={**r.tool_call, "args": {"text": "edited"}})
    ),
    "tool.answer.rewrite": Plan(finish=lambda req, resp: _tool_message(req, "replaced")),
    "handler.retry": Plan(calls=2),
    "handler.skip": Plan(calls=0, finish=lambda req, resp: _tool_message(req, "skipped")),
    "state.x": Plan(
        finish=lambda req, resp: Command(
            update={"x": 2, "messages": [_tool_message(req, "by command")]}
        ),
        also=("tool.result",),
    ),
}


def sync_layer(plan: Plan) -> Callable[[Any, Any], Any]:
    def layer(request: Any, handler: Any) -> Any:
        passed = plan.prepare(request)
        response = None
        for _ in range(plan.calls):
            try:
                response = handler(passed)
            except ConnectionError:
                if not plan.catch:
                    raise
        return plan.finish(request, response)

    return layer


def async_layer(plan: Plan) -> Callable[[Any, Any], Any]:
    async def layer(request: Any, handler: Any) -> Any:
        passed = plan.prepare(request)
        response = None
        for _ in range(plan.calls):
            try:
                response = await handler(passed)
            except ConnectionError:
                if not plan.catch:
                    raise
        return plan.finish(request, response)

    return layer


def decorated(hook: str, plan: Plan, is_async: bool, writes: list[str]) -> Any:
    func = async_layer(plan) if is_async else sync_layer(plan)
    decorator = wrap_model_call if hook == "wrap_model_call" else wrap_tool_call
    return decorator(name="layer", writes=writes)(func)


def as_class(hook: str, plan: Plan, is_async: bool, writes: list[str]) -> Any:
    func = async_layer(plan) if is_async else sync_layer(plan)

    def sync_method(self: Any, request: Any, handler: Any) -> Any:
        return func(request, handler)

    async def async_method(self: Any, request: Any, handler: Any) -> Any:
        return await func(request, handler)

    namespace = {
        ("a" + hook if is_async else hook): async_method if is_async else sync_method,
        "writes": writes,
        "state_schema": State,
    }
    cls = type("Layer", (AgentMiddleware,), namespace)
    return cls()


def agent_for(hook: str, middleware: Any, **options: Any) -> Any:
    if hook == "wrap_model_call":
        model = ScriptedChatModel(responses=["ok"] * 5)
        return create_agent(model, middleware=[middleware], state_schema=State, **options)
    model = ScriptedChatModel(responses=[calls_tool(call("echo", {"text": "a"}, "c1")), "done"])
    return create_agent(model, [echo], middleware=[middleware], state_schema=State, **options)


CASES = [("wrap_model_call", e) for e in MODEL_CASES] + [("wrap_tool_call", e) for e in TOOL_CASES]


def plan_of(hook: str, effect: str) -> Plan:
    return (MODEL_CASES if hook == "wrap_model_call" else TOOL_CASES)[effect]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync-def", "async-def"])
@pytest.mark.parametrize("make", [decorated, as_class], ids=["decorated", "class"])
@pytest.mark.parametrize(("hook", "effect"), CASES)
def test_an_undeclared_wrap_effect_is_refused(
    driver: Any, hook: str, effect: str, make: Any, is_async: bool
) -> None:
    plan = plan_of(hook, effect)
    layer = make(hook, plan, is_async, writes=list(plan.also))
    agent = agent_for(hook, layer, effects="strict")
    with pytest.raises(UndeclaredEffectError) as info:
        driver.invoke(agent, hi())
    text = str(info.value)
    name = layer.name
    assert text.startswith(f"middleware {name!r}, hook {hook} (defined at ")
    assert re.search(r"test_effects_strict\.py:\d+\)", text)
    declared = ", ".join(plan.also) or "nothing"
    assert f"effect {effect!r}, which it did not declare (it declares writes=[{declared}])" in text
    assert f"Add {effect!r} to its writes=" in text


@pytest.mark.parametrize("is_async", [False, True], ids=["sync-def", "async-def"])
@pytest.mark.parametrize("make", [decorated, as_class], ids=["decorated", "class"])
@pytest.mark.parametrize(("hook", "effect"), CASES)
def test_a_declared_wrap_effect_runs(
    driver: Any, hook: str, effect: str, make: Any, is_async: bool
) -> None:
    plan = plan_of(hook, effect)
    writes = [effect, *plan.also] + (["state.messages"] if plan.also else [])
    layer = make(hook, plan, is_async, writes=writes)
    result = driver.invoke(agent_for(hook, layer, effects="strict"), hi())
    assert result["messages"][-1].type == "ai"


@pytest.mark.parametrize(("hook", "effect"), [CASES[0], CASES[-1]])
def test_warn_mode_watches_nothing(driver: Any, hook: str, effect: str) -> None:
    layer = decorated(hook, plan_of(hook, effect), False, writes=[])
    result = driver.invoke(agent_for(hook, layer), hi())
    assert result["messages"][-1].type == "ai"


def test_an_undeclared_layer_is_not_watched(driver: Any) -> None:
    layer = wrap_model_call(name="plain")(sync_layer(MODEL_CASES["request.model"]))
    result = driver.invoke(agent_for("wrap_model_call", layer, effects="strict"), hi())
    assert result["messages"][-1].content == "from the other model"


def test_inside_compose_the_member_is_named(driver: Any) -> None:
    bad = decorated("wrap_model_call", MODEL_CASES["handler.retry"], driver.is_async, writes=[])
    ok = wrap_model_call(name="ok", writes=[])(
        async_layer(Plan()) if driver.is_async else sync_layer(Plan())
    )
    agent = agent_for("wrap_model_call", compose(ok, bad), effects="strict")
    with pytest.raises(UndeclaredEffectError, match=r"^middleware 'layer', hook wrap_model_call"):
        driver.invoke(agent, hi())


def test_a_layer_that_swallows_the_error_is_still_refused() -> None:
    @wrap_model_call(writes=[])
    def stubborn(request: Any, handler: Any) -> Any:
        try:
            return handler(request.override(model=OTHER))
        except Exception:
            return AIMessage("swallowed")

    with pytest.raises(UndeclaredEffectError, match=r"request\.model"):
        agent_for("wrap_model_call", stubborn, effects="strict").invoke(hi())


def test_an_error_passing_through_a_layer_is_not_its_effect() -> None:
    @wrap_model_call(writes=[])
    def quiet(request: Any, handler: Any) -> Any:
        return handler(request)

    model = ScriptedChatModel(responses=[RuntimeError("provider down")])
    agent = create_agent(model, middleware=[quiet], effects="strict")
    with pytest.raises(RuntimeError, match="provider down"):
        agent.invoke(hi())


# -- node hooks ---------------------------------------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True], ids=["sync-def", "async-def"])
def test_node_hook_state_writes(driver: Any, is_async: bool) -> None:
    if is_async:

        async def body(state: Any) -> Any:
            return {"x": 5}

    else:

        def body(state: Any) -> Any:
            return {"x": 5}

    writer = before_model(name="writer", writes=["state.messages"], state_schema=State)(body)
    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[writer], effects="strict")
    with pytest.raises(UndeclaredEffectError) as info:
        driver.invoke(agent, hi())
    text = str(info.value)
    assert text.startswith("middleware 'writer', hook before_model (defined at ")
    assert "wrote state key 'x': effect 'state.x', which it did not declare" in text
    declared = before_model(name="writer", writes=["state.x"], state_schema=State)(body)
    agent = create_agent(
        ScriptedChatModel(responses=["ok"]), middleware=[declared], effects="strict"
    )
    assert driver.invoke(agent, hi())["x"] == 5


def test_node_hook_jumps_are_not_state_writes() -> None:
    @before_model(can_jump_to=["end"], writes=[])
    def stop(state: Any) -> Any:
        return {"jump_to": "end"}

    agent = create_agent(ScriptedChatModel(responses=[]), middleware=[stop], effects="strict")
    assert [m.type for m in agent.invoke(hi())["messages"]] == ["human"]


@pytest.mark.parametrize("declare", [False, True])
def test_interrupts(driver: Any, declare: bool) -> None:
    def ask(state: Any) -> Any:
        answer = interrupt("may I?")
        return {"x": 1 if answer == "yes" else 0}

    writes = ["state.x", "interrupt"] if declare else ["state.x"]
    gate = before_model(name="gate", writes=writes, state_schema=State)(ask)
    agent = create_agent(
        ScriptedChatModel(responses=["ok"]),
        middleware=[gate],
        checkpointer=InMemorySaver(),
        effects="strict",
    )
    config = {"configurable": {"thread_id": "t"}}
    if not declare:
        with pytest.raises(UndeclaredEffectError, match=r"raised an interrupt: effect 'interrupt'"):
            driver.invoke(agent, hi(), config)
        return
    driver.invoke(agent, hi(), config)
    assert driver.invoke(agent, Command(resume="yes"), config)["x"] == 1


def test_a_wrap_interrupt_is_watched_but_one_from_inside_passes() -> None:
    @wrap_tool_call(name="asker", writes=[])
    def asker(request: Any, handler: Any) -> Any:
        interrupt("ok to run?")
        return handler(request)

    model = ScriptedChatModel(responses=[calls_tool(call("echo", {"text": "a"}, "c1")), "done"])
    agent = create_agent(
        model, [echo], middleware=[asker], checkpointer=InMemorySaver(), effects="strict"
    )
    with pytest.raises(UndeclaredEffectError, match=r"^middleware 'asker', hook wrap_tool_call"):
        agent.invoke(hi(), {"configurable": {"thread_id": "a"}})

    @wrap_tool_call(name="outer", writes=[])
    def outer(request: Any, handler: Any) -> Any:
        return handler(request)

    inner = wrap_tool_call(name="inner", writes=["interrupt"])(asker.__wrapped__)
    model = ScriptedChatModel(responses=[calls_tool(call("echo", {"text": "a"}, "c1")), "done"])
    agent = create_agent(
        model, [echo], middleware=[outer, inner], checkpointer=InMemorySaver(), effects="strict"
    )
    config = {"configurable": {"thread_id": "b"}}
    agent.invoke(hi(), config)
    assert agent.invoke(Command(resume=True), config)["messages"][-1].content == "done"


# -- the hook test kit is strict by default ---------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_run_hook_is_strict_by_default(mode: str) -> None:
    layer = decorated(
        "wrap_model_call", MODEL_CASES["model.answer.rewrite"], mode == "async", writes=[]
    )
    with pytest.raises(UndeclaredEffectError, match=r"'model\.answer\.rewrite'"):
        run_hook(layer, "wrap_model_call", responses=["ok"], mode=mode)  # type: ignore[arg-type]
    result = run_hook(layer, "wrap_model_call", responses=["ok"], mode=mode, effects="warn")  # type: ignore[arg-type]
    assert result.returned.result[0].content == "replaced"


async def test_arun_hook_is_strict_by_default() -> None:
    layer = decorated("wrap_tool_call", TOOL_CASES["handler.skip"], True, writes=[])
    with pytest.raises(UndeclaredEffectError, match=r"'handler\.skip'"):
        await arun_hook(layer, "wrap_tool_call")
    ok = decorated("wrap_tool_call", TOOL_CASES["handler.skip"], True, writes=["handler.skip"])
    result: HookResult = await arun_hook(ok, "wrap_tool_call")
    assert result.handler_calls == 0


def test_a_composite_with_an_undeclared_member_is_undeclared_and_not_watched() -> None:
    declared = wrap_model_call(name="declared", writes=[])(sync_layer(Plan()))
    plain = wrap_model_call(name="plain")(sync_layer(MODEL_CASES["request.model"]))
    mixed = compose(declared, plain)
    assert declarations(mixed) is None
    # the undeclared member is not held to what its neighbour declared
    assert run_hook(mixed, "wrap_model_call", responses=["ok"]).handler_calls == 1
    # with every member declared, the composite declares their union and is watched
    honest = wrap_model_call(name="honest", writes=[])(sync_layer(MODEL_CASES["request.model"]))
    whole = compose(declared, honest)
    assert declarations(whole) is not None
    with pytest.raises(UndeclaredEffectError, match=r"request\.model"):
        run_hook(whole, "wrap_model_call", responses=["ok"])
