"""Resilient hooks: an observer that fails open, a guard with a deadline, cleanup that always runs.

Guarantee: the sandbox opened for a run is closed when the run ends, whether or
not it failed.

When to use: a metrics or logging hook must never take the run down with it; a guard that
calls a slow service (moderation, policy check) must not stall the run; a resource opened
for a run (a connection, a sandbox, a lock) must be closed even when the run fails.

- ``record_latency`` is an ``after_model`` observer with ``on_error="continue"``: when its
  metrics backend is down, the failure is logged on the ``funcware`` logger (middleware,
  hook, file:line) and the run goes on as if the hook had returned ``None``.
- ``moderate`` is a ``before_model`` guard with ``timeout=2.0``: if the moderation service
  hangs, the run fails with ``HookTimeoutError`` after two seconds instead of waiting. The
  guard's own refusal (``PermissionError``) is a real failure: its policy is ``"raise"``.
- ``SandboxScope`` opens a sandbox in ``before_agent`` and closes it in an ``after_agent``
  marked ``@hook_config(always=True)``: the close also runs when the run fails (the model,
  a tool, a hook, a deadline), sees the error through ``run_error()``, and then the run's
  exception propagates unchanged.

How to adapt: point ``METRICS`` at your metrics client; give the guard the deadline your
service promises; keep per-run resources keyed by something in the state or the context
(here, a ``sandbox`` field), and make ``close`` idempotent (it runs once per run, but a run
resumed from a checkpoint after a failure closes again when it ends).
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from langchain_core.messages import HumanMessage

from funcware import (
    AgentMiddleware,
    AgentState,
    after_model,
    before_model,
    create_agent,
    hook_config,
    run_error,
)
from funcware.testing import ScriptedChatModel


class Metrics:
    """A stand-in metrics client whose backend can be down."""

    def __init__(self) -> None:
        self.up = True
        self.points: list[tuple[str, float]] = []

    def send(self, name: str, value: float) -> None:
        if not self.up:
            raise ConnectionError("metrics backend unreachable")
        self.points.append((name, value))


METRICS = Metrics()


@after_model(on_error="continue", reads=["state.messages", "messages.history"])
def record_latency(state: AgentState[Any]) -> None:
    """Send how many messages the conversation has; never fails the run."""
    METRICS.send("conversation.length", float(len(state["messages"])))


BLOCKED = ("rm -rf",)


@before_model(timeout=2.0, reads=["state.messages", "messages.history"])
def moderate(state: AgentState[Any]) -> None:
    """Refuse blocked requests; a hung check fails the run after two seconds."""
    time.sleep(0.01)  # stands in for the call to a moderation service
    asked = [m for m in state["messages"] if isinstance(m, HumanMessage)]
    text = asked[-1].text if asked else ""  # the latest request, wherever it is
    if any(word in text for word in BLOCKED):
        raise PermissionError(f"moderation refused: {text!r}")


class Sandbox:
    """A resource that must be closed: here it only remembers how it was."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.closed_with: str | None = None
        SANDBOXES[key] = self

    def close(self, reason: str) -> None:
        self.closed_with = reason


SANDBOXES: dict[str, Sandbox] = {}
"""Every sandbox opened, by key."""


class SandboxState(AgentState[Any], total=False):
    sandbox: str


class SandboxScope(AgentMiddleware[SandboxState, Any]):
    """Opens a sandbox per run; closes it when the run ends, whether or not it failed."""

    state_schema = SandboxState
    reads = ("state.sandbox",)
    writes = ("state.sandbox",)

    def __init__(self) -> None:
        self.runs = 0

    def before_agent(self, state: SandboxState, runtime: Any) -> dict[str, Any]:
        self.runs += 1
        return {"sandbox": Sandbox(f"run-{self.runs}").key}

    @hook_config(always=True)
    def after_agent(self, state: SandboxState, runtime: Any) -> None:
        sandbox = SANDBOXES.get(state.get("sandbox", ""))
        if sandbox is not None:
            error = run_error()
            sandbox.close("ok" if error is None else f"failed: {type(error).__name__}")


def demo() -> tuple[Any, dict[str, Any]]:
    """A run with the metrics backend down, then a run the guard refuses."""
    scope = SandboxScope()
    model = ScriptedChatModel(responses=["Here is the summary."])
    agent = create_agent(model, middleware=[moderate, scope, record_latency])
    METRICS.up = False  # the observer fails; the run does not
    state = agent.invoke({"messages": [HumanMessage("Summarise the report.")]})
    METRICS.up = True
    assert state["messages"][-1].text == "Here is the summary."
    with contextlib.suppress(PermissionError):  # the guard's refusal propagates unchanged
        agent.invoke({"messages": [HumanMessage("Please rm -rf the server.")]})
    # and the sandbox of each run was closed, also for the one that failed.
    assert SANDBOXES["run-1"].closed_with == "ok"
    assert SANDBOXES["run-2"].closed_with == "failed: PermissionError"
    return agent, state


if __name__ == "__main__":
    print(demo()[1]["messages"][-1].content)
