"""``FUNCWARE_ERROR_NOTES``: where a failing hook's note goes.

Unset or ``note``: a PEP 678 note only. ``message``: the same text also ends the
exception's message, when that message is its single string argument shown as such by
``str``; the type, the traceback and the notes stay as they are. Anything else is refused
with a ``ValueError`` chained from the hook's exception. The variable is read only when a
hook fails.
"""

from __future__ import annotations

import asyncio
import threading
import traceback
from typing import Any

import pytest
from harness import Driver, tool_calls
from pydantic import BaseModel, ValidationError
from support import NODE_DECORATORS, QuotaExceeded, funcware_notes, hi, lookup

from funcware import (
    AgentMiddleware,
    HookTimeoutError,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
    before_model,
    create_agent,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.testing import ScriptedChatModel

HERE = __file__
ENV = "FUNCWARE_ERROR_NOTES"


@pytest.fixture
def message_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "message")


def fails(driver: Driver, agent: Any) -> Exception:
    with pytest.raises(Exception) as error:
        driver.invoke(agent, hi())
    return error.value


def the_note(exc: BaseException, name: str, hook: str) -> str:
    """The one funcware note on ``exc``, checked to name ``name``, ``hook`` and this file."""
    (note,) = funcware_notes(exc)
    assert note.startswith(f"raised in middleware {name!r}, hook {hook} (defined at {HERE}:")
    return note


def assert_in_message(exc: BaseException, message: str, name: str, hook: str) -> None:
    note = the_note(exc, name, hook)
    expected = f"{message}\n{note}"
    assert str(exc) == expected
    assert exc.args == (expected,)
    assert repr(exc) == f"{type(exc).__name__}({expected!r})"


# -- node hooks ---------------------------------------------------------------------------


def failing_node_hook(hook: str, flavour: str, exc: Exception) -> AgentMiddleware[Any, Any, Any]:
    def raise_it(state: Any) -> None:
        raise exc

    async def araise_it(state: Any) -> None:
        raise exc

    decorator: Any = NODE_DECORATORS[hook]
    return decorator(name="quota")(raise_it if flavour == "sync" else araise_it)


@pytest.mark.usefixtures("message_mode")
@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize("hook", NODE_DECORATORS)
def test_message_mode_appends_the_note_to_a_node_hooks_exception(
    driver: Driver, hook: str, flavour: str
) -> None:
    raised = QuotaExceeded("quota exceeded for today", remaining=3)
    agent = create_agent(
        ScriptedChatModel(responses=["ok"]), middleware=[failing_node_hook(hook, flavour, raised)]
    )

    exc = fails(driver, agent)

    assert exc is raised and type(exc) is QuotaExceeded and exc.remaining == 3
    assert_in_message(exc, "quota exceeded for today", "quota", hook)
    # The traceback still ends in the user's function.
    assert traceback.extract_tb(exc.__traceback__)[-1].name in {"raise_it", "araise_it"}


