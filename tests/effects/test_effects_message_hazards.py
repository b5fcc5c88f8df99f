"""Hazards between hooks that touch the messages or count calls, found when the agent is built.

Each kind fires in the order where one hook hides from another what it needs, naming both
middleware with their file:line, the hazard and the fix, once; the fix (the other order, or
a declared constraint) silences it; ``effects="strict"`` makes it an error; ``compose()``
warns of its members' hazards once. Stacks of robust readers (``messages.latest``) and
answerers (an approval's after_model running after every answer) build without a warning,
decorated or written as classes. The finer effect names
are checked like the others: where they apply, and which way (read or written).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
from langgraph.runtime import Runtime

from funcware import (
    AgentMiddleware,
    AgentState,
    MiddlewareOrderError,
    MiddlewareOrderWarning,
    after_model,
    before_model,
    compose,
    create_agent,
    explain,
    hook_config,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.effects.declarations import declarations
from funcware.effects.hazards import Hazard
from funcware.hooks.middleware import origin
from funcware.testing import ScriptedChatModel


def model() -> ScriptedChatModel:
    return ScriptedChatModel(responses=["ok"] * 5)


def build(middleware: list[Any], **options: Any) -> list[str]:
    """Build an agent; the texts of the order warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        create_agent(model(), middleware=middleware, **options)
    return [str(w.message) for w in caught if issubclass(w.category, MiddlewareOrderWarning)]


def node(hook: Callable[..., Any], name: str, **declared: Any) -> Any:
    def body(state: Any) -> None:
        return None

    return hook(name=name, **declared)(body)


def model_wrap(name: str, **declared: Any) -> Any:
    def layer(request: Any, handler: Any) -> Any:
        return handler(request)

    return wrap_model_call(name=name, **declared)(layer)


def at(m: Any) -> str:
    return f"{m.name!r} ({origin(m)})"


# A refund stack in funcware's vocabulary: an approval that finds the model's answer
# by position and a limit that answers the calls over it.
approve_tail = node(after_model, "approve", reads=["messages.tail"], writes=["interrupt"])
approve = node(after_model, "approve", reads=["messages.latest"], writes=["interrupt"])
limit = node(after_model, "limit", reads=["messages.latest"], writes=["messages.answer"])
limit_tail = node(
    after_model, "limit", reads=["messages.tail", "tool.calls"], writes=["messages.answer"]
)


# -- each hazard kind --------------------------------------------------------------------


def test_an_answer_before_a_reader_by_position_warns_naming_both_and_the_fix() -> None:
    # after_model hooks run inner first: the limit, listed second, answers before approval.
    (text,) = build([approve_tail, limit])
    assert text.startswith(f"middleware {at(limit)} and {at(approve_tail)}: ")
    assert (
        "in after_model, 'limit' runs first and adds messages (messages.answer), so "
        "'approve', which reads messages by position (messages.tail), no longer sees the "
        "model's answer. Fix: have 'approve' find what it looks for robustly "
        "(messages.latest), or list 'approve' after 'limit' so its after_model runs first "
        "(or declare inside=['limit'] on 'approve'; for a middleware you did not write, list "
        "funcware.effects.declare(approve, inside=['limit']) in its place)."
    ) in text
    (other,) = build([limit, approve_tail])  # the answer no longer hides; the review comes first
    assert "may then refuse" in other and "reads messages by position" not in other


def test_an_append_before_a_tail_reader_in_before_model_warns() -> None:
    reminder = node(before_model, "reminder", writes=["messages.append"])
    guard = node(before_model, "guard", reads=["messages.tail"], writes=["messages.rewrite"])
    (text,) = build([reminder, guard])
    assert text.startswith(f"middleware {at(reminder)} and {at(guard)}: in before_model, ")
    assert "no longer sees the latest message (the user's turn or the tool results)" in text
    assert "list 'guard' before 'reminder' so its before_model runs first" in text
    assert "(or declare outside=['reminder'] on 'guard'; for a middleware" in text
    assert build([guard, reminder]) == []


