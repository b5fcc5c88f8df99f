"""``funcware.observe.record()``: one entry per hook execution and wrap-layer call, in order.

Every outcome kind is produced here; a stack of decorated, class, composed and LangChain
middleware gives the same record in sync, async, streamed and resumed-after-interrupt runs;
runs in other threads and concurrent tasks stay apart; nothing is recorded outside a block.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt
from support import REQUIRE_LANGCHAIN, call, calls_tool, hi

from funcware import (
    AgentMiddleware,
    after_model,
    before_model,
    compose,
    create_agent,
    explain,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.observe import OUTCOMES, Layer, RunRecord, record
from funcware.testing import ScriptedChatModel


@tool
def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: shipped"


def _agent(middleware: list[Any], responses: list[Any] | None = None, **kw: Any) -> Any:
    model = ScriptedChatModel(responses=responses or ["done"])
    return create_agent(model, [lookup], middleware=middleware, **kw)


def _summary(run: RunRecord) -> list[tuple[str, str, int]]:
    return [(f"{x.middleware}.{x.hook}", str(x.outcome), x.depth) for x in run.layers]


# ---------------------------------------------------------------- every outcome kind


@wrap_model_call
def passes(request: Any, handler: Callable[[Any], Any]) -> Any:
    return handler(request)


@wrap_model_call
def prompts(request: Any, handler: Callable[[Any], Any]) -> Any:
    return handler(request.override(system_prompt="be brief"))


@wrap_model_call
def answers_itself(request: Any, handler: Callable[[Any], Any]) -> Any:
    return AIMessage("cached answer")


@wrap_model_call(writes=["handler.retry"])
def retries(request: Any, handler: Callable[[Any], Any]) -> Any:
    try:
        return handler(request)
    except ConnectionError:
        return handler(request)


@before_model(can_jump_to=["end"])
def stops(state: Any) -> Any:
    return {"jump_to": "end"}


@before_model
def breaks(state: Any) -> Any:
    raise ValueError("broken hook")


@before_model(on_error="continue")
def breaks_quietly(state: Any) -> Any:
    raise ValueError("ignored")


@before_model(timeout=0.05)
async def slow(state: Any) -> Any:
    await asyncio.sleep(1)


@after_model
def asks(state: Any) -> Any:
    interrupt("approve?")


def test_passed_modified_and_their_request_fields() -> None:
    with record() as run:
        _agent([passes, prompts]).invoke(hi())
    first, second = run.layers
    assert (first.middleware, first.hook, first.outcome) == ("passes", "wrap_model_call", "passed")
    assert (second.outcome, second.changed, second.handler_calls) == (
        "modified",
        ("system_message",),
        1,
    )
    assert second.parent is first and (first.depth, second.depth) == (0, 1)
    assert first.duration_s >= second.duration_s > 0


def test_short_circuited_layers_never_call_their_handler() -> None:
    with record() as run:
        _agent([passes, answers_itself]).invoke(hi())
    assert _summary(run) == [
        ("passes.wrap_model_call", "passed", 0),
        ("answers_itself.wrap_model_call", "short_circuited", 1),
    ]
    assert run.layers[1].handler_calls == 0


def test_retried_layers_count_their_handler_calls() -> None:
    flaky = ScriptedChatModel(responses=[ConnectionError("flaky"), "done"])
    with record() as run:
        create_agent(flaky, middleware=[retries]).invoke(hi())
    (layer,) = run.layers
    assert (layer.outcome, layer.handler_calls) == ("retried", 2)


def test_a_jump_is_recorded_with_its_target() -> None:
    with record() as run:
        _agent([stops]).invoke(hi())
    (layer,) = run.layers
    assert (layer.outcome, layer.jump_to, layer.wrote) == ("jumped", "end", ())


def test_a_node_hook_that_writes_state_is_modified() -> None:
    @before_model
    def adds(state: Any) -> Any:
        return {"messages": [HumanMessage("and more")]}

    with record() as run:
        _agent([adds]).invoke(hi())
    assert (run.layers[0].outcome, run.layers[0].wrote) == ("modified", ("messages",))


def test_failed_and_continued_hooks_keep_their_error() -> None:
    with record() as run, pytest.raises(ValueError, match="broken hook"):
        _agent([breaks_quietly, breaks]).invoke(hi())
    quiet, loud = run.layers
    assert quiet.outcome == "continued" and str(quiet.error) == "ignored"
    assert loud.outcome == "failed" and str(loud.error) == "broken hook"


def test_a_hook_past_its_deadline_timed_out() -> None:
    with record() as run, pytest.raises(TimeoutError):
        _agent([slow]).invoke(hi())
    assert run.layers[0].outcome == "timed_out"


def test_an_interrupting_hook_is_interrupted() -> None:
    with record() as run:
        _agent([asks], checkpointer=InMemorySaver()).invoke(
            hi(), {"configurable": {"thread_id": "t"}}
        )
    assert [x.outcome for x in run.layers] == ["interrupted"]


def test_wrap_tool_call_layers_are_recorded_per_tool_call() -> None:
    @wrap_tool_call
    def tool_guard(request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request)

    responses = [
        calls_tool(call("lookup", {"order": "1"}, "a"), call("lookup", {"order": "2"}, "b"))
    ]
    with record() as run:
        _agent([tool_guard], [*responses, "done"]).invoke(hi())
    assert _summary(run) == [("tool_guard.wrap_tool_call", "passed", 0)] * 2


def test_every_outcome_kind_is_produced_by_this_module() -> None:
    """Each kind is asserted by one of the tests above; a new kind must get its own test."""
    produced = {
        "passed",
        "modified",
        "short_circuited",
        "jumped",
        "retried",
        "interrupted",
        "failed",
        "timed_out",
        "continued",
    }
    assert set(OUTCOMES) == produced


# ---------------------------------------------------------------- one stack, every way to run


class Audit(AgentMiddleware):
    """A class middleware: a wrap layer and an after_model hook."""

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request)

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        return await handler(request)

    def after_model(self, state: Any, runtime: Any) -> Any:
        return None


@before_model
def greet(state: Any) -> Any:
    return None


class Gate:
    """An after_model hook that pauses for approval when asked to."""

    def __init__(self) -> None:
        self.pausing = False

        @after_model(name="gate")
        def gate(state: Any) -> Any:
            if self.pausing:
                interrupt("approve?")

        self.middleware = gate


def _langchain_layer() -> Any:
    try:
        from langchain.agents.middleware import AgentMiddleware as LCMiddleware
    except ImportError:
        if os.environ.get(REQUIRE_LANGCHAIN) == "1":
            raise
        return None

    class LCWrap(LCMiddleware):  # type: ignore[misc]
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            return handler(request)

        async def awrap_model_call(self, request: Any, handler: Any) -> Any:
            return await handler(request)

    return LCWrap()


def _stack(gate: Gate) -> list[Any]:
    lc = _langchain_layer()
    return [greet, compose(passes, Audit()), *([lc] if lc is not None else []), gate.middleware]


def _drive(mode: str, gate: Gate) -> RunRecord:
    responses = [calls_tool(call("lookup", {"order": "7"}, "c1")), "done"]
    agent = _agent(_stack(gate), responses, checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": mode}}
    with record() as run:
        if mode == "invoke":
            agent.invoke(hi(), config)
        elif mode == "stream":
            list(agent.stream(hi(), config, stream_mode="updates"))
        elif mode == "ainvoke":
            asyncio.run(agent.ainvoke(hi(), config))
        elif mode == "astream":

            async def go() -> None:
                async for _ in agent.astream(hi(), config, stream_mode="updates"):
                    pass

            asyncio.run(go())
        else:  # resumed after an interrupt, once per model turn
            gate.pausing = True
            agent.invoke(hi(), config)
            agent.invoke(Command(resume="yes"), config)
            agent.invoke(Command(resume="yes"), config)
    return run


def test_a_mixed_stack_gives_the_same_record_every_way_it_runs() -> None:
    plain = _summary(_drive("invoke", Gate()))
    names = [name for name, _, _ in plain]
    first = [
        "greet.before_model",
        "passes.wrap_model_call",
        "Audit.wrap_model_call",
        *(["LCWrap.wrap_model_call"] if _langchain_layer() is not None else []),
    ]
    assert names[: len(first)] == first
    assert {outcome for _, outcome, _ in plain} == {"passed"}
    wraps = len(first) - 1  # the layers of one model call nest, outermost first
    depths = [depth for name, _, depth in plain if name.endswith("wrap_model_call")]
    assert depths[:wraps] == list(range(wraps))
    for mode in ("stream", "ainvoke", "astream"):
        assert _summary(_drive(mode, Gate())) == plain, mode
    resumed = _summary(_drive("resumed", Gate()))
    assert [x for x in resumed if x[1] == "interrupted"] == [
        ("gate.after_model", "interrupted", 0)
    ] * 2
    assert [x for x in resumed if x[1] != "interrupted"] == plain


# ---------------------------------------------------------------- kept apart, free when off


def test_runs_in_other_threads_are_kept_apart() -> None:
    records: dict[str, RunRecord] = {}
    barrier = threading.Barrier(2)

    def work(name: str, middleware: Any) -> None:
        agent = _agent([middleware])
        barrier.wait()
        with record() as run:
            agent.invoke(hi())
        records[name] = run

    threads = [
        threading.Thread(target=work, args=("a", passes)),
        threading.Thread(target=work, args=("b", prompts)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [x.middleware for x in records["a"].layers] == ["passes"]
    assert [x.middleware for x in records["b"].layers] == ["prompts"]


def test_concurrent_tasks_are_kept_apart_and_sync_hooks_in_worker_threads_are_recorded() -> None:
    @wrap_model_call
    async def slow_async(request: Any, handler: Any) -> Any:
        await asyncio.sleep(0.01)
        return await handler(request)

    async def one(middleware: list[Any]) -> RunRecord:
        async with record() as run:
            await _agent(middleware).ainvoke(hi())
        return run

    async def both() -> list[RunRecord]:
        return list(await asyncio.gather(one([greet, slow_async]), one([passes])))

    first, second = asyncio.run(both())
    assert [x.middleware for x in first.layers] == ["greet", "slow_async"]
    assert [x.middleware for x in second.layers] == ["passes"]  # sync layer, worker thread


def test_nothing_is_recorded_outside_the_block() -> None:
    agent = _agent([passes, greet], ["done", "done"])
    with record() as run:
        agent.invoke(hi())
    seen = len(run.layers)
    agent.invoke(hi())
    assert seen == 2 and len(run.layers) == 2


def test_print_shows_a_nested_timeline_and_explain_shows_it_beside_the_plan() -> None:
    agent = _agent([greet, passes, prompts])
    with record() as run:
        agent.invoke(hi())
    text = str(run)
    lines = text.splitlines()
    assert lines[0] == "run:"
    assert lines[1].startswith("  greet.before_model · passed")
    assert lines[2].startswith("  passes.wrap_model_call · passed")
    assert lines[3].startswith("    prompts.wrap_model_call · modified · changed system_message")
    described = str(explain(agent, run=run))
    assert "this run" in described and "3 layers recorded" in described
    assert "greet.before_model" in described and "passed x1" in described
    assert described.endswith(lines[-1].strip()) or lines[-1].strip() in described


def test_layers_are_plain_objects_with_the_documented_fields() -> None:
    with record() as run:
        _agent([passes]).invoke(hi())
    layer = run.layers[0]
    assert isinstance(layer, Layer)
    for name in ("middleware", "hook", "outcome", "handler_calls", "duration_s", "wrote"):
        assert hasattr(layer, name)
    for name in ("changed", "jump_to", "error", "parent", "depth", "where"):
        assert hasattr(layer, name)
    assert "test_observe_record.py:" in layer.where
    assert time.perf_counter() > layer.started


def test_records_nest_and_an_inner_block_is_seen_by_the_outer() -> None:
    agent = _agent([passes], ["done", "done"])
    with record() as outer:
        agent.invoke(hi())
        with record() as inner:
            agent.invoke(hi())
    assert len(inner.layers) == 1 and len(outer.layers) == 2
    assert inner.layers[0] is outer.layers[1]


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_a_wrap_layer_that_fails_open_is_continued_and_its_handler_still_answers(mode: str) -> None:
    @wrap_model_call(on_error="continue")
    def flaky_logger(request: Any, handler: Callable[[Any], Any]) -> Any:
        response = handler(request)
        raise RuntimeError("log sink down")
        return response

    agent = _agent([flaky_logger])
    with record() as run:
        state = agent.invoke(hi()) if mode == "invoke" else asyncio.run(agent.ainvoke(hi()))
    assert state["messages"][-1].content == "done"
    (layer,) = run.layers
    assert (layer.outcome, layer.handler_calls, str(layer.error)) == (
        "continued",
        1,
        "log sink down",
    )


def test_a_layer_that_edits_its_request_in_place_is_recorded_as_modified() -> None:
    @wrap_model_call
    def remind(request: Any, handler: Any) -> Any:
        request.messages.append(HumanMessage("Be brief."))  # the request's own list
        return handler(request)

    @wrap_tool_call
    def retag(request: Any, handler: Any) -> Any:
        request.tool_call["args"]["q"] = "edited"  # the same call, edited in place
        return handler(request)

    @tool
    def search(q: str) -> str:
        """Search."""
        return q

    model = ScriptedChatModel(responses=[calls_tool(call("search", {"q": "x"}, "c1")), "done"])
    agent = create_agent(model, [search], middleware=[remind, retag])
    with record() as run:
        agent.invoke(hi())
    models = [layer for layer in run.layers if layer.middleware == "remind"]
    tools = [layer for layer in run.layers if layer.middleware == "retag"]
    assert [(layer.outcome, layer.changed) for layer in models] == [("modified", ("messages",))] * 2
    [tool_layer] = tools  # the call is the model's own dict, so the state's copy changed too
    assert tool_layer.outcome == "modified" and tool_layer.changed[0] == "tool_call"
