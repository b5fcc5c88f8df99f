"""Wrap layers as LangSmith runs, through langchain-core's callbacks, with the real client.

With ``LANGSMITH_TRACING=true`` each wrap-layer call is a ``chain`` run named
``"{middleware}.wrap_model_call"`` / ``"...awrap_model_call"`` (tool layers likewise), a
child of the node or outer layer it runs in and the parent of the layers inside it and of
the model's or tool's own run; its inputs are the request's fields but ``runtime``. A
middleware's ``trace_policy`` (else the process default) shapes those inputs and outputs.
Any LangChain tracer passed in ``callbacks`` sees the same runs; with no tracer, nothing
is done. The LangSmith endpoint is a local recorder: nothing leaves the machine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langchain_core.tracers.base import BaseTracer
from langchain_core.tracers.schemas import Run
from langsmith_support import LangSmithRecorder, recorded_langsmith
from support import call, calls_tool, hi

import funcware
from funcware import (
    AgentMiddleware,
    TracePolicy,
    create_agent,
    omit_payload,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.observe.langsmith import langchain_runs
from funcware.testing import ScriptedChatModel


@pytest.fixture
def langsmith(monkeypatch: pytest.MonkeyPatch) -> Iterator[LangSmithRecorder]:
    with recorded_langsmith(monkeypatch) as recorder:
        yield recorder


@pytest.fixture(autouse=True)
def no_default_policy() -> Iterator[None]:
    funcware.configure_trace_policy(None)
    yield
    funcware.configure_trace_policy(None)


@tool
def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: shipped"


@wrap_model_call
def outer(request: Any, handler: Callable[[Any], Any]) -> Any:
    return handler(request)


@wrap_model_call
def inner(request: Any, handler: Callable[[Any], Any]) -> Any:
    return handler(request)


@wrap_tool_call
def audit(request: Any, handler: Callable[[Any], Any]) -> Any:
    return handler(request)


def _agent(*middleware: Any) -> Any:
    model = ScriptedChatModel(responses=[calls_tool(call("lookup", {"order": "7"}, "c1")), "done"])
    return create_agent(model, [lookup], middleware=list(middleware))


def _layers(kind: str) -> list[tuple[int, str, str]]:
    a = "a" if kind == "async" else ""
    return [
        (0, "LangGraph", "chain"),
        (1, "model", "chain"),
        (2, f"outer.{a}wrap_model_call", "chain"),
        (3, f"inner.{a}wrap_model_call", "chain"),
        (4, "ScriptedChatModel", "llm"),
        (1, "tools", "chain"),
        (2, f"audit.{a}wrap_tool_call", "chain"),
        (3, "lookup", "tool"),
        (1, "model", "chain"),
        (2, f"outer.{a}wrap_model_call", "chain"),
        (3, f"inner.{a}wrap_model_call", "chain"),
        (4, "ScriptedChatModel", "llm"),
    ]


def test_wrap_layers_are_langsmith_runs_nested_as_the_onion(langsmith: LangSmithRecorder) -> None:
    _agent(outer, inner, audit).invoke(hi())
    assert langsmith.tree() == _layers("sync")
    assert ("POST", "/runs/multipart") in langsmith.requests


@wrap_model_call(name="outer")
async def aouter(request: Any, handler: Callable[[Any], Any]) -> Any:
    return await handler(request)


@wrap_model_call(name="inner")
async def ainner(request: Any, handler: Callable[[Any], Any]) -> Any:
    return await handler(request)


@wrap_tool_call(name="audit")
async def aaudit(request: Any, handler: Callable[[Any], Any]) -> Any:
    return await handler(request)


async def test_async_layers_are_named_awrap(langsmith: LangSmithRecorder) -> None:
    await _agent(aouter, ainner, aaudit).ainvoke(hi())
    assert langsmith.tree() == _layers("async")


async def test_a_sync_layer_in_an_async_run_keeps_its_sync_name(
    langsmith: LangSmithRecorder,
) -> None:
    await _agent(outer, inner, audit).ainvoke(hi())
    assert langsmith.tree() == _layers("sync")


def test_a_layer_run_records_the_request_but_runtime_and_the_response(
    langsmith: LangSmithRecorder,
) -> None:
    _agent(outer, audit).invoke(hi())
    first = langsmith.named("outer.wrap_model_call")[0]
    request = first["inputs"]["request"]
    assert "runtime" not in request and "handler" not in first["inputs"]
    assert {"messages", "tools", "model_settings"} <= set(request)
    assert "output" in first["outputs"]
    tool_layer = langsmith.named("audit.wrap_tool_call")[0]
    assert tool_layer["inputs"]["request"]["tool_call"]["id"] == "c1"


class Quiet(AgentMiddleware):
    trace_policy = TracePolicy(process_inputs=omit_payload)

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request)


class Loud(AgentMiddleware):
    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request)


def test_a_middleware_trace_policy_shapes_its_layer_runs(langsmith: LangSmithRecorder) -> None:
    create_agent(ScriptedChatModel(responses=["hi"]), middleware=[Quiet(), Loud()]).invoke(hi())
    (quiet,) = langsmith.named("Quiet.wrap_model_call")
    (loud,) = langsmith.named("Loud.wrap_model_call")
    assert quiet["inputs"] == {} and "output" in quiet["outputs"]
    assert "request" in loud["inputs"]


def test_the_process_default_applies_and_a_middleware_policy_replaces_it(
    langsmith: LangSmithRecorder,
) -> None:
    agent = create_agent(ScriptedChatModel(responses=["hi"]), middleware=[Quiet(), Loud()])
    funcware.configure_trace_policy(TracePolicy(process_outputs=omit_payload))  # after build
    agent.invoke(hi())
    (quiet,) = langsmith.named("Quiet.wrap_model_call")
    (loud,) = langsmith.named("Loud.wrap_model_call")
    assert loud["outputs"] == {} and "request" in loud["inputs"]
    assert quiet["inputs"] == {} and "output" in quiet["outputs"]  # its own, whole


class Boom(Exception):
    pass


@wrap_model_call
def explodes(request: Any, handler: Callable[[Any], Any]) -> Any:
    raise Boom("layer failed")


def test_a_failing_layer_run_carries_the_error(langsmith: LangSmithRecorder) -> None:
    agent = create_agent(ScriptedChatModel(responses=["hi"]), middleware=[outer, explodes])
    with pytest.raises(Boom):
        agent.invoke(hi())
    (failed,) = langsmith.named("explodes.wrap_model_call")
    assert "layer failed" in failed["error"]
    (around,) = langsmith.named("outer.wrap_model_call")
    assert "Boom" in around["error"]


class Tracer(BaseTracer):
    """Any LangChain tracer: keeps the runs it is told about."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[Run] = []

    def _persist_run(self, run: Run) -> None:
        pass

    def _on_run_create(self, run: Run) -> None:
        self.runs.append(run)


