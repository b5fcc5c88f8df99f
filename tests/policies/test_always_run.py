"""``@after_agent(always=True)``: cleanup that also runs when the run fails.

On failure the hook gets the last state and ``run_error()``; then the run's own exception
propagates, the same object. Its updates are not persisted, so a failed run resumes from
the checkpoint exactly as without it. It does not run on an interrupt.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import pytest
from harness import Driver, tool_calls
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError
from langgraph.types import Command, interrupt
from support import hi
from typing_extensions import NotRequired

from funcware import (
    AgentMiddleware,
    AgentState,
    HookTimeoutError,
    after_agent,
    before_model,
    create_agent,
    explain,
    hook_config,
    run_error,
    wrap_tool_call,
)
from funcware.testing import ScriptedChatModel

Saver = BaseCheckpointSaver[Any]


class ClosedState(AgentState[Any]):
    closed: NotRequired[bool]


class Recorder:
    """An always-run cleanup that records what it saw: message count and the error."""

    def __init__(self, flavour: str = "sync", name: str = "cleanup") -> None:
        self.seen: list[tuple[int, BaseException | None]] = []
        if flavour == "sync":

            @after_agent(always=True, name=name, state_schema=ClosedState)
            def cleanup(state: Any) -> dict[str, Any]:
                self.seen.append((len(state["messages"]), run_error()))
                return {"closed": True}

        else:

            @after_agent(always=True, name=name, state_schema=ClosedState)
            async def cleanup(state: Any) -> dict[str, Any]:
                self.seen.append((len(state["messages"]), run_error()))
                return {"closed": True}

        self.middleware = cleanup


def _fails(driver: Driver, agent: Any, error: BaseException, how: str, config: Any = None) -> None:
    with pytest.raises(type(error)) as caught:
        if how == "stream":
            driver.stream(agent, hi(), config, stream_mode="updates")
        else:
            driver.invoke(agent, hi(), config)
    assert caught.value is error  # unchanged: the same object


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_on_success_it_runs_once_as_an_after_agent_node(driver: Driver, flavour: str) -> None:
    cleanup = Recorder(flavour)
    agent = create_agent(ScriptedChatModel(responses=["done"]), middleware=[cleanup.middleware])
    result = driver.invoke(agent, hi())
    assert result["closed"] is True
    assert cleanup.seen == [(2, None)]


@pytest.mark.parametrize("how", ["invoke", "stream"])
@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_model_failure_runs_it_with_the_last_state_and_the_error(
    driver: Driver, how: str, flavour: str
) -> None:
    down = RuntimeError("model down")
    cleanup = Recorder(flavour)
    agent = create_agent(ScriptedChatModel(responses=[down]), middleware=[cleanup.middleware])
    _fails(driver, agent, down, how)
    assert cleanup.seen == [(1, down)]


def test_a_hook_failure_runs_it(driver: Driver) -> None:
    broken = ValueError("guard bug")

    @before_model
    def guard(state: Any) -> None:
        raise broken

    cleanup = Recorder()
    agent = create_agent(ScriptedChatModel(responses=["x"]), middleware=[guard, cleanup.middleware])
    _fails(driver, agent, broken, "invoke")
    assert cleanup.seen == [(1, broken)]


def test_a_tool_failure_runs_it_with_the_state_before_the_tools(driver: Driver) -> None:
    broken = KeyError("no such key")

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        raise broken

    @wrap_tool_call
    def no_error_messages(request: Any, handler: Any) -> Any:
        return handler(request)

    cleanup = Recorder()
    model = ScriptedChatModel(responses=[tool_calls(("lookup", {"key": "k"})), "x"])
    agent = create_agent(model, [lookup], middleware=[cleanup.middleware, no_error_messages])
    with pytest.raises(Exception) as caught:
        driver.invoke(agent, hi())
    # ToolNode turns some tool errors into messages; whatever escapes is what the hook saw.
    [(count, seen)] = cleanup.seen
    assert seen is caught.value and count == 2


def test_a_recursion_limit_runs_it(driver: Driver) -> None:
    @tool
    def again() -> str:
        """Loop."""
        return "again"

    cleanup = Recorder()
    model = ScriptedChatModel(responses=[tool_calls(("again", {})) for _ in range(10)])
    agent = create_agent(model, [again], middleware=[cleanup.middleware])
    with pytest.raises(GraphRecursionError) as caught:
        driver.invoke(agent, hi(), {"recursion_limit": 4})
    [(count, seen)] = cleanup.seen
    assert seen is caught.value and count >= 2


def test_a_timeout_runs_it(driver: Driver) -> None:
    @before_model(timeout=0.2)
    async def slow(state: Any) -> None:
        await asyncio.sleep(3)

    cleanup = Recorder("async")
    agent = create_agent(ScriptedChatModel(responses=["x"]), middleware=[slow, cleanup.middleware])
    with pytest.raises(HookTimeoutError) as caught:
        driver.invoke(agent, hi())
    assert cleanup.seen == [(1, caught.value)]


def test_it_does_not_run_on_an_interrupt(driver: Driver) -> None:
    @before_model
    def approve(state: Any) -> None:
        interrupt("approve?")

    cleanup = Recorder()
    config = {"configurable": {"thread_id": "t"}}
    agent = create_agent(
        ScriptedChatModel(responses=["done"]),
        middleware=[approve, cleanup.middleware],
        checkpointer=InMemorySaver(),
    )
    assert "__interrupt__" in driver.invoke(agent, hi(), config)
    assert cleanup.seen == []
    driver.invoke(agent, Command(resume="ok"), config)
    assert cleanup.seen == [(2, None)]


def test_one_that_already_ran_is_not_run_again(driver: Driver) -> None:
    """after_agent runs in reverse: the cleanup (last in the list) ran before the failure."""
    broken = RuntimeError("report failed")

    @after_agent
    def report(state: Any) -> None:
        raise broken

    cleanup = Recorder()
    agent = create_agent(
        ScriptedChatModel(responses=["done"]), middleware=[report, cleanup.middleware]
    )
    _fails(driver, agent, broken, "invoke")
    assert cleanup.seen == [(2, None)]


def test_cleanups_run_in_after_agent_order_and_a_failing_one_is_logged(
    driver: Driver, caplog: pytest.LogCaptureFixture
) -> None:
    order: list[str] = []
    down = RuntimeError("model down")

    @after_agent(always=True)
    def first(state: Any) -> None:
        order.append("first")

    @after_agent(always=True)
    async def second(state: Any) -> None:
        order.append("second")
        raise OSError("could not close")

    agent = create_agent(ScriptedChatModel(responses=[down]), middleware=[first, second])
    with caplog.at_level(logging.ERROR, logger="funcware"):
        _fails(driver, agent, down, "invoke")
    assert order == ["second", "first"]
    [record] = [r for r in caplog.records if r.name == "funcware"]
    assert "middleware 'second', hook after_agent" in record.getMessage()
    assert "OSError: could not close" in record.getMessage()


@pytest.mark.parametrize(
    "mode", ["updates", "values", ["updates", "custom"], ["values", "updates"]]
)
def test_the_stream_is_what_it_would_be_without_it(driver: Driver, mode: Any) -> None:
    def chunks(middleware: list[Any]) -> list[Any]:
        agent = create_agent(ScriptedChatModel(responses=["done"]), middleware=middleware)
        out = driver.stream(agent, hi(), stream_mode=mode)
        return [_plain(c) for c in out]

    @after_agent(name="cleanup")
    def plain_cleanup(state: Any) -> None: ...

    @after_agent(name="cleanup", always=True)
    def always_cleanup(state: Any) -> None: ...

    assert chunks([always_cleanup]) == chunks([plain_cleanup])


def _plain(chunk: Any) -> Any:
    """A chunk with messages replaced by their text (ids differ between runs)."""
    if isinstance(chunk, tuple):
        return tuple(_plain(c) for c in chunk)
    if isinstance(chunk, dict):
        return {k: _plain(v) for k, v in chunk.items()}
    if isinstance(chunk, list):
        return [_plain(c) for c in chunk]
    return chunk.text if isinstance(chunk, AIMessage) or hasattr(chunk, "text") else chunk


def test_the_last_state_without_a_checkpointer_comes_from_the_stream(driver: Driver) -> None:
    """The failure is in the second model call: the state then has the tool's answer."""

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return "v"

    down = RuntimeError("model down")
    for mode in ("updates", "messages", ["custom"]):
        cleanup = Recorder()
        model = ScriptedChatModel(responses=[tool_calls(("lookup", {"key": "k"})), down])
        agent = create_agent(model, [lookup], middleware=[cleanup.middleware])
        with pytest.raises(RuntimeError):
            driver.stream(agent, hi(), stream_mode=mode)
        assert cleanup.seen == [(3, down)], mode


