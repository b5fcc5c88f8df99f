"""funcware.compose.chain: compose() — the onion, merged commands, composite node hooks."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
from collections.abc import Callable
from typing import Annotated, Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.errors import InvalidUpdateError
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime
from langgraph.types import Command
from typing_extensions import NotRequired, TypedDict, get_type_hints

from funcware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
    after_model,
    before_model,
    dynamic_prompt,
    hook_config,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.compose import ComposedMiddleware, compose
from funcware.compose import chain as chain_module
from funcware.compose import composite as composite_module
from funcware.compose.graph import composite_hooks as composite_hooks_module
from funcware.errors import DoubleCallWarning, InvalidJumpError, StateSchemaConflictWarning
from funcware.hooks.middleware import hook_impls

HERE = os.path.basename(__file__)
RUNTIME: Runtime[None] = Runtime(context=None)
MODES = ["sync", "async"]


def request() -> ModelRequest[None]:
    return ModelRequest(
        model=GenericFakeChatModel(messages=iter([])), messages=[HumanMessage("hi")]
    )


def tool_request() -> ToolCallRequest:
    call = {"name": "t", "args": {}, "id": "1", "type": "tool_call"}
    return ToolCallRequest(tool_call=call, tool=None, state={}, runtime=None)  # type: ignore[arg-type]


def model(req: ModelRequest[None]) -> ModelResponse[Any]:
    return ModelResponse(result=[AIMessage("model")])


def call_model(
    middleware: AgentMiddleware[Any, Any, Any],
    mode: str,
    handler: Callable[[ModelRequest[None]], Any] = model,
) -> Any:
    """Run ``middleware``'s model wrap around ``handler`` as a sync or an async call."""
    if mode == "sync":
        return middleware.wrap_model_call(request(), handler)

    async def ahandler(req: ModelRequest[None]) -> Any:
        return handler(req)

    return asyncio.run(middleware.awrap_model_call(request(), ahandler))


def texts(messages: Any) -> list[str]:
    return [m.content for m in messages]


def tracing(name: str, log: list[str], command: dict[str, Any] | None = None) -> Any:
    """A sync model wrap that logs around its handler and may return a command."""

    def layer(req: ModelRequest[None], handler: Any) -> Any:
        log.append(f"{name}>")
        response = handler(req)
        log.append(f"<{name}")
        return response if command is None else ExtendedModelResponse(response, Command(**command))

    return wrap_model_call(name=name)(layer)


def writes(name: str, plain: object = None) -> dict[str, Any]:
    """A Command(**...) that adds a message ``name`` and, if given, sets ``plain``."""
    update: dict[str, Any] = {"messages": [AIMessage(name)]}
    if plain is not None:
        update["plain"] = plain
    return {"update": update}


# -- the composite as a middleware --------------------------------------------------


class Toolbox(AgentMiddleware):
    def __init__(self, name: str, *tools: dict[str, Any]) -> None:
        self.name, self.tools = name, list(tools)


def tool_schema(name: str) -> dict[str, Any]:
    return {"name": name, "description": name, "parameters": {}}


def test_composite_is_a_middleware_that_flattens_names_and_collects_tools() -> None:
    a, b = Toolbox("a", tool_schema("x")), Toolbox("b")
    c = Toolbox("c", tool_schema("y"), tool_schema("z"))
    abc = compose(a, b, c)
    assert isinstance(abc, AgentMiddleware)
    assert abc.members == (a, b, c)
    assert abc.name == "a+b+c"
    assert compose(a, b, name="ab").name == "ab"
    assert [t["name"] for t in abc.tools] == ["x", "y", "z"]  # type: ignore[index]
    assert compose(compose(a, b), c).members == (a, b, c)
    assert compose(compose(a, b), c).name == "a+b+c"
    assert compose(a, compose(b, compose(c))).members == (a, b, c)
    assert compose(compose(), a, compose()).members == (a,)


@pytest.mark.parametrize(
    ("member", "match"),
    [(Toolbox, r"Pass Toolbox\(\)"), (model, "plain callable"), ("a string", "not a middleware")],
)
def test_compose_refuses_what_is_not_a_middleware_instance(member: object, match: str) -> None:
    with pytest.raises(TypeError, match=match):
        compose(member)  # type: ignore[arg-type]


