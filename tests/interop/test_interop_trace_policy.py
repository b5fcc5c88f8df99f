"""``trace_policy`` and ``internal_call_metadata()`` give LangChain 1.5.2's answers.

The same middleware, configured the same way, is run in ``funcware.create_agent`` and in
LangChain's, each with a tracer: its node-hook spans record the same inputs and outputs,
for a policy on the class, on the instance, as the process default set before or after
the agent is built, and for none. ``internal_call_metadata()`` is LangChain's marker, so
LangChain's ``InternalCallTransformer`` keeps a call funcware marked out of the v3 stream.

Needs the ``langchain`` extra; skipped without it, failed when ``FUNCWARE_REQUIRE_LANGCHAIN=1``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tracers.base import BaseTracer
from langchain_core.tracers.schemas import Run
from support import require_langchain

import funcware
from funcware import TracePolicy, omit_payload
from funcware.interop import to_langchain
from funcware.testing import ScriptedChatModel

lc_agents = require_langchain("langchain.agents")
lc_mw = require_langchain("langchain.agents.middleware")
lc_internal = require_langchain("langchain.agents.middleware.internal_call_transformer")

SIDES = ["funcware", "langchain"]
OMIT = TracePolicy(process_inputs=omit_payload)
SUMMARY = TracePolicy(
    process_inputs=lambda value: {"n_messages": len(value.get("messages", []))},
    process_outputs=omit_payload,
)


@pytest.fixture(autouse=True)
def no_default_policy() -> Iterator[None]:
    for configure in (funcware.configure_trace_policy, lc_mw.configure_trace_policy):
        configure(None)
    yield
    for configure in (funcware.configure_trace_policy, lc_mw.configure_trace_policy):
        configure(None)


def configure_both(policy: TracePolicy | None) -> None:
    funcware.configure_trace_policy(policy)
    lc_mw.configure_trace_policy(policy)


class Recorder(BaseTracer):
    """Records what each chain run's start and end carried, by run name."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: dict[str, list[tuple[Any, Any]]] = {}

    def _persist_run(self, run: Run) -> None:
        pass

    def _on_chain_end(self, run: Run) -> None:
        self.runs.setdefault(run.name, []).append((plain(run.inputs), plain(run.outputs)))


def plain(value: Any) -> Any:
    """``value`` with each message as ``(type, text)``: message ids differ between runs."""
    if isinstance(value, BaseMessage):
        return (value.type, value.text)
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def tracker(side: str, policy: TracePolicy | None, where: str) -> Any:
    base = funcware.AgentMiddleware if side == "funcware" else lc_mw.AgentMiddleware
    namespace: dict[str, Any] = {
        "before_model": lambda self, state, runtime: {"messages": [HumanMessage("note")]},
        "after_agent": lambda self, state, runtime: None,
    }
    if where == "class":
        namespace["trace_policy"] = policy
    instance = type("Tracker", (base,), namespace)()
    if where == "instance":
        instance.trace_policy = policy
    return instance


def hook_spans(side: str, middleware: Any, configure: Callable[[], None] = lambda: None) -> Any:
    make = funcware.create_agent if side == "funcware" else lc_agents.create_agent
    agent = make(ScriptedChatModel(responses=["ok"]), middleware=[middleware])
    configure()  # after the build: still applies
    recorder = Recorder()
    agent.invoke({"messages": [HumanMessage("secret question")]}, {"callbacks": [recorder]})
    return {name: runs for name, runs in recorder.runs.items() if name.startswith("Tracker.")}


CASES: dict[str, tuple[TracePolicy | None, str, TracePolicy | None]] = {
    "none": (None, "class", None),
    "class attribute": (OMIT, "class", None),
    "instance attribute": (SUMMARY, "instance", None),
    "process default": (None, "class", SUMMARY),
    "own replaces the default whole": (OMIT, "class", SUMMARY),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hook_spans_record_what_langchains_record(case: str) -> None:
    own, where, default = CASES[case]
    spans = {
        side: hook_spans(side, tracker(side, own, where), lambda: configure_both(default))
        for side in SIDES
    }
    assert spans["funcware"] == spans["langchain"]
    assert set(spans["funcware"]) == {"Tracker.before_model", "Tracker.after_agent"}
    inputs = repr([i for runs in spans["funcware"].values() for i, _ in runs])
    assert ("secret question" in inputs) == (own is None and default is None)


@pytest.mark.parametrize("case", list(CASES))
def test_resolve_trace_policy_is_the_policy_langchain_applies(case: str) -> None:
    own, where, default = CASES[case]
    configure_both(default)
    for side in SIDES:
        expected = own if own is not None else default
        assert funcware.resolve_trace_policy(tracker(side, own, where)) is expected


def test_a_langchain_built_in_policy_is_honoured_in_a_funcware_agent() -> None:
    refusal = lc_mw.ModelRefusalMiddleware()
    assert funcware.resolve_trace_policy(refusal) == TracePolicy(process_inputs=omit_payload)


def test_to_langchain_keeps_a_funcware_middlewares_policy() -> None:
    ours = tracker("funcware", OMIT, "class")
    converted = to_langchain(ours)
    assert converted.trace_policy is OMIT
    spans = hook_spans("langchain", converted)
    assert [inputs for inputs, _ in spans["Tracker.before_model"]] == [{}]


def test_internal_call_metadata_is_langchains_marker() -> None:
    assert funcware.internal_call_metadata() == lc_internal.internal_call_metadata()


def grading_middleware(marked: bool) -> Any:
    grader = ScriptedChatModel(responses=["GRADER SAYS B+"])

    class Grading(funcware.AgentMiddleware):
        stream_internal_calls = True  # funcware would hide it otherwise; the marker alone now
        transformers = (lc_internal.InternalCallTransformer,)

        def before_model(self, state: Any, runtime: Any) -> Any:
            metadata = funcware.internal_call_metadata() if marked else {}
            grader.invoke(state["messages"], config={"metadata": metadata})
            return None

    return Grading()


@pytest.mark.parametrize("marked", [True, False])
def test_a_call_marked_internal_stays_out_of_the_v3_message_stream(marked: bool) -> None:
    agent = funcware.create_agent(
        ScriptedChatModel(responses=["the answer"]), middleware=[grading_middleware(marked)]
    )
    run = agent.stream_events({"messages": [HumanMessage("grade me")]}, version="v3")
    streamed = repr([event["params"]["data"] for event in run if event["method"] == "messages"])
    assert "the answer" in streamed
    assert ("GRADER SAYS B+" in streamed) is not marked