def test_any_langchain_tracer_sees_the_layer_runs() -> None:
    tracer = Tracer()
    _agent(outer, inner).invoke(hi(), {"callbacks": [tracer]})
    by_id = {run.id: run for run in tracer.runs}
    chats = [run for run in tracer.runs if run.name == "ScriptedChatModel"]
    assert len(chats) == 2
    for chat in chats:
        parent = by_id[chat.parent_run_id]
        assert parent.name == "inner.wrap_model_call"
        assert by_id[parent.parent_run_id].name == "outer.wrap_model_call"


def test_stream_handlers_are_not_told_and_messages_stream_as_before() -> None:
    tracer = Tracer()
    agent = create_agent(
        ScriptedChatModel(responses=["hello there", "hello there"]), middleware=[outer]
    )
    plain = [c for c, _ in agent.stream(hi(), stream_mode="messages")]
    traced = [c for c, _ in agent.stream(hi(), {"callbacks": [tracer]}, stream_mode="messages")]
    assert [m.text for m in traced] == [m.text for m in plain] == ["hello there"]
    assert [run.name for run in tracer.runs].count("outer.wrap_model_call") == 1


def _streamed_agent(layers: list[Any]) -> Any:
    """An agent whose model streams tokens, under ``layers``."""
    model = GenericFakeChatModel(messages=iter([AIMessage("hello there friend")]))
    return create_agent(model, middleware=layers)


GRADER_SAYS = "graded well"


def _grader() -> Any:
    return GenericFakeChatModel(messages=iter([AIMessage(GRADER_SAYS) for _ in range(4)]))


def test_token_streams_and_hidden_calls_are_unchanged_by_tracing() -> None:
    grader = _grader()

    @wrap_model_call
    def grade(request: Any, handler: Callable[[Any], Any]) -> Any:
        grader.invoke("grade this")  # middleware's own call: kept out of the stream
        return handler(request)

    def tokens(callbacks: list[Any]) -> list[str]:
        agent = _streamed_agent([outer, grade])
        config: Any = {"callbacks": callbacks}
        return [c.text for c, _ in agent.stream(hi(), config, stream_mode="messages")]

    tracer = Tracer()
    plain, traced = tokens([]), tokens([tracer])
    assert traced == plain
    assert len(plain) > 1 and GRADER_SAYS not in "".join(plain)
    by_id = {run.id: run for run in tracer.runs}
    models = [run for run in tracer.runs if run.name == "GenericFakeChatModel"]
    assert [by_id[run.parent_run_id].name for run in models] == ["grade.wrap_model_call"] * 2


async def test_async_token_streams_and_hidden_calls_are_unchanged_by_tracing() -> None:
    grader = _grader()

    @wrap_model_call(name="grade")
    async def agrade(request: Any, handler: Any) -> Any:
        await grader.ainvoke("grade this")
        return await handler(request)

    async def tokens(callbacks: list[Any]) -> list[str]:
        agent = _streamed_agent([aouter, agrade])
        config: Any = {"callbacks": callbacks}
        return [c.text async for c, _ in agent.astream(hi(), config, stream_mode="messages")]

    tracer = Tracer()
    plain, traced = await tokens([]), await tokens([tracer])
    assert traced == plain
    assert len(plain) > 1 and GRADER_SAYS not in "".join(plain)
    assert "grade.awrap_model_call" in [run.name for run in tracer.runs]


def test_nothing_is_traced_without_a_tracer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LANGSMITH_TRACING", raising=False)
    monkeypatch.delenv("LANGCHAIN_TRACING_V2", raising=False)
    seen: list[tuple[Any, ...]] = []

    @wrap_model_call
    def look(request: Any, handler: Callable[[Any], Any]) -> Any:
        seen.append(langchain_runs())
        return handler(request)

    create_agent(ScriptedChatModel(responses=["a"]), middleware=[look]).invoke(hi())
    assert seen == [()]