class CountState(AgentState[Any]):
    count: NotRequired[int]


class LabelState(AgentState[Any]):
    label: NotRequired[str]


class TextCountState(AgentState[Any]):
    count: NotRequired[str]


def with_schema(name: str, schema: type) -> Any:
    return before_model(state_schema=schema, name=name)(lambda state: None)


def test_state_schema_is_the_merge_of_the_members_schemas() -> None:
    merged = compose(
        with_schema("counter", CountState),
        with_schema("labeller", LabelState),
        with_schema("counter2", CountState),
    ).state_schema
    hints = get_type_hints(merged, include_extras=True)
    assert {"messages", "jump_to", "count", "label"} <= set(hints)
    assert hints["count"] == NotRequired[int]


def test_a_field_declared_with_two_types_is_a_warning_naming_both_middleware() -> None:
    with pytest.warns(StateSchemaConflictWarning, match="count") as caught:
        composite = compose(
            with_schema("counter", CountState), with_schema("texter", TextCountState)
        )
    (warning,) = caught
    assert "'counter'" in str(warning.message)
    assert "'texter'" in str(warning.message)
    assert get_type_hints(composite.state_schema)["count"] is str  # the later, as LangChain


# -- the onion ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_wrap_layers_nest_first_outermost_and_members_without_a_wrap_are_skipped(
    mode: str,
) -> None:
    log: list[str] = []
    skipped = before_model(name="skipped")(lambda state: log.append("skipped"))

    def base(req: ModelRequest[None]) -> ModelResponse[Any]:
        log.append("model")
        return model(req)

    onion = compose(tracing("a", log), skipped, tracing("b", log), tracing("c", log))
    result = call_model(onion, mode, base)
    assert log == ["a>", "b>", "c>", "model", "<c", "<b", "<a"]
    assert isinstance(result, ModelResponse)
    assert texts(result.result) == ["model"]


@pytest.mark.parametrize("mode", MODES)
def test_each_layers_handler_is_the_rest_of_the_chain(mode: str) -> None:
    @wrap_model_call
    def outer(req: ModelRequest[None], handler: Any) -> Any:
        response = handler(req.override(messages=[*req.messages, HumanMessage("outer")]))
        return AIMessage(f"outer saw {response.result[0].content}")

    @wrap_model_call
    async def inner(req: ModelRequest[None], handler: Any) -> Any:
        response = await handler(req.override(system_prompt="inner"))
        return ModelResponse(result=[AIMessage(f"inner saw {response.result[0].content}")])

    seen: list[ModelRequest[None]] = []

    def base(req: ModelRequest[None]) -> AIMessage:
        seen.append(req)
        return AIMessage("model")

    result = call_model(compose(outer, inner), mode, base)
    assert texts(result.result) == ["outer saw inner saw model"]
    [final] = seen
    assert texts(final.messages) == ["hi", "outer"]
    assert final.system_prompt == "inner"


def test_the_onion_is_built_once_on_the_first_call_not_on_every_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log: list[str] = []
    onion = compose(tracing("a", log), tracing("b", log))
    call_model(onion, MODES[0])  # its first own call checks its members and builds its onions

    def refuse(*args: object) -> None:
        raise AssertionError("the onion was rebuilt during a call")

    for name in ("build_sync", "build_async", "hook_impls", "arranged", "transform"):
        monkeypatch.setattr(composite_module, name, refuse)
    for name in ("flatten", "arrange"):
        monkeypatch.setattr(chain_module, name, refuse)
    monkeypatch.setattr(composite_hooks_module, "hook_impls", refuse)
    for mode in MODES * 2:
        call_model(onion, mode)
    assert log == ["a>", "b>", "<b", "<a"] * 5


