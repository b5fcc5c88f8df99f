"""The tool-call pairing contract, checked, explained and repaired over a list of messages.

The contract: every tool call of an ``AIMessage`` has exactly one ``ToolMessage`` answer,
no ``ToolMessage`` answers a call that is not there, and nothing sits between a call and
its answers (the answers follow their ``AIMessage`` directly, in any order). While the
tools have not run yet, the latest ``AIMessage``'s calls may still be waiting
(``pending_ok``).

:func:`is_paired` is the check run on every model call: one pass, no allocation beyond a
set per tool-calling message. :func:`problems` says what is wrong, message by message,
and runs only once :func:`is_paired` said something is. :func:`repaired` is the history a
provider accepts.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage

__all__ = ["MISSING_ANSWER", "is_paired", "open_tail", "problems", "repaired"]

MISSING_ANSWER = (
    "Tool call {name!r} has no answer in this conversation (a middleware dropped or moved "
    "it); do not assume it ran."
)
"""The content of the error ``ToolMessage`` :func:`repaired` puts where an answer is missing."""


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


def _name(messages: Sequence[BaseMessage], index: int) -> str:
    message = messages[index]
    kind = type(message).__name__
    if isinstance(message, ToolMessage):
        return f"messages[{index}] ({kind}, tool_call_id={message.tool_call_id!r})"
    return f"messages[{index}] ({kind}, id={message.id!r})"


def _caller(message: BaseMessage, calls: dict[object, tuple[int, str, bool]]) -> int:
    """The index of the AIMessage whose call ``message`` answers (-1: not an answer)."""
    if not isinstance(message, ToolMessage):
        return -1
    return calls.get(message.tool_call_id, (-1, "", False))[0]


def problems(messages: Sequence[BaseMessage], pending_ok: bool = False) -> list[str]:
    """Every break of the contract in ``messages``, each naming the messages involved."""
    # call id -> (index of its AIMessage, tool, whether an answer is optional)
    calls: dict[object, tuple[int, str, bool]] = {}
    answers: dict[object, list[int]] = {}
    found: list[str] = []
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            answers.setdefault(message.tool_call_id, []).append(index)
        elif isinstance(message, AIMessage):
            for call in message.tool_calls:
                if call["id"] in calls:
                    first = calls[call["id"]][0]
                    found.append(
                        f"{_name(messages, index)} repeats tool call id {call['id']!r} "
                        f"(already used by {_name(messages, first)})"
                    )
                    continue
                calls[call["id"]] = (index, call["name"], False)
            for invalid in message.invalid_tool_calls:
                calls.setdefault(invalid["id"], (index, str(invalid["name"]), True))
    required = [at for at, _, optional in calls.values() if not optional]
    last_caller = max(required, default=-1)
    waiting_ok = pending_ok and all(isinstance(m, ToolMessage) for m in messages[last_caller + 1 :])
    for call_id, (at, tool, optional) in calls.items():
        mine = [i for i in answers.get(call_id, []) if i > at]
        named = f"{_name(messages, at)}'s tool call {tool!r} (id {call_id!r})"
        if not mine:
            if not optional and not (waiting_ok and at == last_caller):
                found.append(f"{named} has no ToolMessage answer")
            continue
        if len(mine) > 1:
            others = ", ".join(_name(messages, j) for j in mine[1:])
            found.append(f"{named} is answered more than once: {others} answer it again")
        between = [i for i in range(at + 1, mine[0]) if _caller(messages[i], calls) != at]
        if between:
            found.append(
                f"{_name(messages, between[0])} sits between {named} and its answer "
                f"{_name(messages, mine[0])}"
            )
    for call_id, indexes in answers.items():
        at = calls.get(call_id, (len(messages), "", False))[0]
        found.extend(
            f"{_name(messages, i)} answers no tool call before it" for i in indexes if i < at
        )
    return found


def repaired(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """``messages`` with the contract kept: each call's first answer moved right after it,
    an error answer for a call that has none, orphaned and repeated answers dropped."""
    first_answer: dict[object, ToolMessage] = {}
    for message in messages:
        if isinstance(message, ToolMessage):
            first_answer.setdefault(message.tool_call_id, message)
    fixed: list[AnyMessage] = []
    used: set[object] = set()
    for message in messages:
        if isinstance(message, ToolMessage):
            continue
        fixed.append(message)
        if not isinstance(message, AIMessage):
            continue
        for invalid in message.invalid_tool_calls:
            answer = first_answer.get(invalid["id"])
            if answer is not None and invalid["id"] not in used:
                used.add(invalid["id"])
                fixed.append(answer)
        for call in message.tool_calls:
            if call["id"] in used:
                continue
            used.add(call["id"])
            answer = first_answer.get(call["id"])
            fixed.append(
                answer
                if answer is not None
                else ToolMessage(
                    content=MISSING_ANSWER.format(name=call["name"]),
                    tool_call_id=call["id"],
                    name=call["name"],
                    status="error",
                )
            )
    return fixed
