"""Compact terminal rendering of a conversation, for the tour."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from funcware import explain

__all__ = ["done_lines", "render_messages", "shorten"]

WIDTH = 96


def shorten(text: str, width: int = WIDTH) -> str:
    """``text`` on one line, cut to ``width`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _line(message: BaseMessage) -> str:
    if isinstance(message, AIMessage):
        calls = ", ".join(
            f"{c['name']}({', '.join(f'{k}={v!r}' for k, v in c['args'].items())})"
            for c in message.tool_calls
        )
        text = message.text
        body = " ".join(part for part in (text, f"-> {calls}" if calls else "") if part)
        return f"ai      {shorten(body or '(empty)')}"
    if isinstance(message, ToolMessage):
        mark = " !" if message.status == "error" else ""
        return f"tool{mark:<3} {shorten(f'{message.name}: {message.text}')}"
    return f"{message.type:<7} {shorten(message.text)}"


def render_messages(messages: Sequence[BaseMessage]) -> list[str]:
    """One line per message: its role, then its text (tool calls shown as calls)."""
    return [_line(m) for m in messages]


_HIDDEN_STATE = frozenset({"messages", "jump_to", "structured_response"})


def _pauses(agent: Any) -> list[Any]:
    """What ``interrupt()`` asked, in every run the agent's checkpointer saved."""
    saver = getattr(agent, "checkpointer", None)
    if saver is None or not hasattr(saver, "list"):
        return []
    asked: list[Any] = []
    for saved in saver.list(None):
        for _task, channel, value in saved.pending_writes or []:
            if channel == "__interrupt__":
                asked.extend(getattr(v, "value", v) for v in value)
    return asked


def done_lines(agent: Any, state: dict[str, Any]) -> list[str]:
    """What a demo left behind: pauses, the state's own fields, middleware ``records``."""
    out = [f"paused        {shorten(repr(value), 80)}" for value in _pauses(agent)]
    for key, value in state.items():
        if key not in _HIDDEN_STATE and not key.startswith("_"):
            out.append(f"state         {key} = {shorten(repr(value), 70)}")
    for middleware in explain(agent).plan.middleware:
        for item in getattr(middleware, "records", None) or []:
            out.append(f"record        {shorten(repr(item), 80)}")
    return out