@pytest.mark.parametrize("mode", MODES)
def test_wrap_tool_call_layers_nest_like_model_layers(mode: str) -> None:
    log: list[str] = []

    def layer(name: str) -> Any:
        def wrap(req: ToolCallRequest, handler: Any) -> Any:
            log.append(f"{name}>")
            result = handler(req)
            log.append(f"<{name}")
            return result

        return wrap_tool_call(name=name)(wrap)

    @wrap_tool_call
    async def renamer(req: ToolCallRequest, handler: Any) -> Any:
        log.append("renamer")
        return await handler(req.override(tool_call={**req.tool_call, "name": "renamed"}))

    def tool(req: ToolCallRequest) -> ToolMessage:
        log.append(f"tool {req.tool_call['name']}")
        return ToolMessage("done", tool_call_id=req.tool_call["id"])

    async def atool(req: ToolCallRequest) -> ToolMessage:
        return tool(req)

    onion = compose(layer("a"), tracing("model-only", log), renamer, layer("b"))
    if mode == "sync":
        result = onion.wrap_tool_call(tool_request(), tool)
    else:
        result = asyncio.run(onion.awrap_tool_call(tool_request(), atool))
    assert log == ["a>", "renamer", "b>", "tool renamed", "<b", "<a"]
    assert isinstance(result, ToolMessage)
    assert result.content == "done"


# -- results and commands -------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "returned",
    [
        lambda r: r,
        lambda r: r.result[0],
        lambda r: ExtendedModelResponse(r, Command(update={"plain": 1})),
        lambda r: ExtendedModelResponse(r),
    ],
    ids=["ModelResponse", "AIMessage", "ExtendedModelResponse", "ExtendedNoCommand"],
)
def test_a_layers_handler_always_returns_a_model_response(
    mode: str, returned: Callable[[ModelResponse[Any]], Any]
) -> None:
    got: list[object] = []

    @wrap_model_call
    def outer(req: ModelRequest[None], handler: Any) -> Any:
        got.append(handler(req))
        return got[-1]

    @wrap_model_call
    def inner(req: ModelRequest[None], handler: Any) -> Any:
        response = handler(req)
        got.append(response)
        return returned(response)

    result = call_model(compose(outer, inner), mode, lambda req: AIMessage("model"))
    assert [type(g) for g in got] == [ModelResponse, ModelResponse]
    assert texts(got[1].result) == ["model"]  # type: ignore[attr-defined]
    response = result.model_response if isinstance(result, ExtendedModelResponse) else result
    assert texts(response.result) == ["model"]


@pytest.mark.parametrize("mode", MODES)
def test_commands_merge_inner_first_and_the_outermost_plain_value_wins(mode: str) -> None:
    log: list[str] = []
    onion = compose(
        tracing("a", log, writes("a", plain="from a")),
        tracing("b", log),
        tracing("c", log, writes("c")),
        tracing("d", log, writes("d", plain="from d")),
    )
    result = call_model(onion, mode)
    assert isinstance(result, ExtendedModelResponse)
    assert texts(result.model_response.result) == ["model"]
    update = result.command.update  # type: ignore[union-attr]
    assert texts(update["messages"]) == ["d", "c", "a"]
    assert update["plain"] == "from a"


class GraphState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    plain: str


def run_graph(node: Callable[[GraphState], Any]) -> dict[str, Any]:
    graph = StateGraph(GraphState)
    graph.add_node("node", node)
    graph.add_edge(START, "node")
    graph.add_edge("node", END)
    return graph.compile().invoke({"messages": [HumanMessage("hi")], "plain": "before"})


def test_the_merged_command_applies_in_a_real_langgraph_node() -> None:
    log: list[str] = []
    onion = compose(
        tracing("a", log, writes("a", plain="from a")),
        tracing("b", log, writes("b", plain="from b")),
        tracing("c", log, writes("c", plain="from c")),
    )
    result = onion.wrap_model_call(request(), model)
    final = run_graph(lambda state: result.command)  # type: ignore[union-attr]
    assert texts(final["messages"]) == ["hi", "c", "b", "a"]
    assert final["plain"] == "from a"
    # What the merge avoids: two writes to one plain key in a step crash langgraph.
    with pytest.raises(InvalidUpdateError):
        run_graph(lambda state: Command(update=[("plain", "from c"), ("plain", "from a")]))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("last_attempt_fails", [False, True])
