"""funcware.hooks.decorators: lifting plain functions into middleware, and hook_config."""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from typing_extensions import NotRequired

from funcware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
    after_agent,
    after_model,
    before_agent,
    before_model,
    dynamic_prompt,
    hook_config,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.hooks import FunctionMiddleware
from funcware.hooks.middleware import hook_impls

DECORATORS: dict[str, Callable[..., Any]] = {
    "before_agent": before_agent,
    "before_model": before_model,
    "after_model": after_model,
    "after_agent": after_agent,
    "wrap_model_call": wrap_model_call,
    "wrap_tool_call": wrap_tool_call,
    "dynamic_prompt": dynamic_prompt,
}
HOOK_OF = {name: name for name in DECORATORS} | {"dynamic_prompt": "wrap_model_call"}
NODE = ("before_agent", "before_model", "after_model", "after_agent")
WRAP = ("wrap_model_call", "wrap_tool_call", "dynamic_prompt")
ARGS = {name: ("state", "runtime") for name in NODE} | {
    "wrap_model_call": ("request", "handler"),
    "wrap_tool_call": ("request", "handler"),
    "dynamic_prompt": ("request",),
}
STATE: AgentState[Any] = {"messages": [HumanMessage("hi")]}
RUNTIME: Runtime[None] = Runtime(context=None)
BASENAME = os.path.basename(__file__)


class MyState(AgentState[Any]):
    count: NotRequired[int]


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return query


def sample(decorator: str, is_async: bool = False) -> Callable[..., Any]:
    """A fresh, well-formed function for ``decorator`` that returns its arguments."""
    kind = "prompt" if decorator == "dynamic_prompt" else ARGS[decorator][0]
    if kind == "state" and not is_async:

        def hook(state: Any, runtime: Any) -> Any:
            """Sample hook."""
            return ("ran", state, runtime)

    elif kind == "state":

        async def hook(state: Any, runtime: Any) -> Any:
            """Sample hook."""
            return ("ran", state, runtime)

    elif kind == "request" and not is_async:

        def hook(request: Any, handler: Any) -> Any:
            """Sample hook."""
            return ("ran", request, handler)

    elif kind == "request":

        async def hook(request: Any, handler: Any) -> Any:
            """Sample hook."""
            return ("ran", request, handler)

    elif not is_async:

        def hook(request: Any) -> Any:
            """Sample hook."""
            return ("ran", request)

    else:

        async def hook(request: Any) -> Any:
            """Sample hook."""
            return ("ran", request)

    return hook


def def_line(name: str) -> int:
    """The line of ``def name(`` in this file, read from the source itself."""
    lines = Path(__file__).read_text().splitlines()
    pattern = re.compile(rf"\s*(async )?def {name}\(")
    return next(n for n, text in enumerate(lines, 1) if pattern.match(text))


@pytest.fixture
def model_request() -> ModelRequest[None]:
    return ModelRequest(
        model=GenericFakeChatModel(messages=iter([])),
        messages=[HumanMessage("hi")],
        system_prompt="old prompt",
    )


RESPONSE = ModelResponse(result=[AIMessage("done")])


class Recorder:
    """A stub handler that records the requests it gets and returns a fixed result."""

    def __init__(self, result: Any = RESPONSE) -> None:
        self.result = result
        self.requests: list[Any] = []

    def __call__(self, request: Any) -> Any:
        self.requests.append(request)
        return self.result

    async def asynchronous(self, request: Any) -> Any:
        return self(request)


# --- forms, flavours, generated classes -------------------------------------------------


