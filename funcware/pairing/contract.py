"""The tool-call pairing contract over a list of messages: every tool call of an
``AIMessage`` has exactly one ``ToolMessage`` answer, right after it (any order, nothing
between), no answer without its call; while the tools have not run, the latest calls may
wait (``pending_ok``). :mod:`funcware.pairing.breaks` says what is wrong, and repairs, once
:func:`is_paired` found something."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage

__all__ = ["AI", "TOOL", "is_paired"]

TOOL = frozenset({"tool", "ToolMessageChunk"})
AI = frozenset({"ai", "AIMessageChunk"})
# ``message.type``, not isinstance: pydantic's class checks cost a tenth of a microsecond.


def is_paired(messages: Sequence[BaseMessage], pending_ok: bool = False) -> bool:
    """Whether ``messages`` keep the contract (``pending_ok``: the last calls may wait). An
    unparsed call (``invalid_tool_calls``) may have an answer but needs none."""
    waiting: set[object] = set()
    optional: set[object] = set()
    for message in messages:
        kind = message.type
        if kind in TOOL:
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
        if kind in AI:
            calls = message.tool_calls  # type: ignore[attr-defined]
            if calls:
                waiting = {call["id"] for call in calls}
                if len(waiting) != len(calls):  # two calls share an id
                    return False
            if message.invalid_tool_calls:  # type: ignore[attr-defined]
                optional = {call["id"] for call in message.invalid_tool_calls}  # type: ignore[attr-defined]
    return pending_ok or not waiting
