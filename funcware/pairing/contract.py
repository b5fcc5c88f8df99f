"""The tool-call pairing contract, checked over a list of messages.

The contract: every tool call of an ``AIMessage`` has exactly one ``ToolMessage`` answer,
no ``ToolMessage`` answers a call that is not there, and nothing sits between a call and
its answers (the answers follow their ``AIMessage`` directly, in any order). While the
tools have not run yet, the latest ``AIMessage``'s calls may still be waiting
(``pending_ok``).

:func:`is_paired` is the check run on every model call: one pass, no allocation beyond a
set per tool-calling message. What is wrong, and the repaired history, are worked out in
:mod:`funcware.pairing.breaks` only once it said something is.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage

__all__ = ["call_ids", "is_paired", "open_tail"]

_TOOL = frozenset({"tool", "ToolMessageChunk"})
_AI = frozenset({"ai", "AIMessageChunk"})
# ``message.type``, not isinstance: pydantic's class checks cost a tenth of a microsecond.


def is_paired(messages: Sequence[BaseMessage], pending_ok: bool = False) -> bool:
    """Whether ``messages`` keep the contract (``pending_ok``: the last calls may wait).

    A call the provider could not parse (``invalid_tool_calls``) may have an answer, right
    after it, but needs none: the agent answers it itself before the next model call.
    """
    waiting: set[object] = set()
    optional: set[object] = set()
    for message in messages:
        kind = message.type
        if kind in _TOOL:
            call_id = message.tool_call_id  # type: ignore[attr-defined]
            if call_id in waiting:
                waiting.discard(call_id)
            elif call_id in optional:
                optional.discard(call_id)
            else:
                return False
            continue
        if waiting:
            return False
        if optional:
            optional = set()
        if kind in _AI:
            calls = message.tool_calls  # type: ignore[attr-defined]
            if calls:
                waiting = {call["id"] for call in calls}
                if len(waiting) != len(calls):  # two calls share an id
                    return False
            if message.invalid_tool_calls:  # type: ignore[attr-defined]
                optional = {call["id"] for call in message.invalid_tool_calls}  # type: ignore[attr-defined]
    return pending_ok or not waiting


def open_tail(messages: Sequence[BaseMessage]) -> int:
    """Where the last block of tool calls and answers starts (``len(messages)``: none open).

    Messages appended after a history that keeps the contract keep it if the history from
    here on does: the check of an append reads only this tail.
    """
    index = len(messages) - 1
    while index >= 0 and messages[index].type in _TOOL:
        index -= 1
    message = messages[index] if index >= 0 else None
    calls = message is not None and message.type in _AI
    if calls and (message.tool_calls or message.invalid_tool_calls):  # type: ignore[union-attr]
        return index
    return index + 1


def call_ids(message: BaseMessage) -> object:
    """What of ``message`` counts for the contract: its kind and the call ids it makes or
    answers (a message rewritten with the same ones keeps the contract as it was)."""
    kind = message.type
    if kind in _TOOL:
        return kind, message.tool_call_id  # type: ignore[attr-defined]
    if kind in _AI:
        calls = message.tool_calls  # type: ignore[attr-defined]
        invalid = message.invalid_tool_calls  # type: ignore[attr-defined]
        return kind, [c["id"] for c in calls], [c["id"] for c in invalid]
    return kind