def test_only_the_last_attempts_commands_survive_a_retry(
    mode: str, last_attempt_fails: bool
) -> None:
    attempts = itertools.count(1)

    @wrap_model_call
    def retry(req: ModelRequest[None], handler: Any) -> Any:
        for _ in range(3):
            try:
                response = handler(req)
            except ConnectionError:
                response = ModelResponse(result=[AIMessage("fallback")])
        return response

    @wrap_model_call
    def middle(req: ModelRequest[None], handler: Any) -> Any:
        n = next(attempts)
        return ExtendedModelResponse(handler(req), Command(**writes(f"middle {n}", plain=n)))

    @wrap_model_call
    async def inner(req: ModelRequest[None], handler: Any) -> Any:
        return ExtendedModelResponse(await handler(req), Command(**writes("inner")))

    calls = itertools.count(1)

    def flaky(req: ModelRequest[None]) -> ModelResponse[Any]:
        if next(calls) == 3 and last_attempt_fails:
            raise ConnectionError
        return model(req)

    # Three answers where the last fails: the retry keeps the fallback, not a second answer.
    warned = pytest.warns(DoubleCallWarning)
    with contextlib.nullcontext() if last_attempt_fails else warned:
        result = call_model(compose(retry, middle, inner), mode, flaky)
    if last_attempt_fails:
        assert isinstance(result, ModelResponse)
        assert texts(result.result) == ["fallback"]
    else:
        assert texts(result.command.update["messages"]) == ["inner", "middle 3"]
        assert result.command.update["plain"] == 3


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("command", "field"),
    [
        (Command(goto="model"), "goto"),
        (Command(resume="yes"), "resume"),
        (Command(graph=Command.PARENT, update={"plain": 1}), "graph"),
    ],
)
def test_a_command_that_routes_is_refused_naming_the_middleware(
    mode: str, command: Command[Any], field: str
) -> None:
    @wrap_model_call(name="router")
    def router(req: ModelRequest[None], handler: Any) -> Any:
        return ExtendedModelResponse(handler(req), command)

    with pytest.raises(NotImplementedError, match=f"'router'.*{field}="):
        call_model(compose(tracing("outer", []), router), mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("value", [None, {"messages": []}, "text"], ids=["None", "dict", "str"])
@pytest.mark.parametrize("flavour", ["sync-def", "async-def"])
def test_a_bad_model_layer_result_is_a_type_error_that_says_where(
    mode: str, value: object, flavour: str
) -> None:
    def sync_layer(req: ModelRequest[None], handler: Any) -> Any:
        handler(req)
        return value

    async def async_layer(req: ModelRequest[None], handler: Any) -> Any:
        await handler(req)
        return value

    broken = wrap_model_call(name="broken")(sync_layer if flavour == "sync-def" else async_layer)
    with pytest.raises(TypeError) as error:
        call_model(compose(tracing("outer", []), broken), mode)
    message = str(error.value)
    returned = "None" if value is None else type(value).__name__
    for part in ("'broken'", "wrap_model_call", HERE, returned):
        assert part in message
    for allowed in ("ModelResponse", "AIMessage", "ExtendedModelResponse"):
        assert allowed in message


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("value", [None, {"content": "x"}, "text", AIMessage("x")])
@pytest.mark.parametrize("flavour", ["sync-def", "async-def"])
def test_a_bad_tool_layer_result_is_a_type_error_that_says_where(
    mode: str, value: object, flavour: str
) -> None:
    def sync_layer(req: ToolCallRequest, handler: Any) -> Any:
        return value

    async def async_layer(req: ToolCallRequest, handler: Any) -> Any:
        return value

    broken = wrap_tool_call(name="broken")(sync_layer if flavour == "sync-def" else async_layer)

    def tool(req: ToolCallRequest) -> ToolMessage:
        return ToolMessage("done", tool_call_id="1")

    async def atool(req: ToolCallRequest) -> ToolMessage:
        return tool(req)

    onion = compose(broken)
    with pytest.raises(TypeError) as error:
        if mode == "sync":
            onion.wrap_tool_call(tool_request(), tool)
        else:
            asyncio.run(onion.awrap_tool_call(tool_request(), atool))
    message = str(error.value)
    for part in ("'broken'", "wrap_tool_call", HERE, "ToolMessage", "Command"):
        assert part in message


@pytest.mark.parametrize("mode", MODES)
def test_a_base_handler_returning_a_wrong_type_is_named(mode: str) -> None:
    onion = compose(tracing("a", []), name="onion")
    with pytest.raises(TypeError, match=r"handler given to onion\.a?wrap_model_call.* str"):
        call_model(onion, mode, lambda req: "not a response")


# -- composite node hooks ---------------------------------------------------------------


def node_member(name: str, seen: list[tuple[str, list[str], object]], hook: Any) -> Any:
    """A node hook that records what it saw and adds a message and ``plain=name``."""

    def record(state: dict[str, Any]) -> dict[str, Any]:
        seen.append((name, texts(state["messages"]), state.get("plain")))
        return {"messages": [AIMessage(name)], "plain": name}

    return hook(name=name)(record)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("hook", "order"), [(before_model, "abc"), (after_model, "cba")], ids=["before", "after"]
)
def test_node_hooks_run_in_order_each_seeing_the_updates_before_it(
    mode: str, hook: Any, order: str
) -> None:
    seen: list[tuple[str, list[str], object]] = []
    quiet = hook(name="quiet")(lambda state: None)
    onion = compose(
        *(node_member(n, seen, hook) for n in "ab"), quiet, node_member("c", seen, hook)
    )
    method = hook.__name__
    state = {"messages": [HumanMessage("hi")], "plain": "start"}
    if mode == "sync":
        result = getattr(onion, method)(state, RUNTIME)
    else:
        result = asyncio.run(getattr(onion, "a" + method)(state, RUNTIME))
    first, second, third = order
    assert seen == [
        (first, ["hi"], "start"),
        (second, ["hi", first], first),
        (third, ["hi", first, second], second),
    ]
    assert texts(result["messages"]) == list(order)
    assert result["plain"] == third
    assert (texts(state["messages"]), state["plain"]) == (["hi"], "start")


