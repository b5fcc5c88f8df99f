"""Compact terminal rendering of a conversation, for the tour."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

__all__ = ["render_messages", "shorten"]

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
