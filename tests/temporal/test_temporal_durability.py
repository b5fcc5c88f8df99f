"""A funcware agent on Temporal survives its workers: killed with SIGKILL mid-tool,
mid-model-call, right after a tool call, or while an approval waits, another worker
finishes the run as one clean run would; a completed tool call is never repeated."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from temporal_cluster import HERE, Cluster

CLEAN = [
    ["HumanMessage", "hello"],
    ["AIMessage", ""],
    ["ToolMessage", "recorded hello"],
    ["AIMessage", "done: recorded hello"],
]


def retried(cluster: Cluster, run_id: str) -> list[str]:
    """The activities of the run that needed more than one attempt."""
    return [name for name, attempt in cluster.client("activities", run_id) if attempt > 1]


def test_a_run_on_one_worker_is_a_clean_run(cluster: Cluster) -> None:
    cluster.start_workers(1)
    cluster.start("agent", "clean", "hello")
    assert cluster.client("result", "clean") == CLEAN
    assert cluster.effects == ["hello"]
    assert retried(cluster, "clean") == []


def test_a_worker_killed_mid_tool_another_finishes(cluster: Cluster) -> None:
    cluster.start_workers(2, FW_TOOL_SLEEP="30")  # on the first attempt only
    cluster.start("agent", "mid-tool", "hello")
    killed = cluster.who("tool:start")
    cluster.kill(killed)
    assert cluster.client("result", "mid-tool") == CLEAN
    assert cluster.effects == ["hello"]  # the killed attempt never reached its effect
    assert retried(cluster, "mid-tool") == ["agent.tools"]
    assert cluster.who("tool:effect") != killed


def test_a_worker_killed_mid_model_call_another_finishes(cluster: Cluster) -> None:
    cluster.start_workers(2, FW_MODEL_SLEEP="30")
    cluster.start("agent", "mid-model", "hello")
    cluster.kill(cluster.who("model:start"))
    assert cluster.client("result", "mid-model") == CLEAN
    assert cluster.effects == ["hello"]
    assert retried(cluster, "mid-model") == ["agent.model"]


def test_a_completed_tool_call_is_not_repeated_after_its_worker_dies(cluster: Cluster) -> None:
    """No once_per_call recipe: the tool's completed activity is in the workflow's history."""
    cluster.start_workers(2, FW_MODEL_SLEEP_AFTER_TOOL="30")
    cluster.start("agent", "after-tool", "hello")
    cluster.who("tool:effect")
    cluster.who("hook:count_messages:3")  # the workflow has the tool's result
    cluster.kill(cluster.who("model:start:after-tool"))
    assert cluster.client("result", "after-tool") == CLEAN
    assert cluster.effects == ["hello"]
    assert retried(cluster, "after-tool") == ["agent.model"]


def test_the_same_kill_on_a_plain_run_repeats_the_tool(cluster: Cluster) -> None:
    """In process, a run killed after its tool and started again does the effect again."""
    script = [sys.executable, str(HERE / "plain_run.py")]
    killed = subprocess.Popen(script, env=cluster.env(FW_MODEL_SLEEP_AFTER_TOOL="30"))
    cluster.who("model:start:after-tool")
    killed.kill()
    killed.wait(timeout=10)
    again = subprocess.run(script, env=cluster.env(), check=True, capture_output=True, text=True)
    assert again.stdout.strip() == "done: recorded hello"
    assert cluster.effects == ["hello", "hello"]


def test_an_approval_paused_on_one_worker_is_resumed_through_another(cluster: Cluster) -> None:
    cluster.start_workers(2)
    cluster.start("approval", "approval", "hello")
    assert cluster.client("pending", "approval") == [{"tools": ["record"]}]
    asked = cluster.who("hook:approve:ask")
    cluster.kill(asked)  # nothing runs while the approval waits: no worker is held
    assert cluster.client("resume", "approval", "approve") == "accepted"
    assert cluster.client("result", "approval") == CLEAN
    assert cluster.effects == ["hello"]
    assert cluster.who("hook:approve:approve") != asked


@pytest.mark.parametrize(
    ("graph", "where"), [("approval", "workflow"), ("approval-in-activity", "activity")]
)
def test_an_approval_waits_where_its_hook_runs(cluster: Cluster, graph: str, where: str) -> None:
    """Asked from the workflow or from an activity, the decision reaches the hook."""
    cluster.start_workers(1)
    cluster.start(graph, f"decided-{graph}", "hello")
    assert cluster.client("pending", f"decided-{graph}") == [{"tools": ["record"]}]
    cluster.client("resume", f"decided-{graph}", "approve")
    assert cluster.client("result", f"decided-{graph}") == CLEAN
    noted = {what: placed for _, what, placed in cluster.log}
    assert noted["hook:approve:ask"] == noted["hook:approve:approve"] == where
    cluster.start(graph, f"refused-{graph}", "hello")
    cluster.client("pending", f"refused-{graph}")
    cluster.client("resume", f"refused-{graph}", "reject")
    assert cluster.client("result", f"refused-{graph}") == [
        ["HumanMessage", "hello"],
        ["AIMessage", ""],
        ["AIMessage", "refused by the reviewer"],
    ]
    assert cluster.effects == ["hello"]  # the approved run's only


def test_each_step_runs_where_placement_says(cluster: Cluster) -> None:
    """Decorated hooks, a class middleware, a compose() and (with the langchain extra) a
    LangChain built-in: each runs where placement() (and explain()) says."""
    import durable_agent

    from funcware import explain
    from funcware.temporal import placement

    cluster.start_workers(1)
    cluster.start("agent", "placed", "hello")
    assert cluster.client("result", "placed") == CLEAN
    placed = placement(durable_agent.build())
    ran = {name for name, _ in cluster.client("activities", "placed")}
    assert ran == {f"agent.{node}" for node in placed.activities}
    noted = {what: where for _, what, where in cluster.log}
    assert noted["hook:start"] == placed.where("start.before_agent") == "workflow"
    assert noted["hook:count_messages:1"] == placed.where("count_messages.before_model")
    assert placed.where("count_messages.before_model") == "workflow"
    assert noted["hook:fetch_context"] == placed.where("fetch_context.before_model") == "activity"
    assert noted["hook:audit"] == placed.where("Audit.after_model") == "activity"
    assert noted["wrap:outer"] == noted["wrap:inner"] == noted["model:start"] == "activity"
    assert noted["wrap:audit_tool"] == noted["tool:effect"] == "activity"
    if os.environ.get("FUNCWARE_REQUIRE_LANGCHAIN") == "1":
        assert durable_agent.HAS_LANGCHAIN, "FUNCWARE_REQUIRE_LANGCHAIN=1 without langchain"
    langchain = [s.node for s in placed.steps if s.node.startswith("ModelCallLimitMiddleware.")]
    assert bool(langchain) == durable_agent.HAS_LANGCHAIN
    assert all(placed.where(node) == "activity" for node in langchain)
    assert {f"agent.{node}" for node in langchain} <= ran
    worker_agent = durable_agent.build()
    from funcware.temporal import temporal_graph

    temporal_graph(worker_agent)
    shown = str(explain(worker_agent))
    assert "temporal      start.before_agent" in shown and "declares only state effects" in shown


def test_temporal_does_not_retry_what_a_retry_layer_already_retried(cluster: Cluster) -> None:
    """A model error after ModelRetry's own retries fails the activity for good; without a
    retry layer, Temporal's retry policy (5 attempts in these workers) retries it."""
    cluster.start_workers(1)
    cluster.start("failing-retried", "fail-retried", "hello")
    error = cluster.client.failure("result", "fail-retried")
    assert "ConnectionError: provider down (not retried by Temporal" in error
    assert cluster.client("activities", "fail-retried") == [["failing-retried.model", 1]]
    assert [what for _, what, _ in cluster.log].count("model:fail") == 2  # ModelRetry's 2 tries
    cluster.start("failing", "fail-plain", "hello")
    assert "provider down" in cluster.client.failure("result", "fail-plain")
    assert cluster.client("activities", "fail-plain") == [["failing.model", 5]]
    assert [what for _, what, _ in cluster.log].count("model:fail") == 2 + 5