def test_a_jump_stops_the_sequence_and_is_returned() -> None:
    seen: list[tuple[str, list[str], object]] = []

    @before_model(can_jump_to=["end"])
    def stop(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [AIMessage("stopping")], "jump_to": "end"}

    @hook_config(can_jump_to=["model"])
    @before_model
    def other(state: dict[str, Any]) -> None:
        return None

    onion = compose(
        node_member("a", seen, before_model), stop, other, node_member("b", seen, before_model)
    )
    result = onion.before_model({"messages": [HumanMessage("hi")]}, RUNTIME)
    assert [name for name, *_ in seen] == ["a"]
    assert texts(result["messages"]) == ["a", "stopping"]
    assert result["jump_to"] == "end"
    assert result["plain"] == "a"
    assert hook_impls(onion)["before_model"].can_jump_to == ("model", "end")


@pytest.mark.parametrize("mode", MODES)
def test_an_undeclared_jump_from_a_member_names_that_member(mode: str) -> None:
    @after_model(name="sneaky")
    def sneaky(state: dict[str, Any]) -> dict[str, Any]:
        return {"jump_to": "model"}

    onion = compose(after_model(can_jump_to=["model"], name="allowed")(lambda s: None), sneaky)
    state = {"messages": []}
    with pytest.raises(InvalidJumpError, match=rf"'sneaky', hook after_model .*{HERE}"):
        if mode == "sync":
            onion.after_model(state, RUNTIME)
        else:
            asyncio.run(onion.aafter_model(state, RUNTIME))


def test_a_composite_of_quiet_members_returns_none_and_has_only_their_hooks() -> None:
    onion = compose(before_model(lambda s: None), tracing("w", []))
    assert set(hook_impls(onion)) == {"before_model", "wrap_model_call"}
    assert onion.before_model({"messages": []}, RUNTIME) is None
    assert onion.after_model({"messages": []}, RUNTIME) is None


# -- the README pattern: unit-testing an onion with a stub handler ------------------------


def test_readme_unit_test_an_onion_with_a_stub_handler() -> None:
    @wrap_model_call
    def retry(request: ModelRequest[None], handler: Any) -> Any:
        for attempt in range(3):
            try:
                return handler(request)
            except ConnectionError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    @dynamic_prompt
    def be_brief(request: ModelRequest[None]) -> str:
        return "Be brief."

    prompts: list[str | None] = []

    def stub(request: ModelRequest[None]) -> AIMessage:
        prompts.append(request.system_prompt)
        if len(prompts) < 2:
            raise ConnectionError("flaky")
        return AIMessage("ok")

    onion = compose(retry, be_brief)
    assert isinstance(onion, ComposedMiddleware)
    response = onion.wrap_model_call(request(), stub)
    assert texts(response.result) == ["ok"]  # type: ignore[union-attr]
    assert prompts == ["Be brief.", "Be brief."]
