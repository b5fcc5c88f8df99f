"""Checking a node hook's ``messages`` write: the messages ``add_messages`` would leave.

Only what the write can change is read again: after an append, the open tail of the
history; after a rewrite by id that keeps the calls or answer it replaces, the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AnyMessage, BaseMessage, RemoveMessage, convert_to_messages
from langgraph.graph.message import add_messages

from funcware.hooks.middleware import HookImpl
from funcware.pairing.contract import AI, TOOL, is_paired

__all__ = ["call_ids", "check_write", "open_tail", "written_pairs"]


def _applied(before: list[AnyMessage], written: object) -> tuple[list[AnyMessage], int]:
    """The messages ``add_messages`` would leave after ``written`` (``before`` untouched),
    and from where they can differ from ``before`` in pairing (an append: its open tail)."""
    items: list[Any] = written if isinstance(written, list) else [written]
    ready = all(isinstance(m, BaseMessage) for m in items)
    new: list[Any] = items if ready else convert_to_messages(items)
    if any(isinstance(m, RemoveMessage) for m in new):
        merged: list[AnyMessage] = add_messages(before, [m.model_copy() for m in new])  # type: ignore[arg-type, assignment]
        return merged, 0
    after: list[AnyMessage] | None = None
    appended: list[AnyMessage] = []
    alike = True  # every replacement keeps the calls or answer of what it replaces
    for message in new:
        index = _position(before, message.id) if message.id is not None else None
        if index is None:
            appended.append(message)
            continue
        if after is None:
            after = list(before)
        alike = alike and call_ids(after[index]) == call_ids(message)
        after[index] = message  # replaced by id, in place
    if after is None:
        return [*before, *appended], open_tail(before)
    return [*after, *appended], open_tail(before) if alike else 0


def _position(messages: list[AnyMessage], message_id: str) -> int | None:
    """The index of the message with ``message_id`` (searched from the end, where a
    hook's rewrite usually lands), or ``None``."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].id == message_id:
            return index
    return None


def check_write(impl: HookImpl, state: Any, written: object, jump: object, strict: bool) -> None:
    """Warn (or raise) if ``written`` by ``impl``'s hook, applied to ``state``'s messages,
    breaks the contract that held before it; ``jump``: where the hook jumps."""
    # The latest calls may wait for the tools only where the tools run next: after the
    # model (unless the hook ends the run), or on a jump to the tools.
    pending_ok = jump == "tools" or (impl.hook == "after_model" and jump != "end")
    before = list(state.get("messages") or ()) if isinstance(state, Mapping) else []
    after, start = (before, open_tail(before)) if written is None else _applied(before, written)
    if is_paired(after[start:], pending_ok):
        return
    if not is_paired(before[start:] if start else before, pending_ok or jump == "end"):
        return  # broken before this write (named where that happened)
    from funcware.pairing.breaks import WRITE_FIX, problems, report

    what = f"The write of {impl.describe()}"
    if jump == "end" and is_paired(after, pending_ok=True):
        what += " (it jumps to the end and leaves the latest tool calls unanswered)"
    report(what, problems(after, pending_ok), strict, WRITE_FIX)


def open_tail(messages: Sequence[BaseMessage]) -> int:
    """Where the last block of tool calls and answers starts (``len(messages)``: none open).

    Messages appended after a history that keeps the contract keep it if the history from
    here on does: the check of an append reads only this tail.
    """
    index = len(messages) - 1
    while index >= 0 and messages[index].type in TOOL:
        index -= 1
    message = messages[index] if index >= 0 else None
    calls = message is not None and message.type in AI
    if calls and (message.tool_calls or message.invalid_tool_calls):  # type: ignore[union-attr]
        return index
    return index + 1


def call_ids(message: BaseMessage) -> object:
    """What of ``message`` counts for the contract: its kind and the call ids it makes or
    answers (a message rewritten with the same ones keeps the contract as it was)."""
    kind = message.type
    if kind in TOOL:
        return kind, message.tool_call_id  # type: ignore[attr-defined]
    if kind in AI:
        calls = message.tool_calls  # type: ignore[attr-defined]
        invalid = message.invalid_tool_calls  # type: ignore[attr-defined]
        return kind, [c["id"] for c in calls], [c["id"] for c in invalid]
    return kind


def written_pairs(update: Sequence[Any]) -> tuple[object, object]:
    """What a node's ``(key, value)`` writes put in ``messages`` (``None``: nothing), and
    where they jump."""
    pairs = [p for p in update if isinstance(p, tuple) and len(p) == 2]
    written = [value for key, value in pairs if key == "messages"]
    jump = next((value for key, value in pairs if key == "jump_to"), None)
    if not written:
        return None, jump
    return [m for value in written for m in (value if isinstance(value, list) else [value])], jump
