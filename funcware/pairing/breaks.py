"""A break of the tool-call pairing contract: what is wrong, the warning, the repair.

Loaded only once :func:`funcware.pairing.contract.is_paired` found a break. A break is a
:class:`~funcware.errors.ToolCallPairingWarning` (a :class:`~funcware.errors.ToolCallPairingError`
under ``effects="strict"``) naming the middleware, the hook, its ``file:line`` and the
messages; :func:`repaired` is the history a provider accepts.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage

from funcware.errors import ToolCallPairingError, ToolCallPairingWarning
from funcware.pairing.contract import is_paired

__all__ = [
    "HISTORY_FIX",
    "MISSING_ANSWER",
    "WRAPS_FIX",
    "WRITE_FIX",
    "history_break",
    "problems",
    "repaired",
    "report",
]

MISSING_ANSWER = (
    "Tool call {name!r} has no answer in this conversation (a middleware dropped or moved "
    "it); do not assume it ran."
)
"""The content of the error ``ToolMessage`` :func:`repaired` puts where an answer is missing."""


def report(what: str, broken: list[str], strict: bool, fix: str) -> None:
    """Warn (or, ``strict``, raise) that ``what`` breaks the contract as ``broken`` says."""
    listing = "\n".join(f"  - {p}" for p in broken)
    text = (
        f"{what} breaks the tool-call pairing contract (every tool call of an AIMessage "
        f"has exactly one ToolMessage answer, right after it):\n{listing}\n{fix}"
    )
    if strict:
        raise ToolCallPairingError(text)
    warnings.warn(text, ToolCallPairingWarning, stacklevel=3)


WRITE_FIX = (
    "A provider refuses such a history (HTTP 400) on the next model call. Keep each "
    "ToolMessage with its AIMessage when dropping or moving messages (remove a call's "
    "answers with it), or pass create_agent(tool_pairing='repair') to send the model a "
    "repaired history."
)


HISTORY_FIX = (
    "If a hook's write broke it, an earlier ToolCallPairingWarning names it; otherwise the "
    "run's input or the thread's saved history was already broken. Pass "
    "create_agent(tool_pairing='repair') to send the model a repaired history."
)
WRAPS_FIX = (
    "Keep each ToolMessage with its AIMessage when trimming or rewriting request.messages, "
    "or pass create_agent(tool_pairing='repair') to send the model a repaired history."
)


def _name(messages: Sequence[BaseMessage], index: int) -> str:
    message = messages[index]
    kind = type(message).__name__
    if isinstance(message, ToolMessage):
        return f"messages[{index}] ({kind}, tool_call_id={message.tool_call_id!r})"
    return f"messages[{index}] ({kind}, id={message.id!r})"


def problems(messages: Sequence[BaseMessage], pending_ok: bool = False) -> list[str]:
    """Every break of the contract in ``messages``, each naming the messages involved: the
    same reading as :func:`~funcware.pairing.contract.is_paired` (an answer belongs to the
    calls of the ``AIMessage`` it follows), in words."""
    found: list[str] = []
    waiting: dict[object, tuple[int, str]] = {}  # this block's calls that need an answer
    optional: dict[object, tuple[int, str]] = {}  # its unparsed calls, answered or not
    answered: dict[object, tuple[int, str]] = {}
    moved: set[object] = set()  # answers already named as coming after something else

    def named(call_id: object, at: int, tool: str) -> str:
        return f"{_name(messages, at)}'s tool call {tool!r} (id {call_id!r})"

    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            call_id = message.tool_call_id
            if call_id in waiting or call_id in optional:
                answered[call_id] = (waiting if call_id in waiting else optional).pop(call_id)
            elif call_id in answered:
                found.append(
                    f"{named(call_id, *answered[call_id])} is answered more than once: "
                    f"{_name(messages, index)} answer it again"
                )
            elif call_id in moved:
                moved.discard(call_id)
            else:
                found.append(f"{_name(messages, index)} answers no tool call before it")
            continue
        for unanswered, (at, tool) in waiting.items():
            later = _answer(messages, unanswered, index)
            if later is None:
                found.append(f"{named(unanswered, at, tool)} has no ToolMessage answer")
            else:
                moved.add(unanswered)
                found.append(
                    f"{_name(messages, index)} sits between {named(unanswered, at, tool)} and "
                    f"its answer {_name(messages, later)}"
                )
        waiting, optional, answered = {}, {}, {}
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                if call["id"] in waiting:
                    found.append(
                        f"{_name(messages, index)} repeats tool call id {call['id']!r} in one "
                        "message"
                    )
                waiting[call["id"]] = (index, call["name"])
            for invalid in message.invalid_tool_calls:
                optional[invalid["id"]] = (index, str(invalid["name"]))
    if not pending_ok:
        found.extend(
            f"{named(call_id, at, tool)} has no ToolMessage answer"
            for call_id, (at, tool) in waiting.items()
        )
    return found


def _answer(messages: Sequence[BaseMessage], call_id: object, start: int) -> int | None:
    """The index of the first answer to ``call_id`` from ``start`` on, if any."""
    for index in range(start, len(messages)):
        message = messages[index]
        if isinstance(message, ToolMessage) and message.tool_call_id == call_id:
            return index
    return None


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


def history_break(
    messages: list[AnyMessage],
    repair: bool,
    strict: bool,
    wraps: list[str],
    history: Sequence[BaseMessage] | None,
) -> list[AnyMessage]:
    """What to send the model instead of ``messages``, which break the contract: repaired,
    or (warned about, blaming ``wraps`` if the ``history`` they got kept it) as they are."""
    if repair:
        return repaired(messages)
    if wraps and history is not None and is_paired(history):
        layers = "; ".join(wraps)
        what = (
            "The history sent to the model (the agent's history kept the contract, so "
            f"{'this model wrap' if len(wraps) == 1 else 'one of these model wraps'} "
            f"changed it: {layers})"
        )
        report(what, problems(messages), strict, WRAPS_FIX)
    else:
        report("The history sent to the model", problems(messages), strict, HISTORY_FIX)
    return messages