class Flaky:
    """A tool that fails on its first call only."""

    def __init__(self) -> None:
        self.calls = 0

        @tool
        def fetch(key: str) -> str:
            """Fetch a key."""
            self.calls += 1
            if self.calls == 1:
                raise ConnectionError("flaky network")
            return f"fetched {key}"

        self.tool = fetch


@wrap_tool_call
def raise_tool_errors(request: Any, handler: Any) -> Any:
    """Let tool errors escape (ToolNode would otherwise answer some with a message)."""
    result = handler(request)
    if getattr(result, "status", None) == "error":
        raise ConnectionError(result.content)
    return result


def _resume_run(
    driver: Driver, checkpointer: Saver, thread: dict[str, Any], with_cleanup: bool
) -> tuple[list[str], list[str], Any]:
    flaky = Flaky()
    cleanup = Recorder()
    middleware = [raise_tool_errors, *([cleanup.middleware] if with_cleanup else [])]
    model = ScriptedChatModel(responses=[tool_calls(("fetch", {"key": "k"})), "done"])
    agent = create_agent(
        model,
        [flaky.tool],
        middleware=middleware,
        checkpointer=checkpointer,
        state_schema=ClosedState,
    )
    with pytest.raises(ConnectionError):
        driver.invoke(agent, hi(), thread)
    failed = driver.get_state(agent, thread)
    after_failure = [m.text for m in failed.values["messages"]]
    assert "closed" not in failed.values  # the failure-time cleanup wrote nothing
    assert failed.next == ("tools",)
    if with_cleanup:
        assert [count for count, _ in cleanup.seen] == [2]
    result = driver.invoke(agent, None, thread)
    final = [m.text for m in result["messages"]]
    return after_failure, final, result.get("closed")


