"""A funcware agent on Temporal survives its workers: killed with SIGKILL mid-tool,
mid-model-call, right after a tool call, or while an approval waits, another worker
finishes the run as if nothing happened; each step runs where ``placement()`` says."""

from __future__ import annotations

import subprocess
import sys

from conftest import HERE, Cluster

CLEAN = [
    ["HumanMessage", "hello"],
    ["AIMessage", ""],
    ["ToolMessage", "recorded hello"],
    ["AIMessage", "done: recorded hello"],
]


def test_a_run_on_one_worker_is_a_clean_run(cluster: Cluster) -> None:
    cluster.worker()
    cluster.start("agent", "clean", "hello")
    assert cluster.client("result", "clean") == CLEAN
    assert cluster.effects == ["hello"]
    activities = cluster.client("activities", "clean")
    assert all(attempt == 1 for _, attempt in activities)


def test_a_worker_killed_mid_tool_another_finishes(cluster: Cluster) -> None:
    first = cluster.worker(FW_TOOL_SLEEP="30")
    cluster.worker()
    cluster.start("agent", "mid-tool", "hello")
    cluster.wait_for("tool:start", first.pid)
    cluster.kill(first)
    assert cluster.client("result", "mid-tool") == CLEAN
    assert cluster.effects == ["hello"]  # the killed attempt never reached its effect
    retried = [name for name, attempt in cluster.client("activities", "mid-tool") if attempt > 1]
    assert retried == ["agent.tools"]


def test_a_worker_killed_mid_model_call_another_finishes(cluster: Cluster) -> None:
    first = cluster.worker(FW_MODEL_SLEEP="30")
    cluster.worker()
    cluster.start("agent", "mid-model", "hello")
    cluster.wait_for("model:start", first.pid)
    cluster.kill(first)
    assert cluster.client("result", "mid-model") == CLEAN
    assert cluster.effects == ["hello"]
    retried = [name for name, attempt in cluster.client("activities", "mid-model") if attempt > 1]
    assert retried == ["agent.model"]


def test_a_completed_tool_call_is_not_repeated_after_its_worker_dies(cluster: Cluster) -> None:
    """No once_per_call recipe: the tool's completed activity is in the workflow's history."""
    first = cluster.worker(FW_MODEL_SLEEP_AFTER_TOOL="30")
    cluster.start("agent", "after-tool", "hello")
    cluster.wait_for("tool:effect", first.pid)
    cluster.wait_for("hook:count_messages:3", first.pid)  # the tool's result is recorded
    cluster.kill(first)
    second = cluster.worker()
    assert cluster.client("result", "after-tool") == CLEAN
    assert cluster.effects == ["hello"]
    assert {pid for pid, what, _ in cluster.log if what == "model:start"} >= {second.pid}


def test_the_same_kill_on_a_plain_run_repeats_the_tool(cluster: Cluster) -> None:
    """In process, a run killed after its tool and run again does the effect again."""
    script = HERE / "plain_run.py"
    env = cluster.env(FW_MODEL_SLEEP_AFTER_TOOL="30")
    killed = subprocess.Popen([sys.executable, str(script)], env=env)
    cluster.wait_for("tool:effect", killed.pid)
    cluster.kill(killed)  # type: ignore[arg-type]
    again = subprocess.run([sys.executable, str(script)], env=cluster.env(), check=True,
                           capture_output=True, text=True)
    assert again.stdout.strip() == "done: recorded hello"
    assert cluster.effects == ["hello", "hello"]


def test_an_approval_paused_on_one_worker_is_resumed_through_another(cluster: Cluster) -> None:
    first = cluster.worker()
    cluster.start("approval", "approval", "hello")
    assert cluster.client("pending", "approval") == [{"tools": ["record"]}]
    cluster.kill(first)  # nothing runs while the approval waits: no worker is held
    second = cluster.worker()
    assert cluster.client("resume", "approval", "approve") == "accepted"
    assert cluster.client("result", "approval") == CLEAN
    assert cluster.effects == ["hello"]
    steps = [(pid, what) for pid, what, _ in cluster.log]
    assert (first.pid, "hook:approve:ask") in steps
    assert (second.pid, "hook:approve:approve") in steps


def test_a_refused_approval_ends_the_run_without_the_tool(cluster: Cluster) -> None:
    cluster.worker()
    cluster.start("approval", "refused", "hello")
    cluster.client("pending", "refused")
    cluster.client("resume", "refused", "reject")
    assert cluster.client("result", "refused") == [
        ["HumanMessage", "hello"],
        ["AIMessage", ""],
        ["AIMessage", "refused by the reviewer"],
    ]
    assert cluster.effects == []