def test_a_model_wrap_adding_messages_hides_the_answer_from_a_tail_reader_in_any_order() -> None:
    noter = model_wrap("noter", writes=["messages.append"])
    for stack in ([noter, approve_tail], [approve_tail, noter]):
        (text,) = build(stack)
        assert text.startswith(f"middleware {at(noter)} and {at(approve_tail)}: ")
        assert "'noter''s wrap_model_call adds messages (messages.append) that land" in text
        assert "Fix: have 'approve' find the model's answer robustly (messages.latest)" in text
    assert build([noter, approve]) == []


def test_two_tail_readers_that_answer_warn_in_either_order() -> None:
    reviewer = node(
        after_model, "reviewer", reads=["messages.tail"], writes=["messages.answer", "interrupt"]
    )
    for stack in ([reviewer, limit_tail], [limit_tail, reviewer]):
        (text,) = [t for t in build(stack) if "may then refuse" not in t]
        assert "in either order one hides it from the other" in text


def test_an_answer_to_tool_calls_after_an_approval_warns() -> None:
    # [limit, approve]: approve (inner) asks the reviewer first, then limit answers calls.
    (text,) = build([limit, approve])
    assert text.startswith(f"middleware {at(approve)} and {at(limit)}: ")
    assert (
        "in after_model, 'approve' asks a reviewer about the model's tool calls "
        "(messages.latest, interrupt) before 'limit' refuses calls it answers itself "
        "(messages.answer), so the reviewer is asked about tool calls that 'limit' may then "
        "refuse, and an approved call may never run. Fix: list 'limit' after 'approve' so "
        "its after_model runs first (or declare inside=['approve'] on 'limit'; for a "
        "middleware you did not write, list funcware.effects.declare(limit, "
        "inside=['approve']) in its place)."
    ) in text
    assert build([approve, limit]) == []
    meant = node(after_model, "limit", writes=["messages.answer"], inside=["approve"])
    assert build([approve, meant]) == []
    with pytest.raises(MiddlewareOrderError, match="may then refuse"):
        create_agent(model(), middleware=[limit, approve], effects="strict")
    # An answer from a human reviewer is that reviewer's decision, not a refusal.
    reviewer = node(after_model, "limit", writes=["messages.answer", "interrupt"])
    assert build([reviewer, approve]) == []


def test_a_change_of_tool_calls_after_an_approval_warns() -> None:
    editor = node(after_model, "editor", reads=["messages.latest"], writes=["messages.rewrite"])
    # [editor, approve]: approve (inner) runs first in after_model, editor rewrites after it.
    (text,) = build([editor, approve])
    assert text.startswith(f"middleware {at(approve)} and {at(editor)}: ")
    assert (
        "in after_model, 'approve' decides on the model's tool calls (messages.latest, "
        "interrupt) before 'editor' changes tool calls (messages.rewrite.calls) without "
        "asking anyone, so the call that runs can differ from the one 'approve' approved. "
        "Fix: list 'editor' after 'approve' so its after_model runs first (or declare "
        "inside=['approve'] on 'editor'; for a middleware you did not write, list "
        "funcware.effects.declare(editor, inside=['approve']) in its place)."
    ) in text
    assert build([approve, editor]) == []


def test_a_rewrite_of_text_or_by_a_second_reviewer_after_an_approval_is_silent() -> None:
    # Masking what a message says never makes a call run that was not approved ...
    masker = node(
        after_model, "editor", reads=["messages.latest"], writes=["messages.rewrite.text"]
    )
    assert build([masker, approve]) == []
    # ... and a call changed by another human reviewer was decided by a human.
    reviewer = node(
        after_model, "editor", reads=["messages.latest"], writes=["messages.rewrite", "interrupt"]
    )
    assert build([reviewer, approve]) == []