@pytest.mark.parametrize("value", [None, "", "note"], ids=["unset", "empty", "note"])
@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_note_mode_leaves_the_message_alone(
    driver: Driver, monkeypatch: pytest.MonkeyPatch, flavour: str, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv(ENV, raising=False)
    else:
        monkeypatch.setenv(ENV, value)
    agent = create_agent(
        ScriptedChatModel(responses=["ok"]),
        middleware=[failing_node_hook("before_model", flavour, QuotaExceeded("no quota"))],
    )

    exc = fails(driver, agent)

    assert str(exc) == "no quota" and exc.args == ("no quota",)
    the_note(exc, "quota", "before_model")


# -- wrap hooks ----------------------------------------------------------------------------


def passthrough_model(name: str, flavour: str) -> AgentMiddleware[Any, Any, Any]:
    def sync(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        return handler(request)

    async def async_(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        return await handler(request)

    return wrap_model_call(name=name)(sync if flavour == "sync" else async_)


def raising_model(name: str, flavour: str) -> AgentMiddleware[Any, Any, Any]:
    def sync(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        handler(request)
        raise QuotaExceeded(f"{name} refused")

    async def async_(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        await handler(request)
        raise QuotaExceeded(f"{name} refused")

    return wrap_model_call(name=name)(sync if flavour == "sync" else async_)


LAYERS = [
    pytest.param(("sync", "async", "sync"), id="sync-async-sync"),
    pytest.param(("async", "sync", "async"), id="async-sync-async"),
]
NAMES = ["outer", "middle", "inner"]


@pytest.mark.usefixtures("message_mode")
@pytest.mark.parametrize("flavours", LAYERS)
@pytest.mark.parametrize("depth", [0, 1, 2], ids=NAMES)
def test_message_mode_appends_once_through_every_wrap_model_layer(
    driver: Driver, flavours: tuple[str, ...], depth: int
) -> None:
    layers = [
        raising_model(name, flavour) if index == depth else passthrough_model(name, flavour)
        for index, (name, flavour) in enumerate(zip(NAMES, flavours, strict=True))
    ]

    exc = fails(driver, create_agent(ScriptedChatModel(responses=["ok"]), middleware=layers))

    assert type(exc) is QuotaExceeded
    assert_in_message(exc, f"{NAMES[depth]} refused", NAMES[depth], "wrap_model_call")
    assert str(exc).count("raised in middleware") == 1


def raising_tool(name: str, flavour: str) -> AgentMiddleware[Any, Any, Any]:
    def sync(request: ToolCallRequest, handler: Any) -> Any:
        raise QuotaExceeded(f"{name} refused {request.tool_call['name']}")

    async def async_(request: ToolCallRequest, handler: Any) -> Any:
        raise QuotaExceeded(f"{name} refused {request.tool_call['name']}")

    return wrap_tool_call(name=name)(sync if flavour == "sync" else async_)


def passthrough_tool(name: str, flavour: str) -> AgentMiddleware[Any, Any, Any]:
    def sync(request: ToolCallRequest, handler: Any) -> Any:
        return handler(request)

    async def async_(request: ToolCallRequest, handler: Any) -> Any:
        return await handler(request)

    return wrap_tool_call(name=name)(sync if flavour == "sync" else async_)


@pytest.mark.usefixtures("message_mode")
@pytest.mark.parametrize("flavours", LAYERS)
@pytest.mark.parametrize("depth", [0, 2], ids=["outer", "inner"])
def test_message_mode_appends_once_through_every_wrap_tool_layer(
    driver: Driver, flavours: tuple[str, ...], depth: int
) -> None:
    layers = [
        raising_tool(name, flavour) if index == depth else passthrough_tool(name, flavour)
        for index, (name, flavour) in enumerate(zip(NAMES, flavours, strict=True))
    ]
    model = ScriptedChatModel(responses=[tool_calls(("lookup", {"key": "k"})), "done"])

    exc = fails(driver, create_agent(model, [lookup], middleware=layers))

    assert type(exc) is QuotaExceeded
    assert_in_message(exc, f"{NAMES[depth]} refused lookup", NAMES[depth], "wrap_tool_call")


@pytest.mark.usefixtures("message_mode")
def test_a_layer_that_re_raises_its_handlers_error_does_not_append_again(
    driver: Driver,
) -> None:
    seen: list[str] = []

    @wrap_model_call
    async def log_and_reraise(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        try:
            return await handler(request)
        except QuotaExceeded as exc:
            seen.append(str(exc))
            raise

    inner = raising_model("inner", "sync")
    exc = fails(
        driver,
        create_agent(ScriptedChatModel(responses=["ok"]), middleware=[log_and_reraise, inner]),
    )

    note = the_note(exc, "inner", "wrap_model_call")
    assert seen == [f"inner refused\n{note}"]  # the outer layer already sees it
    assert_in_message(exc, "inner refused", "inner", "wrap_model_call")


@pytest.mark.usefixtures("message_mode")
def test_an_outer_layers_own_exception_gets_its_own_line_and_the_cause_keeps_its(
    driver: Driver,
) -> None:
    @wrap_model_call
    def translate(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        try:
            return handler(request)
        except QuotaExceeded as exc:
            raise RuntimeError("the assistant is busy, try later") from exc

    exc = fails(
        driver,
        create_agent(
            ScriptedChatModel(responses=["ok"]),
            middleware=[translate, raising_model("inner", "async")],
        ),
    )

    assert type(exc) is RuntimeError
    assert_in_message(exc, "the assistant is busy, try later", "translate", "wrap_model_call")
    assert exc.__cause__ is not None
    assert_in_message(exc.__cause__, "inner refused", "inner", "wrap_model_call")


@pytest.mark.usefixtures("message_mode")
def test_the_same_exception_raised_by_two_runs_carries_the_note_once(driver: Driver) -> None:
    raised = QuotaExceeded("shared instance")
    agent = create_agent(
        ScriptedChatModel(responses=["ok", "ok"]),
        middleware=[failing_node_hook("before_model", "sync", raised)],
    )

    assert fails(driver, agent) is raised
    assert fails(driver, agent) is raised
    assert_in_message(raised, "shared instance", "quota", "before_model")


# -- deadlines --------------------------------------------------------------------------------


@pytest.mark.usefixtures("message_mode")
@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_message_mode_appends_the_note_to_a_hook_timeout(driver: Driver, flavour: str) -> None:
    release = threading.Event()

    def hangs(state: Any) -> None:
        release.wait(5)

    async def ahangs(state: Any) -> None:
        await asyncio.sleep(5)

    hook = before_model(name="slow", timeout=0.2)(hangs if flavour == "sync" else ahangs)
    try:
        exc = fails(driver, create_agent(ScriptedChatModel(responses=["ok"]), middleware=[hook]))
    finally:
        release.set()

    assert type(exc) is HookTimeoutError
    message = (
        f"middleware 'slow', hook before_model (defined at {exc.where}) did not finish within "
        "its timeout of 0.2 s. Raise timeout= if the hook needs longer, or catch "
        "HookTimeoutError in an outer layer to fall back."
    )
    assert_in_message(exc, message, "slow", "before_model")


# -- what keeps its message -----------------------------------------------------------------


class Shouting(Exception):
    def __str__(self) -> str:
        return "A CUSTOM __STR__"


class Strict(BaseModel):
    count: int


def validation_error() -> ValidationError:
    try:
        Strict.model_validate({"count": "many"})
    except ValidationError as exc:
        return exc
    raise AssertionError("pydantic accepted a bad count")


UNCHANGED = {
    "key_error": lambda: KeyError("user_id"),
    "several_args": lambda: Exception("first", "second"),
    "non_string_arg": lambda: ValueError(42),
    "no_args": lambda: RuntimeError(),
    "custom_str": lambda: Shouting("ignored"),
    "import_error": lambda: ImportError("no module named nowhere"),
    "pydantic": validation_error,
}


@pytest.mark.usefixtures("message_mode")
@pytest.mark.parametrize("kind", UNCHANGED)
def test_a_message_that_is_not_one_shown_string_stays_and_the_note_stays_a_note(
    driver: Driver, kind: str
) -> None:
    raised = UNCHANGED[kind]()
    args, text, shown = raised.args, str(raised), repr(raised)
    agent = create_agent(
        ScriptedChatModel(responses=["ok"]),
        middleware=[failing_node_hook("before_model", "async", raised)],
    )

    exc = fails(driver, agent)

    assert exc is raised
    assert (exc.args, str(exc), repr(exc)) == (args, text, shown)
    the_note(exc, "quota", "before_model")


@pytest.mark.usefixtures("message_mode")
def test_an_os_error_with_a_bare_message_is_appended_to(driver: Driver) -> None:
    # OSError has a __str__ of its own, which shows a lone argument as it is.
    agent = create_agent(
        ScriptedChatModel(responses=["ok"]),
        middleware=[failing_node_hook("before_agent", "sync", PermissionError("not you"))],
    )

    exc = fails(driver, agent)

    assert type(exc) is PermissionError
    assert_in_message(exc, "not you", "quota", "before_agent")


@pytest.mark.usefixtures("message_mode")
def test_an_error_that_is_not_a_hooks_is_left_alone(driver: Driver) -> None:
    layers = [passthrough_model("outer", "sync"), passthrough_model("inner", "async")]
    model = ScriptedChatModel(responses=[ConnectionError("provider down")])

    exc = fails(driver, create_agent(model, middleware=layers))

    assert type(exc) is ConnectionError
    assert str(exc) == "provider down" and funcware_notes(exc) == []


# -- a bad value -------------------------------------------------------------------------------


@pytest.mark.parametrize("flavours", LAYERS)
def test_a_bad_value_is_refused_from_the_hooks_exception_once(
    driver: Driver, monkeypatch: pytest.MonkeyPatch, flavours: tuple[str, ...]
) -> None:
    monkeypatch.setenv(ENV, "messages")
    layers = [
        raising_model(name, flavour) if name == "inner" else passthrough_model(name, flavour)
        for name, flavour in zip(NAMES, flavours, strict=True)
    ]

    exc = fails(driver, create_agent(ScriptedChatModel(responses=["ok"]), middleware=layers))

    assert type(exc) is ValueError
    assert str(exc).startswith(
        "FUNCWARE_ERROR_NOTES='messages' is not a valid setting: use 'note' (the default: "
    )
    assert "or 'message' (the note is also appended" in str(exc)
    assert funcware_notes(exc) == []  # outer layers left the refusal alone
    cause = exc.__cause__
    assert type(cause) is QuotaExceeded and str(cause) == "inner refused"
    the_note(cause, "inner", "wrap_model_call")


def test_the_variable_is_not_read_while_hooks_succeed(
    driver: Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, "bogus")
    agent = create_agent(
        ScriptedChatModel(responses=["ok"]),
        middleware=[passthrough_model("outer", "sync"), passthrough_model("inner", "async")],
    )

    result = driver.invoke(agent, hi())

    assert result["messages"][-1].content == "ok"
