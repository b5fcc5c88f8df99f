"""The ``resilient_hooks`` recipe: its demo's effects and each of its three hooks."""

from __future__ import annotations

import logging

import pytest
from langchain_core.messages import HumanMessage

from funcware import create_agent
from funcware.cookbook import resilient_hooks as recipe
from funcware.hooks.middleware import hook_impls
from funcware.policies.hooks import resolve
from funcware.testing import ScriptedChatModel


def test_the_demo_closes_both_sandboxes_and_survives_the_metrics_outage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    recipe.METRICS.points.clear()
    with caplog.at_level(logging.WARNING, logger="funcware"):
        _, state = recipe.demo()
    assert state["messages"][-1].text == "Here is the summary."
    assert recipe.SANDBOXES["run-1"].closed_with == "ok"
    assert recipe.SANDBOXES["run-2"].closed_with == "failed: PermissionError"
    assert recipe.METRICS.points == []  # down for the first run; the second never reached it
    assert any("record_latency" in r.getMessage() for r in caplog.records)


def test_the_guard_has_a_deadline_and_raises_on_its_own() -> None:
    assert resolve(hook_impls(recipe.moderate)["before_model"]).options["timeout"] == 2.0
    assert resolve(hook_impls(recipe.record_latency)["after_model"]).options["on_error"] == (
        "continue"
    )
    assert resolve(hook_impls(recipe.SandboxScope())["after_agent"]).options["always"]


def test_a_model_failure_still_closes_the_sandbox() -> None:
    scope = recipe.SandboxScope()
    model = ScriptedChatModel(responses=[RuntimeError("model down")])
    agent = create_agent(model, middleware=[recipe.moderate, scope, recipe.record_latency])
    with pytest.raises(RuntimeError, match="model down"):
        agent.invoke({"messages": [HumanMessage("Summarise the report.")]})
    assert recipe.SANDBOXES["run-1"].closed_with == "failed: RuntimeError"
