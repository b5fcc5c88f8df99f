"""Tool monitoring: record every tool call's name, arguments, duration and outcome.

Guarantee: every tool call that runs leaves a record with its call id and how it
ended.

When to use: find slow or failing tools, see which arguments the model sends, feed a
dashboard or an audit log — without touching the tools themselves.

``ToolMonitor`` is a ``wrap_tool_call`` middleware: it times ``handler`` (the inner
layers and the tool) and appends a ``ToolCallRecord`` to ``monitor.records``. The status
is the returned ``ToolMessage``'s (``"success"``, or ``"error"`` when the tool node turned
a failure such as invalid arguments into a message for the model), ``"command"`` when the
tool returned a ``Command``, and ``"raised"`` when an exception escaped — which is then
re-raised untouched. Tool calls from one model turn run in parallel, so appends are
guarded by a lock. Each record is also logged at DEBUG.

How to adapt: send records to your metrics system instead of a list; keep only
failures or calls slower than a threshold; redact sensitive arguments before recording;
keep one monitor per agent (records are per instance) and clear ``records`` between runs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command

from funcware import AgentMiddleware, AgentState, ToolCallRequest, create_agent
from funcware.testing import ScriptedChatModel

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call, as the monitor saw it."""

    name: str
    args: dict[str, Any]
    call_id: str | None
    seconds: float
    status: str
    """``"success"``, ``"error"``, ``"command"`` or ``"raised"``."""
    detail: str = ""
    """The error text, for ``"error"`` and ``"raised"``."""


class ToolMonitor(AgentMiddleware[AgentState[Any], Any]):
    """Records each tool call in ``records``: name, args, duration and status."""

    reads = (
        "tool.args",
        "tool.result",
        "tool.calls",
    )  # it only looks: nothing it passes on is changed

    def __init__(self) -> None:
        self.records: list[ToolCallRecord] = []
        self._lock = threading.Lock()

    def _record(self, request: ToolCallRequest, start: float, status: str, detail: str) -> None:
        call = request.tool_call
        record = ToolCallRecord(
            name=call["name"],
            args=dict(call["args"]),
            call_id=call["id"],
            seconds=time.perf_counter() - start,
            status=status,
            detail=detail,
        )
        with self._lock:
            self.records.append(record)
        logger.debug("tool call %s", record)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        start = time.perf_counter()
        try:
            result = handler(request)
        except Exception as exc:
            self._record(request, start, "raised", f"{type(exc).__name__}: {exc}")
            raise
        if isinstance(result, ToolMessage):
            detail = result.text if result.status == "error" else ""
            self._record(request, start, result.status, detail)
        else:
            self._record(request, start, "command", "")
        return result


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def demo() -> tuple[Any, dict[str, Any]]:
    """Two tool calls: one succeeds, one has invalid arguments; both are recorded."""
    model = ScriptedChatModel(
        responses=[
            AIMessage("", tool_calls=[{"name": "add", "args": {"a": 2, "b": 3}, "id": "a1"}]),
            AIMessage("", tool_calls=[{"name": "add", "args": {"a": 2, "b": "x"}, "id": "a2"}]),
            "2 + 3 = 5; the second sum had an invalid argument.",
        ]
    )
    monitor = ToolMonitor()
    agent = create_agent(model, [add], middleware=[monitor])
    state = agent.invoke({"messages": [HumanMessage("Add 2 and 3, then 2 and x.")]})
    assert [(r.name, r.call_id, r.status) for r in monitor.records] == [
        ("add", "a1", "success"),
        ("add", "a2", "error"),
    ]
    return agent, state


if __name__ == "__main__":
    print(demo()[1]["messages"][-1].content)
