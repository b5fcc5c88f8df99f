"""The model call's check reads a run's history from where it last found it paired: the next
step's history, which starts with the very same messages, is read from their end, and a
break anywhere is still found."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from funcware.compose.steps.model_call import ModelCall
from funcware.errors import ToolCallPairingError
from funcware.pairing import checks
from funcware.pairing.checks import PairedModelCall


def ai(*ids: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": "lookup", "args": {}, "id": i} for i in ids])


def answer(call_id: str) -> ToolMessage:
    return ToolMessage("ok", tool_call_id=call_id)


def strict_call() -> PairedModelCall:
    return PairedModelCall(ModelCall(), repair=False, strict=True, wraps=[])


def test_the_next_step_is_read_from_the_end_of_the_last_paired_history(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    call = strict_call()
    first = [HumanMessage("q"), ai("a"), answer("a")]
    call._messages(first)
    read: list[int] = []
    monkeypatch.setattr(checks, "is_paired", lambda m: read.append(len(m)) or True)

    call._messages([*first, ai("b"), answer("b")])

    assert read == [4]  # from the last block of the first history on, not all 5


def test_an_answer_appended_to_a_closed_block_is_still_a_break() -> None:
    call = strict_call()
    first = [HumanMessage("q"), ai("a"), answer("a")]
    call._messages(first)
    with pytest.raises(ToolCallPairingError):
        call._messages([*first, answer("a")])


def test_a_history_rewritten_before_its_end_is_read_whole() -> None:
    call = strict_call()
    first = [HumanMessage("q"), ai("a"), answer("a"), AIMessage("done")]
    call._messages(first)
    broken = [first[0], ai("a", "x"), answer("a"), first[3], HumanMessage("again")]
    with pytest.raises(ToolCallPairingError, match="'x'"):
        call._messages(broken)


def test_a_new_run_is_read_from_where_it_parts_from_the_last_paired_history(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    call = strict_call()
    shared = [HumanMessage("q"), ai("a"), answer("a"), AIMessage("done")]
    call._messages([*shared, HumanMessage("next"), ai("b"), answer("b")])
    read: list[int] = []
    monkeypatch.setattr(checks, "is_paired", lambda m: read.append(len(m)) or True)

    call._messages([*shared, HumanMessage("another question")])

    assert read == [2]  # the shared "done", then the new question; not all 5


def test_a_call_left_unanswered_where_the_new_run_parts_is_still_a_break() -> None:
    call = strict_call()
    calls = ai("a", "b")
    call._messages([HumanMessage("q"), calls, answer("a"), answer("b")])
    with pytest.raises(ToolCallPairingError, match="'b'"):
        call._messages([HumanMessage("q"), calls, answer("a"), HumanMessage("again")])