def test_an_error_recovering_layer_inside_a_fallback_warns() -> None:
    fallback = model_wrap("fallback", reads=["model.error"], writes=["handler.retry"])
    for writes in (["model.error.recover"], ["model.result"]):  # the coarse name: maybe
        retry = model_wrap("retry", writes=[*writes, "handler.retry"])
        (text,) = build([fallback, retry])
        assert text == (
            f"middleware {at(fallback)} and {at(retry)}: 'retry' sits inside 'fallback' and "
            "turns a failed model call into an answer (model.error.recover), so 'fallback', "
            "which acts on failed model calls (model.error), gets that answer and is never "
            "asked. Fix: list 'retry' before 'fallback' (or declare outside=['fallback'] on "
            "'retry'; for a middleware you did not write, list "
            "funcware.effects.declare(retry, outside=['fallback']) in its place)."
        )
        assert build([retry, fallback]) == []


def test_an_answer_rewriting_layer_inside_a_retry_is_silent() -> None:
    # The false warning: a redaction rewrites answers, it never hides an error.
    retry = model_wrap("retry", reads=["model.error"], writes=["handler.retry"])
    redact = model_wrap("redact", reads=["model.result"], writes=["model.answer.rewrite"])
    assert build([retry, redact]) == []


def test_an_error_recovering_tool_layer_inside_a_tool_retry_warns() -> None:
    def layer(request: Any, handler: Any) -> Any:
        return handler(request)

    retry = wrap_tool_call(name="retry", reads=["tool.error"], writes=["handler.retry"])(layer)
    errors = wrap_tool_call(name="errors", writes=["tool.error.recover"])(layer)
    (text,) = build([retry, errors])
    assert "'errors' sits inside 'retry' and turns a failed tool call into an answer" in text
    assert build([errors, retry]) == []
    redact = wrap_tool_call(name="errors", writes=["tool.answer.rewrite"])(layer)
    assert build([retry, redact]) == []


def test_a_layer_replacing_a_request_field_inside_one_that_set_it_warns() -> None:
    chooser = model_wrap("chooser", reads=["request.messages"], writes=["request.model"])
    router = model_wrap("router", reads=["request.messages"], writes=["request.model"])
    (text,) = build([chooser, router])
    assert text.startswith(f"middleware {at(chooser)} and {at(router)}: ")
    assert (
        "'router' sits inside 'chooser' and sets request.model on every call without "
        "reading it, so what 'chooser' put there never reaches the model"
    ) in text
    fallback = model_wrap("fallback", reads=["model.error"], writes=["request.model"])
    (text,) = build([fallback, router])
    assert "so the fallback request.model 'fallback' retries with is replaced" in text
    # A fallback inside, or a layer that edits what is there, replaces nothing.
    editor = model_wrap("router", reads=["request.model"], writes=["request.model"])
    assert build([router, fallback]) == build([chooser, editor]) == []


def test_a_jump_to_end_before_a_model_call_counter_warns() -> None:
    counter = node(after_model, "counter", reads=["model.calls"], writes=["state.n"])
    guard = node(after_model, "guard", can_jump_to=["end"], writes=["messages.rewrite"])
    (text,) = build([counter, guard])
    assert text.startswith(f"middleware {at(guard)} and {at(counter)}: ")
    assert "'guard' may jump to 'end' in after_model before 'counter''s after_model runs" in text
    assert "the call just made goes uncounted" in text
    assert "list 'counter' after 'guard'" in text and "or count in a wrap_model_call" in text
    assert build([guard, counter]) == []
    # Without the jump there is nothing to skip.
    calm = node(after_model, "guard", writes=["messages.rewrite"])
    assert build([counter, calm]) == []


