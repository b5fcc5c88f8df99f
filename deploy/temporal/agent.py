"""The agent deploy/temporal serves: offline (a rule-driven ``ScriptedChatModel``), with a
tool that has a side effect behind a human approval.

- ``send_email`` appends the email to ``$FUNCWARE_OUTBOX`` (default ``outbox.txt`` in the
  working directory): its side effect;
- ``ApproveToolCalls`` (the cookbook's ``human_approval`` recipe) declares its effects, so
  it runs in the workflow, and its ``interrupt()`` waits there, holding no worker;
- ``note_turn`` declares nothing (it could do I/O), so it runs as an activity.

To go live, pass a real chat model instead of ``ScriptedChatModel``.
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from funcware import before_model, create_agent
from funcware.cookbook.human_approval import ApproveToolCalls
from funcware.testing import ScriptedChatModel


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    with open(os.environ.get("FUNCWARE_OUTBOX", "outbox.txt"), "a", encoding="utf-8") as out:
        out.write(f"to {to}: {body}\n")
    return f"sent to {to}"


def reply(messages: list[BaseMessage]) -> AIMessage | str:
    """Email the team what the user asked for; then say it is done."""
    last = messages[-1]
    if isinstance(last, ToolMessage) and last.status == "error":  # the reviewer rejected it
        return "I did not send it."
    if isinstance(last, ToolMessage):
        return f"Done: {last.content}."
    asked = next(m for m in reversed(messages) if isinstance(m, HumanMessage))
    call = {"name": "send_email", "args": {"to": "team", "body": str(asked.content)}, "id": "e1"}
    return AIMessage("", tool_calls=[call])


@before_model
def note_turn(state: Any) -> None:
    """Undeclared: runs as an activity."""
    return None


def build() -> Any:
    """A new agent (each worker builds its own, under the same graph name)."""
    return create_agent(
        ScriptedChatModel(respond=reply),
        [send_email],
        middleware=[note_turn, ApproveToolCalls({"send_email"})],
    )
