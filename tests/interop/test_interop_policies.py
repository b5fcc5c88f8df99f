"""Deadlines, failure policies and always-run cleanup with LangChain middleware mixed in.

LangChain ``AgentMiddleware`` classes sit beside funcware middleware in one funcware agent:
their failures trigger always-run cleanup, a funcware deadline covers a LangChain layer
inside it, funcware's ``hook_config`` gives a LangChain class's hooks a deadline or
``always=True``, and LangChain's own ``on_error`` attribute (``ToolErrorMiddleware``'s
callback) is left to LangChain. Needs the ``langchain`` extra (CI requires it).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from harness import Driver, tool_calls
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from support import hi, require_langchain

from funcware import (
    HookTimeoutError,
    after_agent,
    before_model,
    create_agent,
    explain,
    hook_config,
    run_error,
    wrap_model_call,
)
from funcware.interop import to_langchain
from funcware.testing import ScriptedChatModel

lm = require_langchain("langchain.agents.middleware")
lc_agents = require_langchain("langchain.agents")


def test_a_langchain_hook_failure_runs_funcware_cleanup(driver: Driver) -> None:
    broken = ValueError("langchain guard bug")

    class LcGuard(lm.AgentMiddleware):  # type: ignore[misc]
        def before_model(self, state: Any, runtime: Any) -> None:
            raise broken

    seen: list[Any] = []

    @after_agent(always=True)
    def cleanup(state: Any) -> None:
        seen.append((len(state["messages"]), run_error()))

    agent = create_agent(
        ScriptedChatModel(responses=["x"]),
        middleware=[LcGuard(), cleanup, lm.ModelCallLimitMiddleware(run_limit=3)],
    )
    with pytest.raises(ValueError) as caught:
        driver.invoke(agent, hi())
    assert caught.value is broken and seen == [(1, broken)]


def test_a_funcware_deadline_covers_a_langchain_layer_inside_it(driver: Driver) -> None:
    class LcSlow(lm.AgentMiddleware):  # type: ignore[misc]
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            time.sleep(3)
            return handler(request)

        async def awrap_model_call(self, request: Any, handler: Any) -> Any:
            await asyncio.sleep(3)
            return await handler(request)

    @wrap_model_call(timeout=0.3)
    def deadline(request: Any, handler: Any) -> Any:
        return handler(request)

    agent = create_agent(ScriptedChatModel(responses=["x"]), middleware=[deadline, LcSlow()])
    start = time.perf_counter()
    with pytest.raises(HookTimeoutError, match="middleware 'deadline', hook wrap_model_call"):
        driver.invoke(agent, hi())
    assert time.perf_counter() - start < 0.3 * 1.1 + 0.05 + 0.5


def test_funcware_hook_config_on_a_langchain_class(driver: Driver) -> None:
    class LcPool(lm.AgentMiddleware):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.closed: list[Any] = []

        @hook_config(timeout=0.3)
        async def abefore_model(self, state: Any, runtime: Any) -> None:
            if len(state["messages"]) > 1:
                await asyncio.sleep(3)

        @hook_config(always=True)
        def after_agent(self, state: Any, runtime: Any) -> None:
            self.closed.append(run_error())

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return "v"

    pool = LcPool()
    model = ScriptedChatModel(responses=[tool_calls(("lookup", {"key": "k"})), "done"])
    agent = create_agent(model, [lookup], middleware=[pool])
    with pytest.raises(HookTimeoutError) as caught:
        driver.invoke(agent, hi())
    assert pool.closed == [caught.value]
    text = str(explain(agent))
    assert "LcPool [timeout 0.3s]" in text and "LcPool [always]" in text


def test_a_langchain_on_error_attribute_keeps_its_own_meaning(driver: Driver) -> None:
    """ToolErrorMiddleware's ``on_error`` is a callback, not funcware's failure policy."""

    @tool
    def broken(key: str) -> str:
        """Fails."""
        raise LookupError(key)

    handled = lm.ToolErrorMiddleware(on_error=lambda exc, request: f"handled {exc!r}")
    model = ScriptedChatModel(responses=[tool_calls(("broken", {"key": "k"})), "done"])
    agent = create_agent(model, [broken], middleware=[handled])
    result = driver.invoke(agent, hi())
    assert "handled LookupError('k')" in result["messages"][-2].text


def test_resume_after_a_langchain_failure_with_cleanup(driver: Driver) -> None:
    class LcFlaky(lm.AgentMiddleware):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.calls = 0

        def after_model(self, state: Any, runtime: Any) -> None:
            self.calls += 1
            if self.calls == 1:
                raise ConnectionError("once")

    @before_model(on_error="continue")
    def metrics(state: Any) -> None:
        raise RuntimeError("metrics down")

    closed: list[Any] = []

    @after_agent(always=True)
    def cleanup(state: Any) -> None:
        closed.append(type(run_error()).__name__ if run_error() else None)

    config = {"configurable": {"thread_id": "t"}}
    agent = create_agent(
        ScriptedChatModel(responses=["done"]),
        middleware=[metrics, LcFlaky(), cleanup],
        checkpointer=InMemorySaver(),
    )
    with pytest.raises(ConnectionError):
        driver.invoke(agent, hi(), config)
    result = driver.invoke(agent, None, config)
    assert [m.text for m in result["messages"]] == ["hi", "done"]
    assert closed == ["ConnectionError", None]


def test_to_langchain_keeps_deadlines_and_policies_and_refuses_always() -> None:
    """Inside LangChain's create_agent a converted hook keeps timeout= and on_error=;
    always=True cannot hold there (LangChain skips after_agent on failure), so it is refused."""

    @before_model(timeout=0.3)
    async def slow(state: Any) -> None:
        await asyncio.sleep(3)

    @before_model(on_error="continue")
    def metrics(state: Any) -> None:
        raise RuntimeError("metrics down")

    ok = lc_agents.create_agent(
        ScriptedChatModel(responses=["done"]), middleware=[to_langchain(metrics)]
    )
    assert ok.invoke(hi())["messages"][-1].text == "done"
    timed = lc_agents.create_agent(
        ScriptedChatModel(responses=["x"]), middleware=[to_langchain(slow)]
    )
    start = time.perf_counter()
    with pytest.raises(HookTimeoutError):
        asyncio.run(timed.ainvoke(hi()))
    assert time.perf_counter() - start < 0.3 * 1.1 + 0.05 + 0.5

    @after_agent(always=True)
    def cleanup(state: Any) -> None: ...

    with pytest.raises(TypeError, match=r"always=True.*LangChain.s create_agent"):
        to_langchain(cleanup)


def test_a_langchain_class_may_declare_funcware_s_policy(
    driver: Driver, caplog: pytest.LogCaptureFixture
) -> None:
    class LcMetrics(lm.AgentMiddleware):  # type: ignore[misc]
        on_error = "continue"

        def after_model(self, state: Any, runtime: Any) -> None:
            raise ConnectionError("metrics down")

    agent = create_agent(ScriptedChatModel(responses=["done"]), middleware=[LcMetrics()])
    with caplog.at_level("WARNING", logger="funcware"):
        assert driver.invoke(agent, hi())["messages"][-1].text == "done"
    assert any("middleware 'LcMetrics', hook after_model" in r.getMessage() for r in caplog.records)