@pytest.mark.parametrize("form", ["bare", "called", "named"])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("decorator", DECORATORS)
def test_every_form_makes_a_middleware_with_one_hook_of_the_functions_flavour(
    decorator: str, is_async: bool, form: str
) -> None:
    deco, func = DECORATORS[decorator], sample(decorator, is_async)
    middleware = {"bare": deco, "called": deco(), "named": deco(name="custom")}[form](func)

    assert isinstance(middleware, AgentMiddleware)
    assert middleware.name == ("custom" if form == "named" else "hook")
    impls = hook_impls(middleware)
    assert list(impls) == [HOOK_OF[decorator]]
    impl = impls[HOOK_OF[decorator]]  # type: ignore[index]
    assert (impl.sync is not None, impl.async_ is not None) == (not is_async, is_async)
    assert inspect.iscoroutinefunction(impl.async_ or impl.sync) is is_async


@pytest.mark.parametrize("decorator", DECORATORS)
def test_generated_class_is_named_and_documented_after_the_function(decorator: str) -> None:
    func = sample(decorator)
    middleware = DECORATORS[decorator](func)
    cls = type(middleware)

    assert issubclass(cls, FunctionMiddleware)
    assert cls is not FunctionMiddleware
    assert cls.__name__ == middleware.name == middleware.__name__ == "hook"
    assert cls.__qualname__ == func.__qualname__ == "sample.<locals>.hook"
    assert cls.__module__ == middleware.__module__ == __name__
    assert cls.__doc__ == middleware.__doc__ == "Sample hook."
    assert f"middleware 'hook' from {__file__}:" in repr(middleware)

    named = DECORATORS[decorator](name="Custom")(func)
    assert type(named) is not cls
    assert type(named).__name__ == type(named).__qualname__ == named.name == "Custom"
    assert type(named).__module__ == __name__
    assert type(named).__doc__ == "Sample hook."


@pytest.mark.parametrize("decorator", DECORATORS)
async def test_instance_is_callable_exactly_like_the_function(decorator: str) -> None:
    args = ARGS[decorator]
    func = sample(decorator)
    middleware = DECORATORS[decorator](func)
    assert middleware.__wrapped__ is func
    assert middleware(*args) == ("ran", *args)
    assert middleware(**{arg: arg for arg in args}) == ("ran", *args)

    afunc = sample(decorator, is_async=True)
    amiddleware = DECORATORS[decorator](afunc)
    assert amiddleware.__wrapped__ is afunc
    coroutine = amiddleware(*args)
    assert inspect.iscoroutine(coroutine)
    assert await coroutine == ("ran", *args)


@pytest.mark.parametrize("decorator", NODE)
async def test_node_hooks_take_state_or_state_and_runtime(decorator: str) -> None:
    deco, calls = DECORATORS[decorator], []

    def state_only(state: Any) -> dict[str, int]:
        calls.append((state,))
        return {"n": 1}

    def with_runtime(state: Any, runtime: Any) -> dict[str, int]:
        calls.append((state, runtime))
        return {"n": 2}

    async def astate_only(state: Any) -> dict[str, int]:
        calls.append((state,))
        return {"n": 3}

    async def awith_runtime(state: Any, runtime: Any = None) -> dict[str, int]:
        calls.append((state, runtime))
        return {"n": 4}

    assert getattr(deco(state_only), decorator)(STATE, RUNTIME) == {"n": 1}
    assert getattr(deco(with_runtime), decorator)(STATE, RUNTIME) == {"n": 2}
    assert await getattr(deco(astate_only), "a" + decorator)(STATE, RUNTIME) == {"n": 3}
    assert await getattr(deco(awith_runtime), "a" + decorator)(STATE, RUNTIME) == {"n": 4}
    assert calls == [(STATE,), (STATE, RUNTIME), (STATE,), (STATE, RUNTIME)]


# --- bad signatures ---------------------------------------------------------------------


def no_args() -> None: ...
def one_arg(request: Any) -> None: ...
def two_args(request: Any, extra: Any) -> None: ...
def three_args(state: Any, runtime: Any, extra: Any) -> None: ...
def keyword_only(state: Any, *, required: Any) -> None: ...
async def async_no_args() -> None: ...


