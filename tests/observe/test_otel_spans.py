"""``funcware.observe.instrument()``: OpenTelemetry GenAI spans of agent runs, real SDK.

An agent run is an ``invoke_agent`` span; each model call a ``chat`` span and each tool
execution an ``execute_tool`` span, with the GenAI attributes; each executed hook and
wrap-layer call an INTERNAL ``"{middleware}.{hook}"`` span nested as the onion nests. A
short-circuit says why the model or tool span is missing; a failure sets ``error.type``
and status ERROR; payloads appear only with ``capture_content=True``. Spans reach an OTLP
collector (a receiver process started here, on loopback) through the real exporter.

Needs the ``otel`` extra and opentelemetry-sdk; skipped without them, failed when
``FUNCWARE_REQUIRE_OTEL=1``.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from support import call, calls_tool, hi

from funcware import before_model, create_agent, wrap_model_call, wrap_tool_call
from funcware.observe import calls, instrument, uninstrument
from funcware.observe.observers import active
from funcware.testing import ScriptedChatModel

REQUIRE_OTEL = "FUNCWARE_REQUIRE_OTEL"


def _require(module: str) -> Any:
    if os.environ.get(REQUIRE_OTEL) != "1":
        return pytest.importorskip(
            module, reason="the OpenTelemetry tests need the `otel` extra and opentelemetry-sdk"
        )
    import importlib

    return importlib.import_module(module)  # an ImportError fails the module under CI


sdk_trace = _require("opentelemetry.sdk.trace")
export = _require("opentelemetry.sdk.trace.export")
in_memory = _require("opentelemetry.sdk.trace.export.in_memory_span_exporter")
otel_trace = _require("opentelemetry.trace")


@pytest.fixture
def spans() -> Iterator[Any]:
    """An SDK provider exporting to memory, instrumented for the test."""
    exporter = in_memory.InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(export.SimpleSpanProcessor(exporter))
    with instrument(provider):
        yield exporter
    assert calls.installed() == ()


@tool
def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: shipped"


def _tree(exporter: Any) -> list[tuple[int, str]]:
    """``(depth, name)`` per span, depth-first in start order."""
    finished = sorted(exporter.get_finished_spans(), key=lambda s: s.start_time)
    ids = {s.context.span_id for s in finished}
    children: dict[int | None, list[Any]] = {}
    for s in finished:
        parent = s.parent.span_id if s.parent is not None and s.parent.span_id in ids else None
        children.setdefault(parent, []).append(s)
    out: list[tuple[int, str]] = []

    def walk(parent: int | None, depth: int) -> None:
        for s in children.get(parent, []):
            out.append((depth, s.name))
            walk(s.context.span_id, depth + 1)

    walk(None, 0)
    return out


def _named(exporter: Any, name: str) -> list[Any]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


@wrap_model_call
def outer(request: Any, handler: Callable[[Any], Any]) -> Any:
    return handler(request)


@wrap_model_call
def inner(request: Any, handler: Callable[[Any], Any]) -> Any:
    return handler(request)


@wrap_tool_call
def audit(request: Any, handler: Callable[[Any], Any]) -> Any:
    return handler(request)


@before_model
def note(state: Any) -> None:
    return None


def _tool_then_answer() -> ScriptedChatModel:
    first = calls_tool(call("lookup", {"order": "7"}, "c1"))
    first.usage_metadata = {"input_tokens": 11, "output_tokens": 5, "total_tokens": 16}
    first.response_metadata = {"model_name": "scripted-1", "finish_reason": "tool_calls"}
    return ScriptedChatModel(responses=[first, "done"])


SKELETON = [
    (0, "invoke_agent support"),
    (1, "note.before_model"),
    (1, "outer.wrap_model_call"),
    (2, "inner.wrap_model_call"),
    (3, "chat ScriptedChatModel"),
    (1, "audit.wrap_tool_call"),
    (2, "execute_tool lookup"),
    (1, "note.before_model"),
    (1, "outer.wrap_model_call"),
    (2, "inner.wrap_model_call"),
    (3, "chat ScriptedChatModel"),
]


def _support_agent() -> Any:
    return create_agent(
        _tool_then_answer(), [lookup], middleware=[note, outer, inner, audit], name="support"
    )


def test_spans_nest_as_the_onion_under_the_agent_span(spans: Any) -> None:
    _support_agent().invoke(hi())
    assert _tree(spans) == SKELETON


async def test_async_runs_give_the_same_tree(spans: Any) -> None:
    await _support_agent().ainvoke(hi())
    assert _tree(spans) == SKELETON


def test_streamed_runs_give_the_same_tree(spans: Any) -> None:
    for _ in _support_agent().stream(hi(), stream_mode=["updates", "messages"]):
        pass
    assert _tree(spans) == SKELETON


def test_genai_attributes_and_span_kinds(spans: Any) -> None:
    _support_agent().invoke(hi(), {"configurable": {"thread_id": "t-1"}})
    (agent,) = _named(spans, "invoke_agent support")
    assert agent.kind == otel_trace.SpanKind.INTERNAL
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert agent.attributes["gen_ai.agent.name"] == "support"
    assert agent.attributes["gen_ai.conversation.id"] == "t-1"
    first_chat = _named(spans, "chat ScriptedChatModel")[0]
    assert first_chat.kind == otel_trace.SpanKind.CLIENT
    assert first_chat.attributes["gen_ai.operation.name"] == "chat"
    assert first_chat.attributes["gen_ai.request.model"] == "ScriptedChatModel"
    assert first_chat.attributes["gen_ai.provider.name"] == "scriptedchatmodel"
    assert first_chat.attributes["gen_ai.response.model"] == "scripted-1"
    assert first_chat.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert first_chat.attributes["gen_ai.usage.input_tokens"] == 11
    assert first_chat.attributes["gen_ai.usage.output_tokens"] == 5
    (tool_span,) = _named(spans, "execute_tool lookup")
    assert tool_span.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool_span.attributes["gen_ai.tool.name"] == "lookup"
    assert tool_span.attributes["gen_ai.tool.call.id"] == "c1"
    assert tool_span.attributes["gen_ai.tool.description"] == "Look an order up."
    layer = _named(spans, "outer.wrap_model_call")[0]
    assert layer.kind == otel_trace.SpanKind.INTERNAL
    assert layer.attributes["funcware.middleware.name"] == "outer"
    assert layer.attributes["funcware.middleware.hook"] == "wrap_model_call"
    assert layer.attributes["funcware.middleware.outcome"] == "passed"
    assert layer.attributes["funcware.middleware.handler_calls"] == 1
    hook = _named(spans, "note.before_model")[0]
    assert hook.attributes["funcware.middleware.outcome"] == "passed"
    assert "funcware.middleware.handler_calls" not in hook.attributes


def test_no_payload_is_recorded_unless_asked(spans: Any) -> None:
    _support_agent().invoke({"messages": [HumanMessage("my card is 4111")]})
    for span in spans.get_finished_spans():
        text = json.dumps(dict(span.attributes), default=str)
        assert "4111" not in text and "shipped" not in text, span.name
        assert not any(key.startswith("gen_ai.input") for key in span.attributes)


def test_capture_content_records_messages_and_tool_payloads() -> None:
    exporter = in_memory.InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(export.SimpleSpanProcessor(exporter))
    agent = create_agent(_tool_then_answer(), [lookup], system_prompt="Be brief.")
    with instrument(provider, capture_content=True):
        agent.invoke({"messages": [HumanMessage("where is 7?")]})
    first_chat = _named(exporter, "chat ScriptedChatModel")[0]
    inputs = json.loads(first_chat.attributes["gen_ai.input.messages"])
    assert inputs == [{"role": "user", "parts": [{"type": "text", "content": "where is 7?"}]}]
    assert json.loads(first_chat.attributes["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "Be brief."}
    ]
    outputs = json.loads(first_chat.attributes["gen_ai.output.messages"])
    assert outputs[0]["parts"] == [
        {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"order": "7"}}
    ]
    (tool_span,) = _named(exporter, "execute_tool lookup")
    assert json.loads(tool_span.attributes["gen_ai.tool.call.arguments"]) == {"order": "7"}
    assert tool_span.attributes["gen_ai.tool.call.result"] == "order 7: shipped"


@wrap_model_call
def cached(request: Any, handler: Callable[[Any], Any]) -> Any:
    return AIMessage("from cache")


@wrap_tool_call
def blocked(request: Any, handler: Callable[[Any], Any]) -> Any:
    from langchain_core.messages import ToolMessage

    return ToolMessage("blocked", tool_call_id=request.tool_call["id"])


def test_a_short_circuit_closes_its_span_and_says_why_the_model_span_is_missing(
    spans: Any,
) -> None:
    agent = create_agent(ScriptedChatModel(responses=[]), middleware=[outer, cached, inner])
    agent.invoke(hi())
    assert _tree(spans) == [
        (0, "invoke_agent"),
        (1, "outer.wrap_model_call"),
        (2, "cached.wrap_model_call"),
    ]
    (span,) = _named(spans, "cached.wrap_model_call")
    assert span.attributes["funcware.middleware.outcome"] == "short_circuited"
    assert span.attributes["funcware.middleware.handler_calls"] == 0
    reason = span.attributes["funcware.middleware.short_circuit"]
    assert "without calling its handler" in reason and "chat span" in reason
    assert [event.name for event in span.events] == ["funcware.short_circuit"]
    assert span.status.status_code == otel_trace.StatusCode.UNSET


def test_a_short_circuited_tool_call_has_no_execute_tool_span(spans: Any) -> None:
    agent = create_agent(_tool_then_answer(), [lookup], middleware=[blocked])
    agent.invoke(hi())
    assert _named(spans, "execute_tool lookup") == []
    (span,) = _named(spans, "blocked.wrap_tool_call")
    assert "execute_tool span" in span.attributes["funcware.middleware.short_circuit"]


class Boom(Exception):
    pass


@wrap_model_call
def explodes(request: Any, handler: Callable[[Any], Any]) -> Any:
    handler(request)
    raise Boom("layer failed")


def test_a_failing_layer_sets_error_type_and_status_error_up_the_tree(spans: Any) -> None:
    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[outer, explodes])
    with pytest.raises(Boom):
        agent.invoke(hi())
    for name in ("explodes.wrap_model_call", "outer.wrap_model_call", "invoke_agent"):
        (span,) = _named(spans, name)
        assert span.status.status_code == otel_trace.StatusCode.ERROR, name
        assert span.attributes["error.type"] == f"{__name__}.Boom", name
    (layer,) = _named(spans, "explodes.wrap_model_call")
    assert layer.attributes["funcware.middleware.outcome"] == "failed"
    assert [event.name for event in layer.events] == ["exception"]
    (chat,) = _named(spans, "chat ScriptedChatModel")  # the model answered; the layer failed
    assert chat.status.status_code == otel_trace.StatusCode.UNSET


def test_a_failing_model_call_marks_the_chat_span(spans: Any) -> None:
    agent = create_agent(ScriptedChatModel(responses=[]), middleware=[outer])
    with pytest.raises(Exception) as raised:
        agent.invoke(hi())
    (chat,) = _named(spans, "chat ScriptedChatModel")
    assert chat.status.status_code == otel_trace.StatusCode.ERROR
    assert chat.attributes["error.type"].endswith(type(raised.value).__qualname__)


@wrap_model_call
def retry_once(request: Any, handler: Callable[[Any], Any]) -> Any:
    try:
        return handler(request)
    except Exception:
        return handler(request)


def test_a_retry_shows_each_model_call_under_its_layer(spans: Any) -> None:
    flaky = ScriptedChatModel(responses=[RuntimeError("overloaded"), "fine"])
    create_agent(flaky, middleware=[retry_once]).invoke(hi())
    assert _tree(spans) == [
        (0, "invoke_agent"),
        (1, "retry_once.wrap_model_call"),
        (2, "chat ScriptedChatModel"),
        (2, "chat ScriptedChatModel"),
    ]
    (layer,) = _named(spans, "retry_once.wrap_model_call")
    assert layer.attributes["funcware.middleware.outcome"] == "retried"
    assert layer.attributes["funcware.middleware.handler_calls"] == 2
    failed, answered = sorted(_named(spans, "chat ScriptedChatModel"), key=lambda s: s.start_time)
    assert failed.attributes["error.type"] == "RuntimeError"
    assert answered.status.status_code == otel_trace.StatusCode.UNSET


def test_a_sub_agent_nests_under_the_tool_that_runs_it_without_duplicate_spans(
    spans: Any,
) -> None:
    helper = create_agent(ScriptedChatModel(responses=["42"]), middleware=[inner], name="helper")

    @tool
    def ask_helper(question: str) -> str:
        """Ask the helper agent."""
        return str(helper.invoke({"messages": [HumanMessage(question)]})["messages"][-1].text)

    model = ScriptedChatModel(
        responses=[calls_tool(call("ask_helper", {"question": "?"}, "q")), "ok"]
    )
    create_agent(model, [ask_helper], middleware=[outer], name="lead").invoke(hi())
    assert _tree(spans) == [
        (0, "invoke_agent lead"),
        (1, "outer.wrap_model_call"),
        (2, "chat ScriptedChatModel"),
        (1, "execute_tool ask_helper"),
        (2, "invoke_agent helper"),
        (3, "inner.wrap_model_call"),
        (4, "chat ScriptedChatModel"),
        (1, "outer.wrap_model_call"),
        (2, "chat ScriptedChatModel"),
    ]


def test_while_recording_the_sub_agent_is_a_record_layer_but_no_extra_span(
    spans: Any,
) -> None:
    from funcware.observe import record

    helper = create_agent(ScriptedChatModel(responses=["42"]), middleware=[inner], name="helper")

    @tool
    def ask_helper(question: str) -> str:
        """Ask the helper agent."""
        return str(helper.invoke({"messages": [HumanMessage(question)]})["messages"][-1].text)

    model = ScriptedChatModel(
        responses=[calls_tool(call("ask_helper", {"question": "?"}, "q")), "ok"]
    )
    with record() as run:
        create_agent(model, [ask_helper], middleware=[outer], name="lead").invoke(hi())

    assert ("helper.agent", "passed") in run.outcomes()
    assert "helper.agent" not in [name for _, name in _tree(spans)]
    assert (2, "invoke_agent helper") in _tree(spans)


def test_runs_in_threads_and_tasks_are_kept_apart(spans: Any) -> None:
    agent = create_agent(
        ScriptedChatModel(responses=["a", "b", "c", "d"]), middleware=[outer, inner]
    )
    threads = [threading.Thread(target=agent.invoke, args=(hi(),)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    async def two() -> None:
        await asyncio.gather(agent.ainvoke(hi()), agent.ainvoke(hi()))

    asyncio.run(two())
    traces: dict[int, list[str]] = {}
    for span in spans.get_finished_spans():
        traces.setdefault(span.context.trace_id, []).append(span.name)
    assert len(traces) == 4
    for names in traces.values():
        assert sorted(names) == sorted(
            [
                "invoke_agent",
                "outer.wrap_model_call",
                "inner.wrap_model_call",
                "chat ScriptedChatModel",
            ]
        )


def test_instrument_is_idempotent_refuses_other_settings_and_uninstruments() -> None:
    exporter = in_memory.InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(export.SimpleSpanProcessor(exporter))
    agent = create_agent(ScriptedChatModel(responses=["a", "b", "c"]), middleware=[outer])
    first = instrument(provider)
    try:
        again = instrument(provider)
        assert again.active and len(calls.installed()) == 1
        with again:  # did not instrument: leaving it keeps the instrumentation
            pass
        assert first.active
        with pytest.raises(RuntimeError, match=r"already instrumented.*uninstrument"):
            instrument(provider, capture_content=True)
        agent.invoke(hi())
        assert len(_named(exporter, "outer.wrap_model_call")) == 1
    finally:
        uninstrument()
    assert not first.active and calls.installed() == ()
    uninstrument()  # again: a no-op
    agent.invoke(hi())
    assert len(exporter.get_finished_spans()) == 3  # nothing new once uninstrumented
    with instrument(provider) as scoped:
        assert scoped.active
    assert calls.installed() == ()


def test_bad_arguments_are_refused_with_what_to_pass() -> None:
    with pytest.raises(TypeError, match="TracerProvider"):
        instrument(object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="True or False"):
        instrument(capture_content="yes")  # type: ignore[arg-type]
    assert calls.installed() == ()


def test_nothing_is_observed_when_not_instrumented() -> None:
    seen: list[tuple[Any, ...]] = []

    @wrap_model_call
    def look(request: Any, handler: Callable[[Any], Any]) -> Any:
        seen.append(active())
        return handler(request)

    create_agent(ScriptedChatModel(responses=["a"]), middleware=[look]).invoke(hi())
    assert calls.installed() == () and seen == [()]


def test_spans_reach_an_otlp_collector_over_http() -> None:
    otlp = _require("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    _require("opentelemetry.proto.collector.trace.v1.trace_service_pb2")
    receiver = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("otlp_support.py"))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert receiver.stdout is not None and receiver.stdin is not None
        port = int(receiver.stdout.readline().split()[1])
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(
            target=lambda: [lines.put(line) for line in receiver.stdout or ()], daemon=True
        ).start()
        provider = sdk_trace.TracerProvider()
        exporter = otlp.OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces")
        provider.add_span_processor(export.BatchSpanProcessor(exporter))
        with instrument(provider):
            _support_agent().invoke(hi())
        assert provider.force_flush(10_000)
        received = [json.loads(lines.get(timeout=10)) for _ in SKELETON]
        provider.shutdown()
    finally:
        if receiver.stdin is not None:
            receiver.stdin.close()
        receiver.wait(timeout=10)
    assert sorted(span["name"] for span in received) == sorted(name for _, name in SKELETON)
    by_id = {span["span_id"]: span for span in received}
    chats = [span for span in received if span["name"] == "chat ScriptedChatModel"]
    assert {by_id[chat["parent_span_id"]]["name"] for chat in chats} == {"inner.wrap_model_call"}
    usage = sorted(str(chat["attributes"].get("gen_ai.usage.input_tokens")) for chat in chats)
    assert usage == ["11", "None"]
    tool_span = next(span for span in received if span["name"] == "execute_tool lookup")
    assert tool_span["attributes"]["gen_ai.tool.call.id"] == "c1"
    assert by_id[tool_span["parent_span_id"]]["name"] == "audit.wrap_tool_call"
    agent = next(span for span in received if span["name"] == "invoke_agent support")
    assert agent["parent_span_id"] == "" and {s["trace_id"] for s in received} == {
        agent["trace_id"]
    }
    assert {s["scope"] for s in received} == {"funcware"}


@wrap_tool_call
def approval(request: Any, handler: Callable[[Any], Any]) -> Any:
    from langgraph.types import interrupt

    if interrupt({"approve": request.tool_call["name"]}) != "yes":
        raise AssertionError("the test resumes with 'yes'")
    return handler(request)


def test_an_interrupt_is_no_error_and_the_resumed_run_is_a_new_agent_span(spans: Any) -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    agent = create_agent(
        _tool_then_answer(), [lookup], middleware=[approval], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t-9"}}
    agent.invoke(hi(), config)
    paused = _named(spans, "approval.wrap_tool_call")
    assert [s.attributes["funcware.middleware.outcome"] for s in paused] == ["interrupted"]
    assert paused[0].status.status_code == otel_trace.StatusCode.UNSET
    assert "error.type" not in paused[0].attributes
    agent.invoke(Command(resume="yes"), config)
    agents = _named(spans, "invoke_agent")
    assert len(agents) == 2 and {s.status.status_code for s in agents} == {
        otel_trace.StatusCode.UNSET
    }
    assert {s.attributes["gen_ai.conversation.id"] for s in agents} == {"t-9"}
    resumed = _named(spans, "approval.wrap_tool_call")[1]
    assert resumed.attributes["funcware.middleware.outcome"] == "passed"
    (tool_span,) = _named(spans, "execute_tool lookup")
    assert tool_span.parent.span_id == resumed.context.span_id


def test_a_jump_is_an_attribute_of_the_hook_span(spans: Any) -> None:
    @before_model(can_jump_to=["end"])
    def stop(state: Any) -> Any:
        return {"jump_to": "end"}

    create_agent(ScriptedChatModel(responses=[]), middleware=[stop]).invoke(hi())
    (span,) = _named(spans, "stop.before_model")
    assert span.attributes["funcware.middleware.outcome"] == "jumped"
    assert span.attributes["funcware.middleware.jump_to"] == "end"
    assert _named(spans, "chat ScriptedChatModel") == []


def test_a_stream_the_caller_stops_reading_ends_its_spans_without_error(spans: Any) -> None:
    agent = _support_agent()
    for _ in agent.stream(hi(), stream_mode="updates"):
        break
    (run,) = _named(spans, "invoke_agent support")
    assert run.status.status_code == otel_trace.StatusCode.UNSET
    assert not active()  # the instrument observes no more once the run is over


async def test_an_async_stream_the_caller_stops_reading_ends_its_spans(spans: Any) -> None:
    stream = _support_agent().astream(hi(), stream_mode="updates")
    async for _ in stream:
        break
    await stream.aclose()
    (run,) = _named(spans, "invoke_agent support")
    assert run.status.status_code == otel_trace.StatusCode.UNSET


@before_model(on_error="continue")
def breaks_quietly(state: Any) -> Any:
    raise ValueError("ignored")


@before_model(timeout=0.05)
async def too_slow(state: Any) -> Any:
    await asyncio.sleep(1)


def test_a_continued_error_is_recorded_without_failing_the_span(spans: Any) -> None:
    create_agent(ScriptedChatModel(responses=["ok"]), middleware=[breaks_quietly]).invoke(hi())
    (span,) = _named(spans, "breaks_quietly.before_model")
    assert span.attributes["funcware.middleware.outcome"] == "continued"
    assert span.attributes["error.type"] == "ValueError"
    assert span.status.status_code == otel_trace.StatusCode.UNSET
    (run,) = _named(spans, "invoke_agent")
    assert run.status.status_code == otel_trace.StatusCode.UNSET


def test_a_hook_past_its_deadline_is_an_error_span(spans: Any) -> None:
    with pytest.raises(TimeoutError):
        create_agent(ScriptedChatModel(responses=["ok"]), middleware=[too_slow]).invoke(hi())
    (span,) = _named(spans, "too_slow.before_model")
    assert span.attributes["funcware.middleware.outcome"] == "timed_out"
    assert span.status.status_code == otel_trace.StatusCode.ERROR
    assert span.attributes["error.type"].endswith("HookTimeoutError")
