"""The same middleware stack gives the same LangSmith run tree on funcware and LangChain.

LangChain 1.5's ``create_agent`` traces each wrap-layer call as its own run; funcware's
agent must produce the same run names, run types and parent/child tree (model and tool
runs under the innermost layer), the same layer inputs (the request's fields, without
``runtime`` or ``handler``), and honour ``trace_policy`` the same way. Both run against a
local LangSmith recorder (the real ``langsmith`` client; nothing leaves the machine).

Needs the ``langchain`` extra; skipped without it, failed when ``FUNCWARE_REQUIRE_LANGCHAIN=1``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.tools import tool
from langsmith_support import LangSmithRecorder, recorded_langsmith
from support import call, calls_tool, hi, require_langchain

import funcware
from funcware import TracePolicy, omit_payload
from funcware.testing import ScriptedChatModel

lc_agents = require_langchain("langchain.agents")
lc_mw = require_langchain("langchain.agents.middleware")

SIDES = ["funcware", "langchain"]


@pytest.fixture(autouse=True)
def no_default_policy() -> Iterator[None]:
    for configure in (funcware.configure_trace_policy, lc_mw.configure_trace_policy):
        configure(None)
    yield
    for configure in (funcware.configure_trace_policy, lc_mw.configure_trace_policy):
        configure(None)


@pytest.fixture
def langsmith(monkeypatch: pytest.MonkeyPatch) -> Iterator[LangSmithRecorder]:
    with recorded_langsmith(monkeypatch) as recorder:
        yield recorder


@tool
def lookup(order: str) -> str:
    """Look an order up."""
    return f"order {order}: shipped"


def stack(side: str, policy: TracePolicy | None = None) -> list[Any]:
    """Guard (node hook + model layer), Retry (model layer), Audit (tool layer)."""
    base = funcware.AgentMiddleware if side == "funcware" else lc_mw.AgentMiddleware

    class Guard(base):  # type: ignore[valid-type,misc]
        trace_policy = policy

        def before_model(self, state: Any, runtime: Any) -> None:
            return None

        def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            return handler(request)

        async def awrap_model_call(self, request: Any, handler: Any) -> Any:
            return await handler(request)

    class Retry(base):  # type: ignore[valid-type,misc]
        def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            return handler(request)

        async def awrap_model_call(self, request: Any, handler: Any) -> Any:
            return await handler(request)

    class Audit(base):  # type: ignore[valid-type,misc]
        def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            return handler(request)

        async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
            return await handler(request)

    return [Guard(), Retry(), Audit()]


def agent(side: str, policy: TracePolicy | None = None) -> Any:
    model = ScriptedChatModel(responses=[calls_tool(call("lookup", {"order": "7"}, "c1")), "done"])
    build = funcware.create_agent if side == "funcware" else lc_agents.create_agent
    return build(model, [lookup], middleware=stack(side, policy))


def run_tree(side: str, monkeypatch: pytest.MonkeyPatch, *, asynchronous: bool = False) -> Any:
    with recorded_langsmith(monkeypatch) as recorder:
        built = agent(side)
        if asynchronous:
            import asyncio

            asyncio.run(built.ainvoke(hi()))
        else:
            built.invoke(hi())
        return recorder.tree(), recorder.runs()


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_the_run_tree_matches_langchains(
    monkeypatch: pytest.MonkeyPatch, asynchronous: bool
) -> None:
    ours, _ = run_tree("funcware", monkeypatch, asynchronous=asynchronous)
    theirs, _ = run_tree("langchain", monkeypatch, asynchronous=asynchronous)
    assert ours == theirs
    a = "a" if asynchronous else ""
    assert (2, f"Guard.{a}wrap_model_call", "chain") in ours
    assert (3, f"Retry.{a}wrap_model_call", "chain") in ours
    assert (4, "ScriptedChatModel", "llm") in ours
    assert (2, f"Audit.{a}wrap_tool_call", "chain") in ours
    assert (3, "lookup", "tool") in ours


def test_layer_inputs_carry_the_same_request_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    fields = {}
    for side in SIDES:
        _, runs = run_tree(side, monkeypatch)
        layer = next(run for run in runs if run["name"] == "Guard.wrap_model_call")
        tool_layer = next(run for run in runs if run["name"] == "Audit.wrap_tool_call")
        fields[side] = (
            sorted(layer["inputs"]),
            sorted(layer["inputs"]["request"]),
            sorted(tool_layer["inputs"]["request"]),
            tool_layer["inputs"]["request"]["tool_call"]["id"],
        )
    assert fields["funcware"] == fields["langchain"]
    assert "runtime" not in fields["funcware"][1]


@pytest.mark.parametrize(
    "policy",
    [TracePolicy(process_inputs=omit_payload), TracePolicy(process_outputs=omit_payload)],
    ids=["omit-inputs", "omit-outputs"],
)
@pytest.mark.parametrize("where", ["middleware", "default"])
def test_trace_policy_shapes_layer_runs_as_in_langchain(
    langsmith: LangSmithRecorder, policy: TracePolicy, where: str
) -> None:
    seen = {}
    for side in SIDES:
        configure = (
            funcware.configure_trace_policy
            if side == "funcware"
            else (lc_mw.configure_trace_policy)
        )
        configure(policy if where == "default" else None)
        agent(side, policy if where == "middleware" else None).invoke(hi())
        runs = [r for r in langsmith.runs() if r["name"] == "Guard.wrap_model_call"]
        last = runs[-1]
        seen[side] = (last["inputs"] == {}, last["outputs"] == {})
        configure(None)
    assert seen["funcware"] == seen["langchain"]
    omitted = policy.process_inputs is omit_payload
    assert seen["funcware"] == (omitted, not omitted)
