"""``on_error="continue"``: a middleware whose failures are logged and passed over.

A failing node hook counts as having returned ``None``; a failing wrap layer as absent (its
handler's result is used). Errors from inside a layer, langgraph's interrupts and
cancellation are never swallowed. Sync and async, ``invoke``/``ainvoke``/``stream``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from harness import Driver, tool_calls
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt
from support import hi

from funcware import (
    AgentMiddleware,
    HookTimeoutError,
    ModelRequest,
    ToolCallRequest,
    after_model,
    before_model,
    create_agent,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.errors import BrokenStackError
from funcware.testing import ScriptedChatModel

HERE = __file__


def _warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "funcware" and r.levelno == logging.WARNING]


@pytest.mark.parametrize("how", ["invoke", "stream"])
@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_failing_observer_node_hook_is_logged_and_passed_over(
    driver: Driver, how: str, flavour: str, caplog: pytest.LogCaptureFixture
) -> None:
    if flavour == "sync":

        @after_model(on_error="continue")
        def metrics(state: Any) -> dict[str, Any]:
            raise ConnectionError("metrics backend down")

    else:

        @after_model(on_error="continue")
        async def metrics(state: Any) -> dict[str, Any]:
            raise ConnectionError("metrics backend down")

    agent = create_agent(ScriptedChatModel(responses=["answer"]), middleware=[metrics])
    with caplog.at_level(logging.WARNING, logger="funcware"):
        if how == "stream":
            chunks = driver.stream(agent, hi(), stream_mode="updates")
            assert [next(iter(c)) for c in chunks] == ["model", "metrics.after_model"]
            assert chunks[1] == {"metrics.after_model": None}
        else:
            assert driver.invoke(agent, hi())["messages"][-1].text == "answer"
    [record] = _warnings(caplog)
    message = record.getMessage()
    assert "middleware 'metrics', hook after_model" in message and f"{HERE}:" in message
    assert "ConnectionError: metrics backend down" in message
    assert record.exc_info is not None and record.exc_info[0] is ConnectionError
    assert (record.funcware_middleware, record.funcware_hook) == ("metrics", "after_model")  # type: ignore[attr-defined]


def test_the_default_policy_raises(driver: Driver) -> None:
    @after_model
    def metrics(state: Any) -> None:
        raise ConnectionError("metrics backend down")

    agent = create_agent(ScriptedChatModel(responses=["answer"]), middleware=[metrics])
    with pytest.raises(ConnectionError):
        driver.invoke(agent, hi())


def test_a_class_attribute_sets_the_policy(
    driver: Driver, caplog: pytest.LogCaptureFixture
) -> None:
    class Audit(AgentMiddleware):
        on_error = "continue"

        def before_model(self, state: Any, runtime: Any) -> None:
            raise RuntimeError("audit log full")

        async def awrap_model_call(self, request: Any, handler: Any) -> Any:
            raise RuntimeError("audit wrap broken")

    agent = create_agent(ScriptedChatModel(responses=["answer"]), middleware=[Audit()])
    with caplog.at_level(logging.WARNING, logger="funcware"):
        assert driver.invoke(agent, hi())["messages"][-1].text == "answer"
    hooks = [r.funcware_hook for r in _warnings(caplog)]  # type: ignore[attr-defined]
    assert hooks == ["before_model", "wrap_model_call"]


@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize("when", ["before", "after"])
def test_a_failing_model_wrap_counts_as_absent(driver: Driver, flavour: str, when: str) -> None:
    """Failing before its handler: the handler runs as if the layer were absent; failing
    after it: the handler's result is used. Either way the model is called once."""
    if flavour == "sync":

        @wrap_model_call(on_error="continue")
        def flaky(request: ModelRequest[Any], handler: Any) -> Any:
            if when == "before":
                raise ValueError("before")
            handler(request.override(system_message=None))
            raise ValueError("after")

    else:

        @wrap_model_call(on_error="continue")
        async def flaky(request: ModelRequest[Any], handler: Any) -> Any:
            if when == "before":
                raise ValueError("before")
            await handler(request.override(system_message=None))
            raise ValueError("after")

    model = ScriptedChatModel(responses=["answer"])
    agent = create_agent(model, middleware=[flaky])
    assert driver.invoke(agent, hi())["messages"][-1].text == "answer"
    assert len(model.calls) == 1


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_an_error_from_inside_the_layer_is_not_swallowed(driver: Driver, flavour: str) -> None:
    if flavour == "sync":

        @wrap_model_call(on_error="continue")
        def observer(request: ModelRequest[Any], handler: Any) -> Any:
            return handler(request)

    else:

        @wrap_model_call(on_error="continue")
        async def observer(request: ModelRequest[Any], handler: Any) -> Any:
            return await handler(request)

    down = RuntimeError("model down")
    agent = create_agent(ScriptedChatModel(responses=[down]), middleware=[observer])
    with pytest.raises(RuntimeError) as caught:
        driver.invoke(agent, hi())
    assert caught.value is down


