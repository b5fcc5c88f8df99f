"""The hazard check with LangChain's built-ins, whose table speaks the finer vocabulary.

Safe stacks of built-ins build without a warning, in the orders users write them; the
hazards they really have are found (a retry that answers with its error inside a fallback;
a tool-call limit that ends the run before an outer model-call limit counts the call), and
only for the configurations that have them. The table is true at run time: each built-in
runs under ``effects="strict"`` doing what its entry says (HumanInTheLoop rewriting and
answering, ToolCallLimit answering, ModelCallLimit appending). Needs the ``langchain`` extra.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from support import hi, require_langchain

from funcware import MiddlewareOrderWarning, after_model, create_agent, explain
from funcware.effects.declarations import declarations
from funcware.hooks.middleware import origin
from funcware.testing import ScriptedChatModel

lc = require_langchain("langchain.agents.middleware")


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return f"echo {text}"


def build(middleware: list[Any], **options: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        create_agent(ScriptedChatModel(responses=["ok"]), [echo], middleware=middleware, **options)
    return [str(w.message) for w in caught if issubclass(w.category, MiddlewareOrderWarning)]


def bare(cls: type) -> Any:
    """An instance for build-time checks only (the check reads the class's table entry)."""
    return cls.__new__(cls)


def at(m: Any) -> str:
    return f"{m.name!r} ({origin(m)})"


def safe_stack() -> list[Any]:
    return [
        lc.ModelCallLimitMiddleware(run_limit=5),
        lc.HumanInTheLoopMiddleware(interrupt_on={"echo": True}),
        lc.ToolCallLimitMiddleware(run_limit=3),
        lc.PIIMiddleware("email", apply_to_output=True),
        bare(lc.SummarizationMiddleware),
        lc.ModelRetryMiddleware(),
        lc.ModelFallbackMiddleware(ScriptedChatModel(responses=[])),
    ]
    # Left out: pairs the plain effect check already flags, whatever the messages (both
    # ToolRetry and HumanInTheLoop write tool.result; both TodoList and ModelFallback write
    # request.system_message).


@pytest.mark.parametrize("reverse", [False, True], ids=["as-written", "reversed"])
def test_a_stack_of_safe_built_ins_builds_without_warnings(reverse: bool) -> None:
    stack = safe_stack()
    if reverse:  # the retry and the fallback keep their safe order, and the tool-call
        # limit stays after the review (its after_model runs first)
        stack = [*reversed(stack[:5]), *stack[5:]]
        stack[2], stack[3] = stack[3], stack[2]
    assert build(stack) == []
    assert explain(stack).hazards == []


def test_a_retry_answering_with_its_error_inside_a_fallback_warns() -> None:
    fallback = lc.ModelFallbackMiddleware(ScriptedChatModel(responses=[]))
    retry = lc.ModelRetryMiddleware()
    (text,) = build([fallback, retry])
    assert text.startswith(f"middleware {at(fallback)} and {at(retry)}: ")
    assert (
        "'ModelRetryMiddleware' sits inside 'ModelFallbackMiddleware' and turns a failed "
        "model call into an answer (model.error.recover)"
    ) in text
    assert "list 'ModelRetryMiddleware' before 'ModelFallbackMiddleware'" in text
    assert (  # LangChain's middleware is placed with a stand-in, not re-lifted
        "funcware.effects.declare(ModelRetryMiddleware(...), "
        "outside=['ModelFallbackMiddleware']) in its place"
    ) in text
    assert build([lc.ModelFallbackMiddleware(ScriptedChatModel(responses=[])), retry][::-1]) == []


def test_a_retry_that_raises_its_last_error_is_safe_inside_a_fallback() -> None:
    retry = lc.ModelRetryMiddleware(on_failure="error")
    decl = declarations(retry)
    assert decl is not None and "model.error.recover" not in decl.writes_in("wrap_model_call")
    assert build([lc.ModelFallbackMiddleware(ScriptedChatModel(responses=[])), retry]) == []


def test_a_tool_call_limit_ending_the_run_before_a_model_call_limit_counts_warns() -> None:
    calls = lc.ModelCallLimitMiddleware(thread_limit=5)
    ending = lc.ToolCallLimitMiddleware(run_limit=1, exit_behavior="end")
    (text,) = build([calls, ending])
    assert text.startswith(f"middleware {at(ending)} and {at(calls)}: ")
    assert "may jump to 'end' in after_model before 'ModelCallLimitMiddleware''s" in text
    assert build([ending, calls]) == []
    # The default limit answers the calls over it and never jumps.
    assert build([calls, lc.ToolCallLimitMiddleware(run_limit=1)]) == []
    # With a run limit only, a count skipped by the jump cannot matter: the run ends.
    assert build([lc.ModelCallLimitMiddleware(run_limit=5), ending]) == []


def test_human_review_answering_before_an_outer_tail_reader_warns() -> None:
    limit = after_model(
        name="limit", reads=["messages.tail", "tool.calls"], writes=["messages.answer"]
    )(lambda state: None)
    hitl = lc.HumanInTheLoopMiddleware(interrupt_on={"echo": True})
    (text,) = [t for t in build([limit, hitl]) if "may then refuse" not in t]
    assert text.startswith(f"middleware {at(hitl)} and {at(limit)}: in after_model, ")
    assert "adds messages (messages.answer), so 'limit', which reads messages by position" in text
    assert build([hitl, limit]) == []


def test_a_rewrite_of_tool_calls_after_human_review_warns_but_pii_masking_does_not() -> None:
    editor = after_model(name="editor", reads=["messages.latest"], writes=["messages.rewrite"])(
        lambda state: None
    )
    hitl = lc.HumanInTheLoopMiddleware(interrupt_on={"echo": True})
    (text,) = build([editor, hitl])
    assert "so the call that runs can differ from the one 'HumanInTheLoopMiddleware'" in text
    assert build([lc.PIIMiddleware("email", apply_to_output=True), hitl]) == []


def test_the_table_speaks_the_finer_vocabulary() -> None:
    def decl(m: Any) -> Any:
        found = declarations(m)
        assert found is not None
        return found

    hitl = decl(lc.HumanInTheLoopMiddleware(interrupt_on={}))
    assert "messages.latest" in hitl.reads
    assert {"messages.rewrite", "messages.answer", "interrupt"} <= hitl.writes_in("after_model")
    assert {"tool.args", "handler.skip"} <= hitl.writes_in("wrap_tool_call")
    assert "messages.answer" not in hitl.writes_in("wrap_tool_call")  # declared per hook
    limit = decl(lc.ToolCallLimitMiddleware(run_limit=1))
    assert {"messages.latest", "tool.calls"} <= limit.reads and "messages.answer" in limit.writes
    assert (
        "messages.answer"
        not in decl(lc.ToolCallLimitMiddleware(run_limit=1, exit_behavior="error")).writes
    )
    calls = decl(lc.ModelCallLimitMiddleware(thread_limit=1))
    assert "model.calls" in calls.reads and "messages.append" in calls.writes
    assert "model.calls" not in decl(lc.ModelCallLimitMiddleware(run_limit=1)).reads
    assert "model.error" in decl(lc.ModelFallbackMiddleware(ScriptedChatModel(responses=[]))).reads
    assert "messages.rewrite.text" in decl(lc.PIIMiddleware("email")).writes
    summary = decl(bare(lc.SummarizationMiddleware))
    assert (summary.reads, summary.writes) == (
        {"messages.history"},
        {"messages.rewrite.text", "messages.append"},
    )
    assert "tool.error.recover" not in decl(lc.ToolRetryMiddleware(on_failure="error")).writes
    assert "tool.error" in decl(lc.ToolRetryMiddleware(on_failure="error")).reads
    assert "tool.error.recover" in decl(lc.ToolRetryMiddleware()).writes


# -- the table is true at run time (effects="strict" watches the message writes) --------


def test_human_review_rewrites_and_answers_as_declared_under_strict_effects() -> None:
    proposal = AIMessage("", tool_calls=[{"name": "echo", "args": {"text": "a"}, "id": "c1"}])
    agent = create_agent(
        ScriptedChatModel(responses=[proposal, "done"]),
        [echo],
        middleware=[lc.HumanInTheLoopMiddleware(interrupt_on={"echo": True})],
        checkpointer=InMemorySaver(),
        effects="strict",
    )
    config: Any = {"configurable": {"thread_id": "review"}}
    assert agent.invoke(hi(), config)["__interrupt__"]
    decisions = {"decisions": [{"type": "reject", "message": "no"}]}
    state = agent.invoke(Command(resume=decisions), config)
    answers = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [a.tool_call_id for a in answers] == ["c1"] and answers[0].status == "error"
    assert state["messages"][-1].content == "done"


def test_limits_answer_and_append_as_declared_under_strict_effects() -> None:
    two = AIMessage(
        "",
        tool_calls=[
            {"name": "echo", "args": {"text": "a"}, "id": "c1"},
            {"name": "echo", "args": {"text": "b"}, "id": "c2"},
        ],
    )
    agent = create_agent(
        ScriptedChatModel(responses=[two, two, "never"]),
        [echo],
        middleware=[
            lc.ModelCallLimitMiddleware(run_limit=2),
            lc.ToolCallLimitMiddleware(run_limit=1),
        ],
        effects="strict",
    )
    state = agent.invoke(hi())
    answers = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    first_turn = {a.tool_call_id: a.status for a in answers[:2]}
    assert first_turn == {"c1": "success", "c2": "error"}  # c2 refused by the tool limit
    assert state["messages"][-1].type == "ai" and "limit" in state["messages"][-1].text.lower()