BAD_SIGNATURES = {name: [no_args, three_args, keyword_only, async_no_args] for name in NODE} | {
    "wrap_model_call": [no_args, one_arg, three_args, async_no_args],
    "wrap_tool_call": [no_args, one_arg, three_args, async_no_args],
    "dynamic_prompt": [no_args, two_args, async_no_args],
}


@pytest.mark.parametrize(
    ("decorator", "func"),
    [(decorator, func) for decorator, funcs in BAD_SIGNATURES.items() for func in funcs],
    ids=lambda value: getattr(value, "__name__", value),
)
def test_bad_signature_is_refused_naming_the_function_and_its_file_and_line(
    decorator: str, func: Callable[..., Any]
) -> None:
    with pytest.raises(TypeError) as info:
        DECORATORS[decorator]()(func)
    message = str(info.value)
    assert f"@{decorator}" in message
    assert func.__name__ in message
    assert f"{BASENAME}:{def_line(func.__name__)}" in message
    assert str(inspect.signature(func)) in message


def test_bad_signature_in_decorator_syntax_points_at_the_start_of_the_definition() -> None:
    with pytest.raises(TypeError, match="misdefined") as info:

        @before_model
        def misdefined() -> None: ...

    # Like tracebacks and inspect.getsourcelines: the first line of the definition.
    assert f"{BASENAME}:{def_line('misdefined') - 1}" in str(info.value)


# --- jumps ------------------------------------------------------------------------------


@pytest.mark.parametrize("decorator", NODE)
def test_can_jump_to_is_recorded_and_validated(decorator: str) -> None:
    deco = DECORATORS[decorator]
    middleware = deco(can_jump_to=["end", "model"])(sample(decorator))
    assert hook_impls(middleware)[decorator].can_jump_to == ("model", "end")
    assert hook_impls(deco(sample(decorator)))[decorator].can_jump_to == ()

    with pytest.raises(ValueError) as info:
        deco(can_jump_to=["end", "finish"])(one_arg)
    message = str(info.value)
    assert "'finish'" in message
    assert "one_arg" in message
    assert f"{BASENAME}:{def_line('one_arg')}" in message
    assert "model, tools, end" in message


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("decorator", NODE)
def test_hook_config_above_and_below_the_hook_decorator_unite(
    decorator: str, is_async: bool
) -> None:
    func = sample(decorator, is_async)
    assert hook_config(can_jump_to=["tools"])(func) is func
    middleware = DECORATORS[decorator](can_jump_to=["model"])(func)
    assert hook_config(can_jump_to=["end"])(middleware) is middleware
    assert hook_impls(middleware)[decorator].can_jump_to == ("model", "tools", "end")


def test_hook_config_in_decorator_syntax() -> None:
    @hook_config(can_jump_to=["end"])
    @after_model
    @hook_config(can_jump_to=["tools"])
    def check(state: Any) -> None:
        return None

    @before_agent
    @hook_config(can_jump_to=["model"])
    async def acheck(state: Any) -> None:
        return None

    assert hook_impls(check)["after_model"].can_jump_to == ("tools", "end")
    assert hook_impls(acheck)["before_agent"].can_jump_to == ("model",)


def test_hook_config_on_class_methods_unites_targets() -> None:
    class Guard(AgentMiddleware):
        @hook_config(can_jump_to=["end"])
        @hook_config(can_jump_to=["model"])
        def before_agent(self, state: Any, runtime: Any) -> None:
            return None

        @hook_config(can_jump_to=["tools"])
        async def abefore_agent(self, state: Any, runtime: Any) -> None:
            return None

    assert hook_impls(Guard())["before_agent"].can_jump_to == ("model", "tools", "end")


def test_hook_config_rejects_an_unknown_target() -> None:
    with pytest.raises(ValueError, match=r"'later'.*Allowed targets: model, tools, end") as info:
        hook_config(can_jump_to=["later"])(one_arg)  # type: ignore[list-item]
    assert f"one_arg (defined at {__file__}:{def_line('one_arg')})" in str(info.value)


