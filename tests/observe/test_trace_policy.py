"""A middleware's ``trace_policy`` shapes what its hook spans record, as in LangChain 1.5.

Resolution: the middleware's own policy (instance, else class attribute) replaces the
process default (``configure_trace_policy``) whole; with neither, spans record as usual.
``create_agent`` attaches the policy to every node-hook node, reading the default when the
span records, so configuring it after the agent was built still applies.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tracers.base import BaseTracer
from langchain_core.tracers.schemas import Run

from funcware import (
    AgentMiddleware,
    TracePolicy,
    before_model,
    configure_trace_policy,
    create_agent,
    internal_call_metadata,
    omit_payload,
    resolve_trace_policy,
)
from funcware.compose.steps.tracing import hook_trace_policy
from funcware.testing import ScriptedChatModel

OMIT = TracePolicy(process_inputs=omit_payload)
COUNT = TracePolicy(process_outputs=lambda value: {"keys": sorted(value or {})})


@pytest.fixture(autouse=True)
def no_default_policy() -> Iterator[None]:
    configure_trace_policy(None)
    yield
    configure_trace_policy(None)


class Recorder(BaseTracer):
    """Records what each chain run's start and end carried, by run name."""

    def __init__(self) -> None:
        super().__init__()
        self.inputs: dict[str, list[Any]] = {}
        self.outputs: dict[str, list[Any]] = {}

    def _persist_run(self, run: Run) -> None:
        pass

    def _on_chain_start(self, run: Run) -> None:
        self.inputs.setdefault(run.name, []).append(run.inputs)

    def _on_chain_end(self, run: Run) -> None:
        self.outputs.setdefault(run.name, []).append(run.outputs)


class Noting(AgentMiddleware):
    def before_model(self, state: Any, runtime: Any) -> Any:
        return {"messages": [HumanMessage("note")]}


class QuietNoting(Noting):
    trace_policy = OMIT


def traced(middleware: Any) -> Recorder:
    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[middleware])
    recorder = Recorder()
    agent.invoke({"messages": [HumanMessage("secret question")]}, {"callbacks": [recorder]})
    return recorder


def test_the_resolution_order_is_own_then_default_then_none() -> None:
    assert resolve_trace_policy(Noting()) is None
    assert resolve_trace_policy(QuietNoting()) is OMIT  # class attribute
    instance = Noting()
    instance.trace_policy = COUNT
    assert resolve_trace_policy(instance) is COUNT  # instance attribute
    configure_trace_policy(COUNT)
    assert resolve_trace_policy(Noting()) is COUNT  # the process default
    assert resolve_trace_policy(QuietNoting()) is OMIT  # own replaces it whole
    configure_trace_policy(None)
    assert resolve_trace_policy(Noting()) is None


def test_a_node_hook_span_drops_its_payload_under_omit_payload() -> None:
    plain = traced(Noting())
    [seen] = plain.inputs["Noting.before_model"]
    assert "secret question" in str(seen)
    quiet = traced(QuietNoting())
    assert quiet.inputs["QuietNoting.before_model"] == [{}]
    # the span is still there, with its output (the policy drops inputs only)
    assert "note" in str(quiet.outputs["QuietNoting.before_model"])


def test_the_default_set_after_the_agent_was_built_still_applies() -> None:
    agent = create_agent(ScriptedChatModel(responses=["ok", "ok"]), middleware=[Noting()])
    configure_trace_policy(COUNT)
    recorder = Recorder()
    agent.invoke({"messages": [HumanMessage("hi")]}, {"callbacks": [recorder]})
    assert recorder.outputs["Noting.before_model"] == [{"keys": ["messages"]}]


def test_a_decorated_hook_takes_a_policy_as_an_instance_attribute() -> None:
    @before_model
    def noting(state: Any) -> Any:
        return {"messages": [HumanMessage("note")]}

    noting.trace_policy = OMIT
    assert traced(noting).inputs["noting.before_model"] == [{}]


def test_processors_see_the_value_only_when_a_policy_defines_them() -> None:
    policy = hook_trace_policy(Noting())
    assert policy.process_inputs is not None and policy.process_outputs is not None
    value = {"messages": ["m"]}
    assert policy.process_inputs(value) is value  # no policy: recorded unchanged
    configure_trace_policy(OMIT)
    assert policy.process_inputs(value) == {}
    assert policy.process_outputs(value) is value  # OMIT defines inputs only


def test_a_trace_policy_that_is_not_one_is_refused_naming_the_middleware() -> None:
    class Misconfigured(Noting):
        trace_policy = "omit"  # type: ignore[assignment]

    with pytest.raises(TypeError, match=r"middleware 'Misconfigured' \(.*test_trace_policy"):
        create_agent(ScriptedChatModel(responses=["ok"]), middleware=[Misconfigured()])
    with pytest.raises(TypeError, match="configure_trace_policy"):
        configure_trace_policy(omit_payload)  # type: ignore[arg-type]


def test_internal_call_metadata_marks_a_call_under_langchains_key() -> None:
    first, second = internal_call_metadata(), internal_call_metadata()
    assert list(first) == ["lc_internal_call"]
    assert first == second and first is not second  # one marker per process, fresh dicts
    assert isinstance(first["lc_internal_call"], str) and first["lc_internal_call"]