def test_a_layer_that_swaps_the_inner_error_lets_the_inner_error_through(driver: Driver) -> None:
    @wrap_model_call(on_error="continue")
    def translate(request: ModelRequest[Any], handler: Any) -> Any:
        try:
            return handler(request)
        except RuntimeError as exc:
            raise ValueError("translated") from exc

    down = RuntimeError("model down")
    agent = create_agent(ScriptedChatModel(responses=[down]), middleware=[translate])
    with pytest.raises(RuntimeError) as caught:
        driver.invoke(agent, hi())
    assert caught.value is down


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_failing_tool_wrap_counts_as_absent(driver: Driver, flavour: str) -> None:
    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return f"value of {key}"

    if flavour == "sync":

        @wrap_tool_call(on_error="continue")
        def tracer(request: ToolCallRequest, handler: Any) -> Any:
            raise KeyError("tracer not configured")

    else:

        @wrap_tool_call(on_error="continue")
        async def tracer(request: ToolCallRequest, handler: Any) -> Any:
            raise KeyError("tracer not configured")

    model = ScriptedChatModel(responses=[tool_calls(("lookup", {"key": "k"})), "done"])
    result = driver.invoke(create_agent(model, [lookup], middleware=[tracer]), hi())
    assert [m.text for m in result["messages"]][-2:] == ["value of k", "done"]
    assert isinstance(result["messages"][-2], ToolMessage)


def test_a_deadline_with_continue_fails_open(
    driver: Driver, caplog: pytest.LogCaptureFixture
) -> None:
    @before_model(timeout=0.2, on_error="continue")
    async def slow_metrics(state: Any) -> None:
        await asyncio.sleep(3)

    agent = create_agent(ScriptedChatModel(responses=["answer"]), middleware=[slow_metrics])
    with caplog.at_level(logging.WARNING, logger="funcware"):
        assert driver.invoke(agent, hi())["messages"][-1].text == "answer"
    [record] = _warnings(caplog)
    assert record.exc_info is not None and record.exc_info[0] is HookTimeoutError


def test_a_timed_out_layer_whose_handler_is_still_running_raises(driver: Driver) -> None:
    """No result to go on with: the model call the layer was waiting for has not returned."""

    @wrap_model_call(timeout=0.2, on_error="continue")
    async def deadline(request: ModelRequest[Any], handler: Any) -> Any:
        return await handler(request)

    @wrap_model_call
    async def slow(request: ModelRequest[Any], handler: Any) -> Any:
        await asyncio.sleep(3)
        return await handler(request)

    agent = create_agent(ScriptedChatModel(responses=["x"]), middleware=[deadline, slow])
    with pytest.raises(HookTimeoutError):
        driver.invoke(agent, hi())


def test_an_interrupt_is_never_swallowed(driver: Driver) -> None:
    @before_model(on_error="continue")
    def approve(state: Any) -> None:
        if interrupt("approve?") != "yes":
            raise PermissionError("denied")

    config = {"configurable": {"thread_id": "t"}}
    agent = create_agent(
        ScriptedChatModel(responses=["answer"]), middleware=[approve], checkpointer=InMemorySaver()
    )
    paused = driver.invoke(agent, hi(), config)
    assert paused["__interrupt__"][0].value == "approve?"
    resumed = driver.invoke(agent, Command(resume="yes"), config)
    assert resumed["messages"][-1].text == "answer"


def test_cancellation_is_never_swallowed(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[str] = []

    @before_model(on_error="continue")
    async def waits(state: Any) -> None:
        try:
            await asyncio.sleep(3)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    agent = create_agent(ScriptedChatModel(responses=["answer"]), middleware=[waits])

    async def main() -> None:
        task = asyncio.ensure_future(agent.ainvoke(hi()))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with caplog.at_level(logging.WARNING, logger="funcware"):
        asyncio.run(main())
    assert seen == ["cancelled"] and not _warnings(caplog)


def test_an_unknown_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="on_error='ignore'") as caught:

        @before_model(on_error="ignore")  # type: ignore[arg-type]
        def hook(state: Any) -> None: ...

    assert f"{HERE}:" in str(caught.value)

    class Sloppy(AgentMiddleware):
        on_error = "skip"  # type: ignore[assignment]

        def before_model(self, state: Any, runtime: Any) -> None: ...

    with pytest.raises((ValueError, BrokenStackError), match="middleware 'Sloppy'"):
        create_agent(ScriptedChatModel(responses=["x"]), middleware=[Sloppy()])
