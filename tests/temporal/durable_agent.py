"""The agent the Temporal tests serve: every kind of middleware, a tool with a side effect.

Its model answers from the messages it is given (never from a call counter), so a model
call run again on another worker answers the same. Environment variables (read at call
time, so a test sets them per worker process):

- ``FW_EFFECTS``: the file the ``record`` tool appends one line to (its side effect);
- ``FW_LOG``: the file every step appends ``<pid> <what> <where>`` to (``where`` is
  ``workflow`` or ``activity``: what Temporal says the code runs in);
- ``FW_TOOL_SLEEP``: seconds the tool sleeps before its side effect;
- ``FW_MODEL_SLEEP``: seconds the model call that answers the question sleeps first;
  ``FW_MODEL_SLEEP_AFTER_TOOL``: the same for the one that answers the tool's result.

On Temporal, they sleep on an activity's first attempt only (the retry on another worker
goes straight on).
"""

from __future__ import annotations

import importlib.util
import os
import time
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import interrupt
from temporalio import activity, workflow

from funcware import (
    AgentMiddleware,
    after_model,
    before_agent,
    before_model,
    compose,
    create_agent,
    wrap_model_call,
)
from funcware.cookbook.model_retry import ModelRetry
from funcware.testing import ScriptedChatModel

HAS_LANGCHAIN = importlib.util.find_spec("langchain") is not None


def where() -> str:
    if workflow.in_workflow():
        return "workflow"
    return "activity" if activity.in_activity() else "plain"


def pause(variable: str) -> None:
    """Sleep ``$variable`` seconds, on an activity's first attempt (or outside Temporal)."""
    if activity.in_activity() and activity.info().attempt > 1:
        return
    time.sleep(float(os.environ.get(variable, "0")))


def log(what: str) -> None:
    """Note a step in ``FW_LOG`` (in the workflow: past the sandbox, and not on replays)."""
    path = os.environ.get("FW_LOG")
    if not path:
        return
    if not workflow.in_workflow():
        _append(path, f"{os.getpid()} {what} {where()}")
    elif not workflow.unsafe.is_replaying():
        with workflow.unsafe.sandbox_unrestricted():
            _append(path, f"{os.getpid()} {what} workflow")


def _append(path: str, line: str) -> None:
    with open(path, "a", encoding="utf-8") as out:
        out.write(line + "\n")


@tool
def record(text: str) -> str:
    """Append ``text`` to the side-effect file."""
    log("tool:start")
    pause("FW_TOOL_SLEEP")
    with open(os.environ["FW_EFFECTS"], "a", encoding="utf-8") as out:
        out.write(f"{text}\n")
    log("tool:effect")
    return f"recorded {text}"


def respond(messages: list[BaseMessage]) -> AIMessage | str:
    """First ask for the tool with the question's text; after its result, answer."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        log("model:start:after-tool")
        pause("FW_MODEL_SLEEP_AFTER_TOOL")
        return f"done: {last.content}"
    log("model:start")
    pause("FW_MODEL_SLEEP")
    asked = next(m for m in reversed(messages) if isinstance(m, HumanMessage))
    call = {"name": "record", "args": {"text": str(asked.content)}, "id": "call-1"}
    return AIMessage("", tool_calls=[call])


@before_agent(writes=["state.started"])
def start(state: Any) -> dict[str, Any]:
    """Declared: runs in the workflow."""
    log("hook:start")
    return {}


@before_model(reads=["messages.history"])
def count_messages(state: Any) -> None:
    """Declared: runs in the workflow."""
    log(f"hook:count_messages:{len(state['messages'])}")


@before_model
def fetch_context(state: Any) -> None:
    """Undeclared (it could do I/O): runs as an activity."""
    log("hook:fetch_context")


class Audit(AgentMiddleware):
    """A class middleware: an undeclared after_model hook and a tool wrap."""

    def after_model(self, state: Any, runtime: Any) -> None:
        log("hook:audit")

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        log("wrap:audit_tool")
        return handler(request)


@wrap_model_call
def outer(request: Any, handler: Any) -> Any:
    log("wrap:outer")
    return handler(request)


@wrap_model_call
def inner(request: Any, handler: Any) -> Any:
    log("wrap:inner")
    return handler(request)


@after_model(can_jump_to=["end"], reads=["messages.latest"], writes=["messages.append"])
def approve(state: Any) -> dict[str, Any] | None:
    """Asks a human before any tool call; declared, so it waits in the workflow."""
    last = state["messages"][-1]
    if not getattr(last, "tool_calls", None):
        return None
    log("hook:approve:ask")
    decision = interrupt({"tools": [c["name"] for c in last.tool_calls]})
    log(f"hook:approve:{decision}")
    if decision != "approve":
        return {"messages": [AIMessage("refused by the reviewer")], "jump_to": "end"}
    return None


def middleware(*, approval: bool = False) -> list[Any]:
    stack: list[Any] = [start, count_messages, fetch_context, Audit(), compose(outer, inner)]
    if HAS_LANGCHAIN:
        from langchain.agents.middleware import ModelCallLimitMiddleware

        stack.append(ModelCallLimitMiddleware(run_limit=5))
    if approval:
        stack.append(approve)
    return stack


def build(*, approval: bool = False) -> Any:
    model = ScriptedChatModel(respond=respond)
    return create_agent(model, [record], middleware=middleware(approval=approval))


def fail(messages: list[BaseMessage]) -> AIMessage:
    """A provider that is down."""
    log("model:fail")
    raise ConnectionError("provider down")


def build_failing(*, retried: bool) -> Any:
    """An agent whose model always fails, with or without ModelRetry (one retry) around it."""
    stack = [ModelRetry(max_retries=1, base_delay=0.0)] if retried else []
    return create_agent(ScriptedChatModel(respond=fail), [record], middleware=stack)