def test_a_jump_to_end_before_a_tool_call_counter_in_before_model_warns() -> None:
    counter = node(before_model, "tools_seen", reads=["tool.calls"])
    stop = node(before_model, "stop", can_jump_to=["end"], writes=["messages.append"])
    (text,) = build([stop, counter])
    assert "'stop' may jump to 'end' in before_model" in text
    assert "the last turn's tool calls go uncounted" in text
    assert build([counter, stop]) == []


# -- what silences a hazard, and what makes it an error ----------------------------------


def test_the_fix_constraint_with_order_auto_builds_silently() -> None:
    careful = node(
        after_model, "approve", reads=["messages.tail"], writes=["interrupt"], inside=["limit"]
    )
    assert build([careful, limit], order="auto") == []
    with pytest.raises(MiddlewareOrderError, match="must sit inside 'limit'"):
        build([careful, limit])


def test_a_constraint_declaring_the_order_on_purpose_silences_it() -> None:
    meant = node(
        after_model, "approve", reads=["messages.tail"], writes=["interrupt"], outside=["limit"]
    )
    assert build([meant, limit]) == []


def test_strict_effects_make_a_hazard_an_error_with_the_same_words() -> None:
    (warned,) = build([approve_tail, limit])
    with pytest.raises(MiddlewareOrderError) as info:
        create_agent(model(), middleware=[approve_tail, limit], effects="strict")
    assert warned[:-1] + " (an error with effects='strict')" in str(info.value)


def test_compose_is_a_value_and_the_agent_warns_once() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        both = compose(approve_tail, limit)
    assert [w for w in caught if issubclass(w.category, MiddlewareOrderWarning)] == []
    assert len(build([both])) == 1


def test_each_hazard_is_reported_once() -> None:
    fallback = model_wrap("fallback", reads=["model.error"], writes=["handler.retry"])
    retry = model_wrap("retry", writes=["model.result"])
    texts = build([approve_tail, limit, fallback, retry])
    assert len(texts) == len(set(texts)) == 2


def test_undeclared_middleware_take_no_part() -> None:
    @after_model
    def silent(state: Any) -> None:
        return None

    assert build([approve_tail, silent]) == []


# -- safe stacks build without a warning --------------------------------------------------


def test_robust_readers_and_answerers_build_silently_in_every_order() -> None:
    todo = node(after_model, "todo", reads=["messages.latest"], writes=["messages.answer"])
    counter = node(after_model, "counter", reads=["model.calls"], writes=["state.n"])
    summary = node(before_model, "summary", reads=["messages.history"], writes=["messages.rewrite"])
    tools = node(after_model, "tools", reads=["messages.latest", "tool.calls"])
    stack = [approve, limit, todo, counter, summary, tools]
    assert build(stack) == []
    # The approval stays first, so that its after_model runs after every answer.
    assert build([approve, *reversed(stack[1:])]) == []


class Approval(AgentMiddleware[AgentState[Any], Any]):
    """A class guard that finds the model's answer robustly and may interrupt."""

    reads = ("messages.latest",)
    writes = ("interrupt", "messages.answer")

    def after_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> None:
        return None


class Limit(AgentMiddleware[AgentState[Any], Any]):
    """A class limit that answers calls over it and may end the run."""

    reads = ("messages.latest", "tool.calls")
    writes = ("messages.answer", "messages.append")

    @hook_config(can_jump_to=["end"])
    def after_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> None:
        return None


class TailApproval(Approval):
    reads = ("messages.tail",)


def test_class_middleware_are_checked_like_decorated_ones() -> None:
    assert build([Approval(), Limit()]) == []
    (asked,) = build([Limit(), Approval()])
    assert asked.startswith(f"middleware {at(Approval())} and {at(Limit())}: in after_model")
    assert "so the reviewer is asked about tool calls that 'Limit' may then refuse" in asked
    (text,) = build([TailApproval(), Limit()])
    assert text.startswith(f"middleware {at(Limit())} and {at(TailApproval())}: in after_model")


# -- explain() ----------------------------------------------------------------------------


