"""The tool-call pairing contract over plain message lists: check, explanation, repair."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage

from funcware.pairing.breaks import MISSING_ANSWER, problems, repaired
from funcware.pairing.contract import is_paired
from funcware.pairing.writes import open_tail


def ai(*ids: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": "lookup", "args": {}, "id": i} for i in ids])


def answer(call_id: str) -> ToolMessage:
    return ToolMessage("found", tool_call_id=call_id)


def test_answers_right_after_their_calls_keep_the_contract() -> None:
    history = [HumanMessage("q"), ai("a", "b"), answer("b"), answer("a"), AIMessage("done")]
    assert is_paired(history) and problems(history) == []


def test_the_latest_calls_may_wait_for_the_tools_only_when_asked() -> None:
    history = [HumanMessage("q"), ai("a")]
    assert is_paired(history, pending_ok=True)
    assert not is_paired(history)
    assert problems(history) == [
        "messages[1] (AIMessage, id=None)'s tool call 'lookup' (id 'a') has no ToolMessage answer"
    ]


def test_each_break_names_the_messages_involved() -> None:
    orphan = [HumanMessage("q"), answer("x")]
    assert problems(orphan) == [
        "messages[1] (ToolMessage, tool_call_id='x') answers no tool call before it"
    ]
    twice = [ai("a"), answer("a"), answer("a")]
    assert problems(twice) == [
        "messages[0] (AIMessage, id=None)'s tool call 'lookup' (id 'a') is answered more "
        "than once: messages[2] (ToolMessage, tool_call_id='a') answer it again"
    ]
    between = [ai("a"), HumanMessage("hurry", id="h1"), answer("a")]
    assert problems(between) == [
        "messages[1] (HumanMessage, id='h1') sits between messages[0] (AIMessage, id=None)'s "
        "tool call 'lookup' (id 'a') and its answer messages[2] (ToolMessage, "
        "tool_call_id='a')"
    ]


def test_repair_moves_answers_and_answers_lost_calls_with_an_error() -> None:
    history = [ai("a", "b"), HumanMessage("hurry"), answer("a"), answer("x"), answer("a")]
    fixed = repaired(history)
    assert is_paired(fixed)
    assert [type(m).__name__ for m in fixed] == [
        "AIMessage",
        "ToolMessage",
        "ToolMessage",
        "HumanMessage",
    ]
    assert fixed[1] is history[2]
    lost = fixed[2]
    assert isinstance(lost, ToolMessage) and lost.status == "error"
    assert lost.tool_call_id == "b" and lost.content == MISSING_ANSWER.format(name="lookup")


def unparsed(*ids: str) -> AIMessage:
    """A model answer whose tool calls could not be parsed (``invalid_tool_calls``)."""
    broken = [
        {"name": "lookup", "args": "{", "id": i, "error": "bad JSON", "type": "invalid_tool_call"}
        for i in ids
    ]
    return AIMessage("", invalid_tool_calls=broken)  # type: ignore[arg-type]


def test_an_unparsed_call_may_be_answered_but_needs_no_answer() -> None:
    assert is_paired([unparsed("a"), HumanMessage("q")])
    assert is_paired([unparsed("a"), answer("a"), HumanMessage("q")])
    late = [unparsed("a"), HumanMessage("q"), answer("a")]
    assert not is_paired(late) and problems(late) != []


_ids = st.sampled_from(["a", "b", "c", "d"])
_unparsed_ids = st.sampled_from(["x", "y"])
_messages: st.SearchStrategy[AnyMessage] = st.one_of(
    st.builds(HumanMessage, st.just("q")),
    st.builds(lambda: AIMessage("text")),
    st.lists(_ids, min_size=1, max_size=3, unique=True).map(lambda ids: ai(*ids)),
    st.lists(_unparsed_ids, min_size=1, max_size=2, unique=True).map(lambda ids: unparsed(*ids)),
    _ids.map(answer),
    _unparsed_ids.map(answer),
)


@given(st.lists(_messages, max_size=12), st.booleans())
@example([unparsed("x"), unparsed("x"), answer("x")], False)  # an answer is its block's
@example([unparsed("x"), answer("x"), unparsed("x")], False)
@example([ai("c"), answer("c"), ai("a", "b", "c")], True)
def test_the_check_and_the_explanation_agree(history: list[AnyMessage], pending: bool) -> None:
    assert is_paired(history, pending) == (problems(history, pending) == [])


@given(st.lists(_messages, max_size=12))
def test_a_repaired_history_keeps_the_contract(history: list[AnyMessage]) -> None:
    # Distinct call ids across AI messages: providers assign unique ids.
    seen: set[str] = set()
    unique = []
    for message in history:
        if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
            ids = [c["id"] for c in (*message.tool_calls, *message.invalid_tool_calls)]
            if seen & set(ids):  # type: ignore[arg-type]
                continue
            seen.update(ids)  # type: ignore[arg-type]
        unique.append(message)
    fixed = repaired(unique)
    assert is_paired(fixed), problems(fixed)
    assert [m for m in fixed if not isinstance(m, ToolMessage)] == [
        m for m in unique if not isinstance(m, ToolMessage)
    ]


@given(st.lists(_messages, max_size=10), st.lists(_messages, max_size=4), st.booleans())
def test_an_append_is_checked_on_the_open_tail_alone(
    history: list[AnyMessage], appended: list[AnyMessage], pending: bool
) -> None:
    if not is_paired(history, pending_ok=True):
        return
    after = [*history, *appended]
    assert is_paired(after, pending) == is_paired(after[open_tail(history) :], pending)
