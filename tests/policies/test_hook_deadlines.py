"""``timeout=``: a hook's deadline, and ``HookTimeoutError`` when it passes.

A node hook's deadline covers the hook; a wrap hook's covers its layer and everything inside
it. Sync and async hooks, under ``invoke``/``ainvoke``/``stream``, native or bridged. The
timing assertions use hooks that sleep far longer than their limit (3 s against 0.4 s), and
allow 10 % + 50 ms, so they hold on a loaded machine.
"""

from __future__ import annotations

import asyncio
import pickle
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from harness import Driver, tool_calls
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from support import hi

from funcware import (
    AgentMiddleware,
    HookTimeoutError,
    ModelRequest,
    ToolCallRequest,
    after_agent,
    before_model,
    compose,
    create_agent,
    dynamic_prompt,
    hook_config,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.hooks.middleware import hook_impls
from funcware.policies.hooks import apply_policies, resolve
from funcware.testing import ScriptedChatModel

HERE = __file__
LIMIT = 0.4
SLEEP = 3.0
BOUND = LIMIT * 1.1 + 0.05
EARLIEST = LIMIT - 0.05
"""The deadline's clock starts when the hook is called, a scheduling delay before its first
line runs (several ms on a loaded machine), so the hook may see slightly less than LIMIT."""


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at the end of a test: hung sync hooks wait on it, so no thread outlives the test."""
    event = threading.Event()
    yield event
    event.set()


def _run(driver: Driver, agent: Any, how: str) -> Any:
    if how == "stream":
        return driver.stream(agent, hi(), stream_mode="updates")
    return driver.invoke(agent, hi())


STARTED: list[float] = []


def _started() -> None:
    """Called first thing in a slow hook: the deadline is measured from here."""
    STARTED.append(time.perf_counter())


def _timed_failure(driver: Driver, agent: Any, how: str) -> tuple[HookTimeoutError, float]:
    """The error, and the seconds from the slow hook's start until the run raised it."""
    STARTED.clear()
    with pytest.raises(HookTimeoutError) as caught:
        _run(driver, agent, how)
    ended = time.perf_counter()
    assert len(STARTED) == 1
    return caught.value, ended - STARTED[0]


@pytest.mark.parametrize("how", ["invoke", "stream"])
def test_a_hung_sync_node_hook_fails_at_its_deadline(
    driver: Driver, how: str, release: threading.Event
) -> None:
    @before_model(timeout=LIMIT)
    def hangs(state: Any) -> None:
        _started()
        release.wait(SLEEP)

    agent = create_agent(ScriptedChatModel(responses=["never"]), middleware=[hangs])
    error, elapsed = _timed_failure(driver, agent, how)
    assert EARLIEST <= elapsed < BOUND
    assert isinstance(error, TimeoutError)
    text = str(error)
    assert "middleware 'hangs', hook before_model" in text
    assert f"{HERE}:" in text and "0.4 s" in text
    assert (error.middleware, error.hook, error.timeout) == ("hangs", "before_model", LIMIT)
    # The hung function is still running, on a daemon thread of its own.
    hung = [t for t in threading.enumerate() if t.name == "funcware-deadline:hangs.before_model"]
    assert hung and all(t.daemon for t in hung)


@pytest.mark.parametrize("how", ["invoke", "stream"])
def test_an_async_node_hook_is_cancelled_at_its_deadline(driver: Driver, how: str) -> None:
    cancelled = []

    @before_model(timeout=LIMIT)
    async def sleeps(state: Any) -> None:
        _started()
        try:
            await asyncio.sleep(SLEEP)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    agent = create_agent(ScriptedChatModel(responses=["never"]), middleware=[sleeps])
    error, elapsed = _timed_failure(driver, agent, how)
    assert EARLIEST <= elapsed < BOUND
    assert error.hook == "before_model" and cancelled == [True]


@pytest.mark.parametrize("notes", ["note", "message"])
def test_a_deadline_error_keeps_its_note_and_message_through_pickle(
    driver: Driver, notes: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FUNCWARE_ERROR_NOTES", notes)

    @before_model(timeout=LIMIT)
    async def sleeps(state: Any) -> None:
        _started()
        await asyncio.sleep(SLEEP)

    agent = create_agent(ScriptedChatModel(responses=["never"]), middleware=[sleeps])
    error, _ = _timed_failure(driver, agent, "invoke")
    copy = pickle.loads(pickle.dumps(error))

    assert type(copy) is HookTimeoutError
    assert (copy.middleware, copy.hook, copy.where, copy.timeout) == (
        error.middleware,
        error.hook,
        error.where,
        error.timeout,
    )
    assert str(copy) == str(error)
    assert copy.__notes__ == error.__notes__
    assert any(n.startswith("raised in middleware 'sleeps'") for n in copy.__notes__)
    assert ("raised in middleware 'sleeps'" in str(copy)) is (notes == "message")


def test_a_hook_within_its_deadline_is_untouched(driver: Driver) -> None:
    @before_model(timeout=5)
    def quick(state: Any) -> dict[str, Any]:
        return {"messages": [("user", "and more")]}

    agent = create_agent(ScriptedChatModel(responses=["done"]), middleware=[quick])
    result = driver.invoke(agent, hi())
    assert [m.text for m in result["messages"]] == ["hi", "and more", "done"]


def test_a_timeout_error_of_the_hooks_own_is_not_relabelled(driver: Driver) -> None:
    own = TimeoutError("the upstream service timed out")

    @before_model(timeout=5)
    def raises(state: Any) -> None:
        raise own

    @before_model(name="araises", timeout=5)
    async def araises(state: Any) -> None:
        raise own

    for hook in (raises, araises):
        agent = create_agent(ScriptedChatModel(responses=["x"]), middleware=[hook])
        with pytest.raises(TimeoutError) as caught:
            driver.invoke(agent, hi())
        # (asyncio copies a plain TimeoutError that crosses from a worker thread, so the
        # type and text are compared, not the identity)
        assert type(caught.value) is TimeoutError and str(caught.value) == str(own)


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_model_wrap_deadline_covers_the_model_call(
    driver: Driver, flavour: str, release: threading.Event
) -> None:
    """An outer fallback layer catches the inner layer's deadline and answers instead."""

    @wrap_model_call
    def fallback(request: ModelRequest[Any], handler: Any) -> Any:
        try:
            return handler(request)
        except HookTimeoutError as exc:
            return handler(request.override(model=ScriptedChatModel(responses=[exc.hook])))

    if flavour == "sync":

        @wrap_model_call(name="deadline", timeout=LIMIT)
        def deadline(request: ModelRequest[Any], handler: Any) -> Any:
            return handler(request)

        @wrap_model_call(name="slow")
        def slow(request: ModelRequest[Any], handler: Any) -> Any:
            if request.model.responses == ["never"]:  # type: ignore[attr-defined]
                release.wait(SLEEP)
            return handler(request)

    else:

        @wrap_model_call(name="deadline", timeout=LIMIT)
        async def deadline(request: ModelRequest[Any], handler: Any) -> Any:
            return await handler(request)

        @wrap_model_call(name="slow")
        async def slow(request: ModelRequest[Any], handler: Any) -> Any:
            if request.model.responses == ["never"]:  # type: ignore[attr-defined]
                await asyncio.sleep(SLEEP)
            return await handler(request)

    agent = create_agent(
        ScriptedChatModel(responses=["never"]), middleware=[fallback, deadline, slow]
    )
    start = time.perf_counter()
    result = driver.invoke(agent, hi())
    assert time.perf_counter() - start < BOUND + 0.5
    assert result["messages"][-1].text == "wrap_model_call"


def test_a_tool_wrap_deadline_covers_the_tool(driver: Driver, release: threading.Event) -> None:
    @tool
    def slow_lookup(key: str) -> str:
        """Look a key up, slowly."""
        release.wait(SLEEP)
        return "late"

    @wrap_tool_call(timeout=LIMIT)
    def deadline(request: ToolCallRequest, handler: Any) -> Any:
        return handler(request)

    @wrap_tool_call(name="answer_timeouts")
    def answer_timeouts(request: ToolCallRequest, handler: Any) -> Any:
        try:
            return handler(request)
        except HookTimeoutError as exc:
            return ToolMessage(f"timed out after {exc.timeout:g} s", tool_call_id="call-0")

    model = ScriptedChatModel(responses=[tool_calls(("slow_lookup", {"key": "k"})), "ok"])
    agent = create_agent(model, [slow_lookup], middleware=[answer_timeouts, deadline])
    start = time.perf_counter()
    result = driver.invoke(agent, hi())
    assert time.perf_counter() - start < BOUND + 0.5
    assert [m.text for m in result["messages"]][-2:] == ["timed out after 0.4 s", "ok"]


def test_hook_config_gives_class_methods_a_deadline(
    driver: Driver, release: threading.Event
) -> None:
    class Guard(AgentMiddleware):
        @hook_config(timeout=LIMIT)
        def before_model(self, state: Any, runtime: Any) -> None:
            _started()
            release.wait(SLEEP)

    agent = create_agent(ScriptedChatModel(responses=["x"]), middleware=[Guard()])
    error, elapsed = _timed_failure(driver, agent, "invoke")
    assert elapsed < BOUND and error.middleware == "Guard"
    assert f"{HERE}:" in error.where


def test_hook_config_timeout_above_and_below_a_decorator() -> None:
    @hook_config(timeout=2)
    @before_model
    def above(state: Any) -> None: ...

    @before_model
    @hook_config(timeout=3)
    def below(state: Any) -> None: ...

    @hook_config(timeout=4)
    @dynamic_prompt
    def prompt(request: ModelRequest[Any]) -> str:
        return "be brief"

    assert resolve(hook_impls(above)["before_model"]).options["timeout"] == 2.0
    assert resolve(hook_impls(below)["before_model"]).options["timeout"] == 3.0
    assert resolve(hook_impls(prompt)["wrap_model_call"]).options["timeout"] == 4.0


def test_deadlines_hold_inside_compose(release: threading.Event) -> None:
    @before_model(timeout=LIMIT)
    def hangs(state: Any) -> None:
        _started()
        release.wait(SLEEP)

    agent = create_agent(ScriptedChatModel(responses=["x"]), middleware=[compose(hangs)])
    start = time.perf_counter()
    with pytest.raises(HookTimeoutError):
        agent.invoke(hi())
    assert time.perf_counter() - start < BOUND


def test_an_after_agent_deadline(driver: Driver) -> None:
    @after_agent(timeout=LIMIT)
    async def slow_report(state: Any) -> None:
        _started()
        await asyncio.sleep(SLEEP)

    agent = create_agent(ScriptedChatModel(responses=["x"]), middleware=[slow_report])
    error, elapsed = _timed_failure(driver, agent, "invoke")
    assert elapsed < BOUND and error.hook == "after_agent"


@pytest.mark.parametrize("value", [0, -1, float("inf"), float("nan")])
def test_a_timeout_must_be_a_positive_number(value: float) -> None:
    with pytest.raises(ValueError, match=r"timeout=.*greater than 0") as caught:

        @before_model(timeout=value)
        def hook(state: Any) -> None: ...

    assert f"{HERE}:" in str(caught.value)


@pytest.mark.parametrize("value", ["5", True])
def test_a_timeout_must_be_seconds(value: Any) -> None:
    with pytest.raises(TypeError, match="number of seconds"):

        @wrap_model_call(timeout=value)
        def hook(request: Any, handler: Any) -> Any: ...

    with pytest.raises(TypeError, match="number of seconds"):
        hook_config(timeout=value)(lambda state: None)


def test_without_a_deadline_the_users_function_is_called_directly() -> None:
    """No option: no wrapper between the onion and the user's function (no per-call cost)."""

    def plain(request: Any, handler: Any) -> Any:
        return handler(request)

    def timed(request: Any, handler: Any) -> Any:
        return handler(request)

    plain_impl = apply_policies(hook_impls(wrap_model_call(plain))["wrap_model_call"])
    timed_impl = apply_policies(hook_impls(wrap_model_call(timeout=1)(timed))["wrap_model_call"])
    assert plain_impl.sync is plain
    assert timed_impl.sync is not timed


def test_an_abandoned_sync_layer_starts_no_model_call_after_its_deadline(
    driver: Driver, release: threading.Event
) -> None:
    """The layer's thread runs on past the deadline, but its handler then refuses to run."""
    late: list[BaseException] = []

    @wrap_model_call(timeout=LIMIT)
    def stalls(request: ModelRequest[Any], handler: Any) -> Any:
        release.wait(LIMIT * 3)
        try:
            return handler(request)
        except HookTimeoutError as exc:
            late.append(exc)
            raise

    model = ScriptedChatModel(responses=["never"])
    agent = create_agent(model, middleware=[stalls])
    with pytest.raises(HookTimeoutError):
        driver.invoke(agent, hi())
    time.sleep(LIMIT * 3)
    assert model.calls == [] and len(late) == 1


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_hook_with_a_deadline_can_interrupt_and_resume(driver: Driver, flavour: str) -> None:
    """The hook's thread (sync) or task (async) carries the run's config: interrupt() works."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command, interrupt

    def decide(state: Any) -> dict[str, Any] | None:
        if len(state["messages"]) > 1:
            return None
        return {"messages": [("user", "approved: " + interrupt("ok?"))]}

    if flavour == "sync":

        @before_model(timeout=5)
        def ask(state: Any) -> dict[str, Any] | None:
            return decide(state)

    else:

        @before_model(timeout=5)
        async def ask(state: Any) -> dict[str, Any] | None:
            return decide(state)

    config = {"configurable": {"thread_id": "t"}}
    agent = create_agent(
        ScriptedChatModel(responses=["done"]), middleware=[ask], checkpointer=InMemorySaver()
    )
    assert driver.invoke(agent, hi(), config)["__interrupt__"][0].value == "ok?"
    resumed = driver.invoke(agent, Command(resume="yes"), config)
    assert [m.text for m in resumed["messages"]] == ["hi", "approved: yes", "done"]