def test_explain_shows_each_hazard_with_the_warnings_words() -> None:
    fallback = model_wrap("fallback", reads=["model.error"], writes=["handler.retry"])
    retry = model_wrap("retry", writes=["model.result"])
    stack = [approve_tail, limit, fallback, retry]
    warned = build(stack)
    explanation = explain(stack)
    lines = [line for line in str(explanation).splitlines() if "HAZARD" in line]
    assert [line.removeprefix("  HAZARD: ") + "." for line in lines] == warned
    assert [h.message + "." for h in explanation.hazards] == warned
    assert [h.kind for h in explanation.hazards] == ["hidden message", "hidden error"]
    assert all(isinstance(h, Hazard) for h in explanation.hazards)


def test_explain_draws_each_hazard_beside_its_two_hooks() -> None:
    fallback = model_wrap("fallback", reads=["model.error"], writes=["handler.retry"])
    retry = model_wrap("retry", writes=["model.result"])
    explanation = explain([approve_tail, limit, fallback, retry])
    chart = explanation.mermaid()
    first, second = explanation.hazards
    assert f'hazard0{{{{"hazard: {first.sentence}"}}}}' in chart
    hidden = [line.strip() for line in chart.splitlines() if line.endswith("-.- hazard0")]
    assert len(hidden) == 2  # the limit's and the approval's after_model nodes
    assert "wrap_model_0 -.- hazard1" in chart and "wrap_model_1 -.- hazard1" in chart
    assert f'"hazard: {second.sentence}"' in chart


def test_explain_of_a_safe_stack_shows_no_hazard() -> None:
    explanation = explain([approve, limit])
    assert explanation.hazards == []
    assert "HAZARD" not in str(explanation) and "hazard" not in explanation.mermaid()


# -- the vocabulary -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decorator", "reads", "writes"),
    [
        (
            after_model,
            ["messages.latest", "messages.tail", "messages.history", "model.calls", "tool.calls"],
            ["messages.append", "messages.rewrite", "messages.answer"],
        ),
        (wrap_model_call, ["model.calls", "model.error", "messages.tail"], ["messages.append"]),
        (wrap_tool_call, ["tool.calls", "messages.history"], ["messages.append"]),
    ],
)
def test_the_finer_names_are_accepted_where_they_apply(
    decorator: Any, reads: list[str], writes: list[str]
) -> None:
    def body(*args: Any) -> Any:
        return None

    declared = declarations(decorator(reads=reads, writes=writes)(body))
    assert declared is not None
    assert (declared.reads, declared.writes) == (set(reads), set(writes))


@pytest.mark.parametrize(
    ("decorator", "key", "effect"),
    [
        (wrap_tool_call, "writes", "model.result"),
        (wrap_model_call, "reads", "tool.args"),
        (before_model, "reads", "model.error"),
        (wrap_tool_call, "reads", "model.calls"),
        (wrap_model_call, "reads", "tool.calls"),
    ],
)
def test_a_finer_name_where_it_cannot_apply_is_an_error(
    decorator: Any, key: str, effect: str
) -> None:
    def body(*args: Any) -> Any:
        return None

    with pytest.raises(ValueError, match=rf"hook cannot have {key}=\['{effect}'\]"):
        decorator(**{key: [effect]})(body)


@pytest.mark.parametrize(
    ("key", "effect", "right"),
    [
        ("writes", "messages.latest", "reads"),
        ("writes", "model.error", "reads"),
        ("reads", "messages.answer", "writes"),
    ],
)
def test_a_finer_name_on_the_wrong_side_is_an_error(key: str, effect: str, right: str) -> None:
    def body(state: Any) -> None:
        return None

    with pytest.raises(ValueError) as info:
        after_model(**{key: [effect]})(body)
    text = str(info.value)
    assert text.startswith("@after_model for ")
    assert f"{effect!r} in {key}= is an effect a hook" in text
    assert f"put it in {right}=." in text