def test_resuming_after_a_failure_is_the_same_with_or_without_it(
    driver: Driver, checkpointer: Saver
) -> None:
    thread_a = {"configurable": {"thread_id": f"with-cleanup-{uuid.uuid4()}"}}
    thread_b = {"configurable": {"thread_id": f"without-cleanup-{uuid.uuid4()}"}}
    with_it = _resume_run(driver, checkpointer, thread_a, True)
    without = _resume_run(driver, checkpointer, thread_b, False)
    assert with_it[:2] == without[:2]
    assert with_it[1] == ["hi", "", "fetched k", "done"]
    assert (with_it[2], without[2]) == (True, None)


def test_with_a_checkpointer_the_last_state_is_the_checkpoints(driver: Driver) -> None:
    down = RuntimeError("model down")

    class Secret(AgentState[Any]):
        token: NotRequired[str]

    @before_model(state_schema=Secret)
    def login(state: Any) -> dict[str, Any] | None:
        return None if state.get("token") else {"token": "abc"}

    seen: list[Any] = []

    @after_agent(always=True)
    def logout(state: Any) -> None:
        seen.append(state.get("token"))

    agent = create_agent(
        ScriptedChatModel(responses=[down]),
        middleware=[login, logout],
        checkpointer=InMemorySaver(),
    )
    _fails(driver, agent, down, "invoke", {"configurable": {"thread_id": "t"}})
    assert seen == ["abc"]


def test_with_config_keeps_it(driver: Driver) -> None:
    down = RuntimeError("model down")
    cleanup = Recorder()
    agent = create_agent(ScriptedChatModel(responses=[down]), middleware=[cleanup.middleware])
    _fails(driver, agent.with_config({"tags": ["x"]}), down, "invoke")
    assert cleanup.seen == [(1, down)]


def test_hook_config_marks_a_class_after_agent() -> None:
    class Pool(AgentMiddleware):
        def __init__(self) -> None:
            self.closed = 0

        @hook_config(always=True)
        def after_agent(self, state: Any, runtime: Any) -> None:
            self.closed += 1

    pool = Pool()
    down = RuntimeError("model down")
    agent = create_agent(ScriptedChatModel(responses=[down]), middleware=[pool])
    with pytest.raises(RuntimeError):
        agent.invoke(hi())
    assert pool.closed == 1
    assert "Pool [always]" in str(explain(agent))