@pytest.mark.parametrize("order", ["above", "below"])
@pytest.mark.parametrize("decorator", WRAP)
def test_hook_config_on_a_wrap_hook_is_refused(decorator: str, order: str) -> None:
    func = sample(decorator)
    config = hook_config(can_jump_to=["end"])
    with pytest.raises(TypeError) as info:
        if order == "above":
            config(DECORATORS[decorator](func))
        else:
            DECORATORS[decorator](config(func))
    message = str(info.value)
    assert "@hook_config" in message
    assert "wrap_model_call" in message or "wrap_tool_call" in message
    assert "jumps apply to before_agent, before_model, after_model and after_agent" in message
    assert f"hook (defined at {__file__}:" in message


# --- what is not a function -------------------------------------------------------------


class NotAFunction:
    pass


@pytest.mark.parametrize("decorator", DECORATORS)
def test_non_functions_are_refused_with_a_clear_message(decorator: str) -> None:
    deco = DECORATORS[decorator]
    cases: list[tuple[Callable[[], Any], list[str]]] = [
        (lambda: deco(NotAFunction), ["the class NotAFunction", "subclass AgentMiddleware"]),
        (lambda: deco()(None), ["expects a function, got None"]),
        (lambda: deco("limit"), ["got 'limit' (str)", f"@{decorator}(name='limit')"]),
        (lambda: deco(deco(sample(decorator))), ["already a middleware", "compose()"]),
    ]
    for attempt, fragments in cases:
        with pytest.raises(TypeError) as info:
            attempt()
        assert str(info.value).startswith(f"@{decorator} ")
        for fragment in fragments:
            assert fragment in str(info.value)


@pytest.mark.parametrize("target", [NotAFunction, None, "end"])
def test_hook_config_refuses_non_functions(target: Any) -> None:
    match = "@hook_config (expects a function|was applied to the class NotAFunction)"
    with pytest.raises(TypeError, match=match):
        hook_config(can_jump_to=["end"])(target)


def test_bad_name_and_state_schema_are_refused() -> None:
    with pytest.raises(TypeError, match=r"name=''.*one_arg"):
        before_model(name="")(one_arg)
    with pytest.raises(TypeError, match=r"state_schema=42.*one_arg"):
        before_model(state_schema=42)(one_arg)  # type: ignore[arg-type]


# --- options ----------------------------------------------------------------------------

OPTIONS = {name: {"state_schema", "tools"} for name in (*NODE, "wrap_model_call")} | {
    "wrap_tool_call": {"tools"},
    "dynamic_prompt": set(),
}


@pytest.mark.parametrize("decorator", DECORATORS)
def test_state_schema_and_tools_land_on_the_instance(decorator: str) -> None:
    given = {"state_schema": MyState, "tools": (lookup,)}
    options = {key: value for key, value in given.items() if key in OPTIONS[decorator]}
    middleware = DECORATORS[decorator](**options)(sample(decorator))
    default = DECORATORS[decorator](sample(decorator))

    assert middleware.state_schema is (MyState if "state_schema" in options else AgentState)
    assert middleware.tools == ([lookup] if "tools" in options else [])
    assert default.state_schema is AgentState
    assert default.tools == []


# --- wrap hooks and dynamic prompts through the middleware methods ----------------------


