"""Exceptions from hooks: they propagate as themselves, with one note naming their origin.

With a checkpointer, a failure leaves the last good checkpoint intact, and once the cause
is fixed the same thread resumes with ``invoke(None, config)``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from harness import Driver, contents, tool_calls
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from support import NODE_DECORATORS, QuotaExceeded, funcware_notes, hi, lookup

from funcware import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
    after_model,
    before_model,
    compose,
    create_agent,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.testing import ScriptedChatModel

HERE = __file__
Saver = BaseCheckpointSaver[Any]


@tool
def broken(key: str) -> str:
    """A tool that fails."""
    raise KeyError(key)


def one_tool_call() -> list[Any]:
    return [tool_calls(("lookup", {"key": "k"})), "done"]


def fails(driver: Driver, agent: Any, config: Any = None) -> Exception:
    with pytest.raises(Exception) as error:
        driver.invoke(agent, hi(), config)
    return error.value


def assert_noted_once(exc: BaseException, name: str, hook: str) -> None:
    notes = funcware_notes(exc)
    assert len(notes) == 1, notes
    assert f"middleware {name!r}, hook {hook}" in notes[0]
    assert HERE in notes[0]


# -- node hooks ---------------------------------------------------------------------


def failing_node_hook(hook: str, flavour: str) -> AgentMiddleware[Any, Any, Any]:
    def raise_quota(state: Any) -> None:
        raise QuotaExceeded("quota exceeded for today", remaining=3)

    async def araise_quota(state: Any) -> None:
        raise QuotaExceeded("quota exceeded for today", remaining=3)

    decorator: Any = NODE_DECORATORS[hook]
    return decorator(name="quota")(raise_quota if flavour == "sync" else araise_quota)


@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize("hook", NODE_DECORATORS)
def test_a_node_hook_exception_propagates_as_itself_with_one_note(
    driver: Driver, hook: str, flavour: str
) -> None:
    agent = create_agent(
        ScriptedChatModel(responses=["ok"]), middleware=[failing_node_hook(hook, flavour)]
    )

    exc = fails(driver, agent)

    assert type(exc) is QuotaExceeded
    assert str(exc) == "quota exceeded for today"
    assert exc.remaining == 3
    assert_noted_once(exc, "quota", hook)


def test_a_class_middleware_hook_is_noted_with_its_class_file(driver: Driver) -> None:
    class Guard(AgentMiddleware[Any, Any, Any]):
        def before_model(self, state: Any, runtime: Any) -> None:
            raise PermissionError("not allowed")

    exc = fails(driver, create_agent(ScriptedChatModel(responses=[]), middleware=[Guard()]))

    assert type(exc) is PermissionError
    assert_noted_once(exc, "Guard", "before_model")


def test_a_member_of_a_composite_is_named_not_the_composite(driver: Driver) -> None:
    @before_model
    def fine(state: Any) -> None:
        return None

    agent = create_agent(
        ScriptedChatModel(responses=["ok"]),
        middleware=[compose(fine, failing_node_hook("before_model", "sync"))],
    )

    assert_noted_once(fails(driver, agent), "quota", "before_model")


# -- wrap hooks ---------------------------------------------------------------------


def passthrough_model(name: str, flavour: str) -> AgentMiddleware[Any, Any, Any]:
    def sync(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        return handler(request)

    async def async_(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        return await handler(request)

    return wrap_model_call(name=name)(sync if flavour == "sync" else async_)


def raising_model(name: str, flavour: str, after_handler: bool) -> AgentMiddleware[Any, Any, Any]:
    def sync(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        if after_handler:
            handler(request)
        raise QuotaExceeded(f"{name} refused")

    async def async_(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        if after_handler:
            await handler(request)
        raise QuotaExceeded(f"{name} refused")

    return wrap_model_call(name=name)(sync if flavour == "sync" else async_)


LAYERS = [
    pytest.param(("sync", "async", "sync"), id="sync-async-sync"),
    pytest.param(("async", "sync", "async"), id="async-sync-async"),
]


@pytest.mark.parametrize("after_handler", [False, True], ids=["before_handler", "after_handler"])
@pytest.mark.parametrize("flavours", LAYERS)
@pytest.mark.parametrize("depth", [0, 1, 2], ids=["outer", "middle", "inner"])
def test_a_wrap_model_call_exception_gets_one_note_through_every_layer(
    driver: Driver, flavours: tuple[str, ...], depth: int, after_handler: bool
) -> None:
    names = ["outer", "middle", "inner"]
    layers = [
        raising_model(name, flavour, after_handler)
        if index == depth
        else passthrough_model(name, flavour)
        for index, (name, flavour) in enumerate(zip(names, flavours, strict=True))
    ]
    model = ScriptedChatModel(responses=["ok"])
    exc = fails(driver, create_agent(model, middleware=layers))

    assert type(exc) is QuotaExceeded
    assert str(exc) == f"{names[depth]} refused"
    assert_noted_once(exc, names[depth], "wrap_model_call")
    assert len(model.calls) == (1 if after_handler else 0)


def bad_value_model(name: str, flavour: str) -> AgentMiddleware[Any, Any, Any]:
    """A model wrap that calls its handler, then returns what no model wrap may."""

    def sync(request: ModelRequest[Any], handler: Any) -> Any:
        return (handler(request), "extra")

    async def async_(request: ModelRequest[Any], handler: Any) -> Any:
        return (await handler(request), "extra")

    return wrap_model_call(name=name)(sync if flavour == "sync" else async_)


@pytest.mark.parametrize("flavours", LAYERS)
@pytest.mark.parametrize("depth", [0, 1, 2], ids=["outer", "middle", "inner"])
def test_a_layer_that_returns_a_bad_value_is_the_one_noted(
    driver: Driver, flavours: tuple[str, ...], depth: int
) -> None:
    names = ["outer", "middle", "inner"]
    layers = [
        bad_value_model(name, flavour) if index == depth else passthrough_model(name, flavour)
        for index, (name, flavour) in enumerate(zip(names, flavours, strict=True))
    ]
    exc = fails(driver, create_agent(ScriptedChatModel(responses=["ok"]), middleware=layers))

    assert type(exc) is TypeError
    assert str(exc).startswith(f"middleware {names[depth]!r}, hook wrap_model_call (defined at ")
    assert "returned a tuple" in str(exc)
    assert_noted_once(exc, names[depth], "wrap_model_call")


def passthrough_tool(name: str, flavour: str) -> AgentMiddleware[Any, Any, Any]:
    def sync(request: ToolCallRequest, handler: Any) -> Any:
        return handler(request)

    async def async_(request: ToolCallRequest, handler: Any) -> Any:
        return await handler(request)

    return wrap_tool_call(name=name)(sync if flavour == "sync" else async_)


def raising_tool(name: str, flavour: str) -> AgentMiddleware[Any, Any, Any]:
    def sync(request: ToolCallRequest, handler: Any) -> Any:
        raise QuotaExceeded(f"{name} refused {request.tool_call['name']}")

    async def async_(request: ToolCallRequest, handler: Any) -> Any:
        raise QuotaExceeded(f"{name} refused {request.tool_call['name']}")

    return wrap_tool_call(name=name)(sync if flavour == "sync" else async_)


@pytest.mark.parametrize("flavours", LAYERS)
@pytest.mark.parametrize("depth", [0, 2], ids=["outer", "inner"])
def test_a_wrap_tool_call_exception_gets_one_note_through_every_layer(
    driver: Driver, flavours: tuple[str, ...], depth: int
) -> None:
    names = ["outer", "middle", "inner"]
    layers = [
        raising_tool(name, flavour) if index == depth else passthrough_tool(name, flavour)
        for index, (name, flavour) in enumerate(zip(names, flavours, strict=True))
    ]
    exc = fails(
        driver,
        create_agent(ScriptedChatModel(responses=one_tool_call()), [lookup], middleware=layers),
    )

    assert type(exc) is QuotaExceeded
    assert str(exc) == f"{names[depth]} refused lookup"
    assert_noted_once(exc, names[depth], "wrap_tool_call")


def test_an_outer_layer_that_raises_its_own_exception_is_the_one_named(driver: Driver) -> None:
    @wrap_model_call
    def translate(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        try:
            return handler(request)
        except QuotaExceeded as exc:
            raise RuntimeError("the assistant is busy, try later") from exc

    inner = raising_model("inner", "async", after_handler=False)
    exc = fails(
        driver, create_agent(ScriptedChatModel(responses=[]), middleware=[translate, inner])
    )

    assert type(exc) is RuntimeError
    assert_noted_once(exc, "translate", "wrap_model_call")
    assert type(exc.__cause__) is QuotaExceeded
    assert_noted_once(exc.__cause__, "inner", "wrap_model_call")


def test_a_layer_that_re_raises_what_came_out_of_its_handler_adds_no_note(
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

    inner = raising_model("inner", "sync", after_handler=False)
    exc = fails(
        driver, create_agent(ScriptedChatModel(responses=[]), middleware=[log_and_reraise, inner])
    )

    assert seen == ["inner refused"]
    assert_noted_once(exc, "inner", "wrap_model_call")


# -- exceptions that are not the middleware's ---------------------------------------


@pytest.mark.parametrize("flavours", LAYERS)
def test_an_exception_from_the_model_gets_no_middleware_note(
    driver: Driver, flavours: tuple[str, ...]
) -> None:
    layers = [passthrough_model(f"layer{i}", f) for i, f in enumerate(flavours)]
    model = ScriptedChatModel(responses=[ConnectionError("provider down")])

    exc = fails(driver, create_agent(model, middleware=layers))

    assert type(exc) is ConnectionError
    assert str(exc) == "provider down"
    assert funcware_notes(exc) == []


def test_an_exception_from_the_model_without_wraps_gets_no_note(driver: Driver) -> None:
    model = ScriptedChatModel(responses=[ConnectionError("provider down")])

    exc = fails(driver, create_agent(model))

    assert type(exc) is ConnectionError
    assert funcware_notes(exc) == []


def test_an_exception_from_a_tool_gets_no_middleware_note(driver: Driver) -> None:
    layers = [passthrough_tool("outer", "sync"), passthrough_tool("inner", "async")]
    model = ScriptedChatModel(responses=[tool_calls(("broken", {"key": "k"})), "done"])

    exc = fails(driver, create_agent(model, [broken], middleware=layers))

    assert type(exc) is KeyError
    assert funcware_notes(exc) == []


def test_a_retrying_layer_that_recovers_leaves_no_trace(driver: Driver) -> None:
    @wrap_model_call
    def retry(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        try:
            return handler(request)
        except ConnectionError:
            return handler(request)

    model = ScriptedChatModel(responses=[ConnectionError("blip"), "ok"])
    result = driver.invoke(create_agent(model, middleware=[retry]), hi())

    assert contents(result["messages"]) == ["hi", "ok"]
    assert len(model.calls) == 2


def test_a_timeout_raised_by_an_outer_layer_is_named_after_it() -> None:
    @wrap_model_call
    async def deadline(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        return await asyncio.wait_for(handler(request), timeout=0.01)

    @wrap_model_call
    async def slow(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        await asyncio.sleep(5)
        return await handler(request)

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[deadline, slow])

    with pytest.raises(asyncio.TimeoutError) as error:  # the builtin only from 3.11
        asyncio.run(agent.ainvoke(hi()))
    assert_noted_once(error.value, "deadline", "wrap_model_call")


# -- failing with a checkpointer, then resuming -------------------------------------


class Switch:
    """A failure that can be switched off: the cause of the failure, fixed later."""

    def __init__(self) -> None:
        self.on = True

    def check(self, where: str) -> None:
        if self.on:
            raise QuotaExceeded(f"{where} failed")


def failing(where: str, switch: Switch) -> AgentMiddleware[Any, Any, Any]:
    if where == "before_model":

        @before_model(name="flaky")
        def hook(state: Any) -> None:
            switch.check(where)

        return hook
    if where == "after_model":

        @after_model(name="flaky")
        async def ahook(state: Any) -> None:
            switch.check(where)

        return ahook
    if where == "wrap_model_call":

        @wrap_model_call(name="flaky")
        def around(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
            switch.check(where)
            return handler(request)

        return around

    @wrap_tool_call(name="flaky")
    async def around_tool(request: ToolCallRequest, handler: Any) -> Any:
        switch.check(where)
        return await handler(request)

    return around_tool


# where it fails -> (the node to resume at, messages in the last good checkpoint,
#                    model calls when it fails, model calls in all)
RESUME_CASES = {
    "before_model": ("flaky.before_model", 1, 0, 2),
    "wrap_model_call": ("model", 1, 0, 2),
    "after_model": ("flaky.after_model", 2, 1, 2),
    "wrap_tool_call": ("tools", 2, 1, 2),
}


@pytest.mark.parametrize("where", RESUME_CASES)
def test_after_a_failure_the_thread_resumes_once_the_cause_is_fixed(
    driver: Driver, checkpointer: Saver, thread: dict[str, Any], where: str
) -> None:
    node, kept, calls_at_failure, calls_in_all = RESUME_CASES[where]
    switch = Switch()
    runs: list[str] = []

    @tool
    def counted(key: str) -> str:
        """Look a key up, counting runs."""
        runs.append(key)
        return f"value of {key}"

    model = ScriptedChatModel(responses=[tool_calls(("counted", {"key": "k"})), "done"])
    agent = create_agent(
        model, [counted], middleware=[failing(where, switch)], checkpointer=checkpointer
    )

    exc = fails(driver, agent, thread)

    assert type(exc) is QuotaExceeded
    assert_noted_once(exc, "flaky", where)
    snapshot = driver.get_state(agent, thread)
    assert snapshot.next == (node,)
    assert len(snapshot.values["messages"]) == kept
    assert contents(snapshot.values["messages"])[0] == "hi"
    assert len(model.calls) == calls_at_failure
    assert runs == []

    switch.on = False
    done = driver.invoke(agent, None, thread)

    assert contents(done["messages"]) == ["hi", "", "value of k", "done"]
    assert isinstance(done["messages"][2], ToolMessage)
    assert len(model.calls) == calls_in_all
    assert runs == ["k"]
    assert driver.get_state(agent, thread).next == ()


# Sync API only: with the async API langgraph cancels the siblings still in flight when
# one task fails (as it does in LangChain's agents), so a slow sync tool may run again on
# resume; the cancellation tests below show that funcware starts nothing once cancelled.
@pytest.mark.parametrize("driver", ["sync"], indirect=True)
def test_a_failed_tool_call_resumes_without_rerunning_its_siblings(
    driver: Driver, checkpointer: Saver, thread: dict[str, Any]
) -> None:
    switch = Switch()
    runs: list[str] = []

    @tool
    def counted(key: str) -> str:
        """Look a key up, counting runs."""
        runs.append(key)
        return f"value of {key}"

    @wrap_tool_call
    def picky(request: ToolCallRequest, handler: Any) -> Any:
        if request.tool_call["args"]["key"] == "b":
            switch.check("picky")
        return handler(request)

    calls = tool_calls(("counted", {"key": "a"}), ("counted", {"key": "b"}))
    model = ScriptedChatModel(responses=[calls, "done"])
    agent = create_agent(model, [counted], middleware=[picky], checkpointer=checkpointer)

    fails(driver, agent, thread)
    assert runs == ["a"]
    switch.on = False
    done = driver.invoke(agent, None, thread)

    assert sorted(runs) == ["a", "b"]  # "a" ran once, before the failure
    assert contents(done["messages"])[-1] == "done"
    assert len(model.calls) == 2


# -- cancellation -------------------------------------------------------------------


def cancel_while_running(agent: Any, started: threading.Event) -> None:
    """``ainvoke``, cancel it once ``started`` is set, then give stray threads time to act."""

    async def run() -> None:
        task = asyncio.ensure_future(agent.ainvoke(hi()))
        await asyncio.get_running_loop().run_in_executor(None, started.wait, 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.3)  # a leaked call would happen now, on this live loop

    asyncio.run(run())


def test_a_cancelled_ainvoke_stops_a_bridged_sync_layer_from_calling_the_model() -> None:
    started = threading.Event()
    outcome: list[str] = []

    @wrap_model_call
    def slow(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        started.set()
        time.sleep(0.1)  # the run is cancelled meanwhile
        try:
            return handler(request)
        except Exception:
            outcome.append("an Exception")  # a retry layer would retry it: must not happen
            raise
        except BaseException as exc:
            outcome.append(type(exc).__name__)
            raise

    model = ScriptedChatModel(responses=["ok"])
    cancel_while_running(create_agent(model, middleware=[slow]), started)

    assert model.calls == []
    assert outcome == ["CancelledError"]


def test_a_cancelled_ainvoke_stops_a_bridged_sync_layer_from_running_the_tool() -> None:
    started = threading.Event()
    runs: list[str] = []

    @tool
    def counted(key: str) -> str:
        """Look a key up, counting runs."""
        runs.append(key)
        return key

    @wrap_tool_call
    def slow(request: ToolCallRequest, handler: Any) -> Any:
        started.set()
        time.sleep(0.1)
        return handler(request)

    model = ScriptedChatModel(responses=[tool_calls(("counted", {"key": "k"})), "done"])
    cancel_while_running(create_agent(model, [counted], middleware=[slow]), started)

    assert runs == []
    assert len(model.calls) == 1