def test_always_is_for_after_agent_only() -> None:
    with pytest.raises(TypeError, match="only after_agent hooks can always run"):

        @before_model
        @hook_config(always=True)
        def guard(state: Any) -> None: ...

    class Wrong(AgentMiddleware):
        @hook_config(always=True)
        def before_model(self, state: Any, runtime: Any) -> None: ...

    with pytest.raises(TypeError, match="only after_agent hooks can always run"):
        create_agent(ScriptedChatModel(responses=["x"]), middleware=[Wrong()])
    with pytest.raises(TypeError, match="always=True"):
        before_model(always=True)(lambda state: None)  # type: ignore[call-overload]


def test_an_agent_without_it_has_no_run_wrap() -> None:
    from langgraph.graph.state import CompiledStateGraph

    from funcware.policies.always import AlwaysRun

    @after_agent
    def plain(state: Any) -> None: ...

    @after_agent(always=True)
    def cleanup(state: Any) -> None: ...

    agent = create_agent(ScriptedChatModel(responses=["x"]), middleware=[plain])
    assert isinstance(agent, CompiledStateGraph)
    assert not any(isinstance(wrap, AlwaysRun) for wrap in agent.run_wraps)
    guarded = create_agent(ScriptedChatModel(responses=["x"]), middleware=[cleanup])
    # One always-run wrap, innermost (the per-run choice, funcware.runs, sits outside it).
    assert [isinstance(wrap, AlwaysRun) for wrap in guarded.run_wraps][-1:] == [True]
    assert sum(isinstance(wrap, AlwaysRun) for wrap in guarded.run_wraps) == 1
    assert type(guarded) is type(agent)  # one compiled-graph class; the cleanup is data


@pytest.mark.parametrize(
    "options",
    [
        {"version": "v2"},
        {"version": "v2", "stream_mode": "values"},
        {"subgraphs": True},
        {"subgraphs": True, "stream_mode": "values"},
        {"subgraphs": True, "stream_mode": ["updates", "values"]},
    ],
)
def test_stream_formats_are_kept_and_failures_seen(driver: Driver, options: Any) -> None:
    def run(middleware: Any, responses: list[Any]) -> list[Any]:
        agent = create_agent(ScriptedChatModel(responses=responses), middleware=[middleware])
        return [_plain(c) for c in driver.stream(agent, hi(), **options)]

    @after_agent(name="cleanup", state_schema=ClosedState)
    def plain_cleanup(state: Any) -> dict[str, Any]:
        return {"closed": True}

    cleanup = Recorder()
    assert run(cleanup.middleware, ["done"]) == run(plain_cleanup, ["done"])
    cleanup.seen.clear()
    down = RuntimeError("model down")
    with pytest.raises(RuntimeError):
        run(cleanup.middleware, [down])
    assert cleanup.seen == [(1, down)]


def test_an_agent_inside_a_parent_graph_cleans_up_when_it_fails(driver: Driver) -> None:
    from langgraph.graph import START, StateGraph

    down = RuntimeError("model down")
    cleanup = Recorder()
    inner = create_agent(ScriptedChatModel(responses=[down]), middleware=[cleanup.middleware])
    parent: StateGraph[Any, Any, Any, Any] = StateGraph(AgentState)
    parent.add_node("agent", inner)
    parent.add_edge(START, "agent")
    graph = parent.compile()
    with pytest.raises(RuntimeError) as caught:
        driver.invoke(graph, hi())
    assert caught.value is down and cleanup.seen == [(1, down)]


def test_astream_events_and_batch_are_guarded_too() -> None:
    down = RuntimeError("model down")
    cleanup = Recorder()
    agent = create_agent(ScriptedChatModel(responses=[down, down]), middleware=[cleanup.middleware])

    async def events() -> None:
        async for _ in agent.astream_events(hi(), version="v2"):
            pass

    with pytest.raises(RuntimeError):
        asyncio.run(events())
    with pytest.raises(RuntimeError):
        agent.batch([hi()])
    assert cleanup.seen == [(1, down), (1, down)]