@pytest.mark.parametrize("returned", ["be brief", SystemMessage("be brief")], ids=["str", "msg"])
async def test_dynamic_prompt_replaces_the_system_message(
    model_request: ModelRequest[None], returned: str | SystemMessage
) -> None:
    seen: list[ModelRequest[None]] = []

    @dynamic_prompt
    def prompt(request: ModelRequest[None]) -> str | SystemMessage:
        seen.append(request)
        return returned

    @dynamic_prompt
    async def aprompt(request: ModelRequest[None]) -> str | SystemMessage:
        return prompt(request)

    handler = Recorder()
    assert prompt.wrap_model_call(model_request, handler) is RESPONSE
    assert await aprompt.awrap_model_call(model_request, handler.asynchronous) is RESPONSE

    assert seen == [model_request, model_request]
    for sent in handler.requests:
        assert sent is not model_request
        assert sent.system_message == SystemMessage("be brief")
        assert sent.system_prompt == "be brief"
        assert sent.messages == model_request.messages
        if isinstance(returned, SystemMessage):
            assert sent.system_message is returned
    assert model_request.system_prompt == "old prompt"


async def test_dynamic_prompt_returning_a_wrong_type_names_the_function(
    model_request: ModelRequest[None],
) -> None:
    @dynamic_prompt
    def wrong(request: Any) -> Any:
        return 42

    @dynamic_prompt
    async def awrong(request: Any) -> Any:
        return ["a list"]

    handler = Recorder()
    with pytest.raises(TypeError, match=r"wrong \(defined at .*\) returned an int") as info:
        wrong.wrap_model_call(model_request, handler)
    assert f"{BASENAME}:" in str(info.value)
    with pytest.raises(TypeError, match=r"awrong \(defined at .*\) returned a list"):
        await awrong.awrap_model_call(model_request, handler.asynchronous)
    assert handler.requests == []


async def test_wrap_model_call_runs_through_the_middleware_method(
    model_request: ModelRequest[None],
) -> None:
    @wrap_model_call
    def no_tools(request: ModelRequest[None], handler: Callable[..., Any]) -> Any:
        return handler(request.override(tool_choice="none"))

    @wrap_model_call
    async def short(request: ModelRequest[None], handler: Callable[..., Awaitable[Any]]) -> Any:
        response = await handler(request.override(messages=request.messages[-1:]))
        return response.result[0]

    handler = Recorder()
    assert no_tools.wrap_model_call(model_request, handler) is RESPONSE
    assert handler.requests[0].tool_choice == "none"
    assert model_request.tool_choice is None
    assert await short.awrap_model_call(model_request, handler.asynchronous) is RESPONSE.result[0]
    assert handler.requests[1].messages == model_request.messages[-1:]


async def test_wrap_tool_call_runs_through_the_middleware_method() -> None:
    request = ToolCallRequest(
        tool_call={"name": "lookup", "args": {"query": "q"}, "id": "call-1"},
        tool=lookup,
        state=STATE,
        runtime=None,  # type: ignore[arg-type]
    )

    @wrap_tool_call
    def shout(request: ToolCallRequest, handler: Callable[..., Any]) -> ToolMessage:
        result = handler(request)
        return ToolMessage(content=result.text.upper(), tool_call_id=result.tool_call_id)

    @wrap_tool_call
    async def ashout(request: ToolCallRequest, handler: Callable[..., Any]) -> ToolMessage:
        result = await handler(request)
        return ToolMessage(content=result.text.upper(), tool_call_id=result.tool_call_id)

    handler = Recorder(ToolMessage(content="found", tool_call_id="call-1"))
    for result in (
        shout.wrap_tool_call(request, handler),
        await ashout.awrap_tool_call(request, handler.asynchronous),
    ):
        assert isinstance(result, ToolMessage)
        assert (result.content, result.tool_call_id) == ("FOUND", "call-1")
    assert handler.requests == [request, request]


def test_hook_config_keeps_the_declared_order() -> None:
    @hook_config(can_jump_to=["tools", "end", "model"])
    def method(state: Any) -> None:
        return None

    assert method.__can_jump_to__ == ["tools", "end", "model"]  # type: ignore[attr-defined]

    @hook_config(can_jump_to=["end", "model"])
    @before_model
    def decorated(state: Any) -> None:
        return None

    assert type(decorated).before_model.__can_jump_to__ == ["end", "model"]  # type: ignore[attr-defined]
