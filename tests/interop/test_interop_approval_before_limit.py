"""A reviewer is asked only about tool calls that will run, or the build warns naming both.

LangChain's ``ToolCallLimitMiddleware`` refuses the calls over its limit in ``after_model``,
and ``after_model`` hooks run in reverse list order: listed before an approval
(``HumanInTheLoopMiddleware`` or the cookbook's ``ApproveToolCalls``), the limit refuses
after the reviewer was asked, so an approved call never runs. That order warns naming both
middleware and the fix (``effects="strict"``: an error); the other order builds silently
and the reviewer is asked only about the call the limit lets through. Stacks in which no
reviewed call is refused build silently: funcware's ``ToolCallLimit`` (it refuses in a
model wrap, before any approval), ``ModelCallLimitMiddleware`` (it stops the next model
call; reviewed calls still run), a limit on a tool nobody reviews. Needs the ``langchain``
extra; skipped without it, failed when ``FUNCWARE_REQUIRE_LANGCHAIN=1``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from support import require_langchain

from funcware import MiddlewareOrderError, MiddlewareOrderWarning, create_agent
from funcware.cookbook.human_approval import ApproveToolCalls
from funcware.cookbook.tool_call_limit import ToolCallLimit
from funcware.effects import declare
from funcware.hooks.middleware import origin
from funcware.testing import ScriptedChatModel

lc = require_langchain("langchain.agents.middleware")

RAN: list[int] = []
CONFIG: Any = {"configurable": {"thread_id": "refunds"}}


def refund(amount: int) -> str:
    """Refund an amount of dollars."""
    RAN.append(amount)
    return "refunded"


def two_refunds() -> AIMessage:
    """The model asks for $20 and $500 in one turn; a limit of one lets only $20 through."""
    calls = [{"name": "refund", "args": {"amount": a}, "id": f"r{a}"} for a in (20, 500)]
    return AIMessage("", tool_calls=calls)


def hitl() -> Any:
    return lc.HumanInTheLoopMiddleware(interrupt_on={"refund": True})


def approve() -> Any:
    return ApproveToolCalls({"refund"})


def limit(**options: Any) -> Any:
    return lc.ToolCallLimitMiddleware(tool_name="refund", run_limit=1, **options)


def build(stack: list[Any], **options: Any) -> tuple[Any, list[str]]:
    """The agent, and the texts of the order warnings its build gave."""
    RAN.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agent = create_agent(
            ScriptedChatModel(responses=[two_refunds(), "Done."]),
            [refund],
            middleware=stack,
            checkpointer=InMemorySaver(),
            **options,
        )
    texts = [str(w.message) for w in caught if issubclass(w.category, MiddlewareOrderWarning)]
    return agent, texts


def asked(agent: Any) -> tuple[list[int], dict[str, Any]]:
    """Run until the reviewer is asked; approve everything asked; the amounts asked about."""
    state = agent.invoke({"messages": [HumanMessage("Refund both.")]}, CONFIG)
    (pause,) = state["__interrupt__"]
    requests = pause.value.get("action_requests") or pause.value["review"]
    approve_all = {"decisions": [{"type": "approve"} for _ in requests]}
    return [r["args"]["amount"] for r in requests], agent.invoke(
        Command(resume=approve_all), CONFIG
    )


def at(m: Any) -> str:
    return f"{m.name!r} ({origin(m)})"


APPROVALS: dict[str, Callable[[], Any]] = {
    "HumanInTheLoopMiddleware": hitl,
    "ApproveToolCalls": approve,
}


@pytest.mark.parametrize("approval", APPROVALS.values(), ids=list(APPROVALS))
def test_a_limit_listed_before_an_approval_warns_naming_both(approval: Callable[[], Any]) -> None:
    review, refuse = approval(), limit()
    agent, (text,) = build([refuse, review])
    assert text == (
        f"middleware {at(review)} and {at(refuse)}: in after_model, {review.name!r} asks a "
        "reviewer about the model's tool calls (messages.latest, interrupt) before "
        "'ToolCallLimitMiddleware[refund]' refuses the calls over its limit, so the reviewer "
        "is asked about tool calls that 'ToolCallLimitMiddleware[refund]' may then refuse, "
        "and an approved call may never run. Fix: list 'ToolCallLimitMiddleware[refund]' "
        f"after {review.name!r} so its after_model runs first (or declare "
        f"inside=[{review.name!r}] on 'ToolCallLimitMiddleware[refund]'; for a middleware you "
        "did not write, list funcware.effects.declare(ToolCallLimitMiddleware(...), "
        f"inside=[{review.name!r}]) in its place)."
    )
    # The warning is true: the reviewer approves $500, which the limit then refuses.
    amounts, state = asked(agent)
    assert amounts == [20, 500] and RAN == [20]
    refused = next(m for m in state["messages"] if getattr(m, "tool_call_id", "") == "r500")
    assert isinstance(refused, ToolMessage) and "Tool call limit exceeded" in refused.text


@pytest.mark.parametrize("approval", APPROVALS.values(), ids=list(APPROVALS))
def test_the_approval_listed_before_the_limit_is_asked_only_about_the_call_that_runs(
    approval: Callable[[], Any],
) -> None:
    agent, texts = build([approval(), limit()])
    assert texts == []
    amounts, _state = asked(agent)
    assert amounts == [20] and RAN == [20]


def test_strict_effects_refuse_the_limit_before_the_approval() -> None:
    with pytest.raises(MiddlewareOrderError, match="may then refuse") as info:
        build([limit(), hitl()], effects="strict")
    assert "'HumanInTheLoopMiddleware' (" in str(info.value)
    assert "'ToolCallLimitMiddleware[refund]' (" in str(info.value)


def test_the_declared_stand_in_keeps_the_limit_after_the_review() -> None:
    placed = declare(limit(), inside=["HumanInTheLoopMiddleware"])
    _agent, texts = build([hitl(), placed])
    assert texts == []
    with pytest.raises(MiddlewareOrderError, match="must sit inside 'HumanInTheLoopMiddleware'"):
        build([placed, hitl()])


@pytest.mark.parametrize("exit_behavior", ["end", "error"])
def test_a_limit_that_ends_or_raises_warns_too(exit_behavior: str) -> None:
    agent, (text,) = build([limit(exit_behavior=exit_behavior), hitl()])
    assert "may then refuse" in text
    # Asked about both, the reviewer approves; neither runs (the run ends, or fails).
    state = agent.invoke({"messages": [HumanMessage("Refund both.")]}, CONFIG)
    assert [r["args"]["amount"] for r in state["__interrupt__"][0].value["action_requests"]] == [
        20,
        500,
    ]
    resume = Command(resume={"decisions": [{"type": "approve"}] * 2})
    if exit_behavior == "error":
        with pytest.raises(lc.tool_call_limit.ToolCallLimitExceededError):
            agent.invoke(resume, CONFIG)
    else:
        agent.invoke(resume, CONFIG)
    assert RAN == []
    _agent, texts = build([hitl(), limit(exit_behavior=exit_behavior)])
    assert texts == []


SILENT: dict[str, Callable[[], list[Any]]] = {
    "funcware limit, then review": lambda: [ToolCallLimit(limit=1), hitl()],
    "review, then funcware limit": lambda: [hitl(), ToolCallLimit(limit=1)],
    "a limit on a tool nobody reviews": lambda: [
        lc.ToolCallLimitMiddleware(tool_name="search", run_limit=1),
        hitl(),
    ],
}


@pytest.mark.parametrize("stack", SILENT.values(), ids=list(SILENT))
def test_stacks_that_never_refuse_a_reviewed_call_build_silently(
    stack: Callable[[], list[Any]],
) -> None:
    agent, texts = build(stack())
    assert texts == []
    amounts, _state = asked(agent)
    assert sorted(amounts) == sorted(RAN)  # every call the reviewer approved ran (any order)


@pytest.mark.parametrize("reverse", [False, True], ids=["limit-first", "review-first"])
def test_a_model_call_limit_never_refuses_a_reviewed_call(reverse: bool) -> None:
    stack = [lc.ModelCallLimitMiddleware(run_limit=1, exit_behavior="end"), hitl()]
    agent, texts = build(stack[::-1] if reverse else stack)
    assert texts == []
    amounts, _state = asked(agent)
    assert amounts == [20, 500] and sorted(RAN) == [20, 500]


def test_a_refusal_of_tools_nobody_reviews_builds_silently() -> None:
    # The todo list refuses only parallel write_todos calls; these reviews ask about others.
    for stack in (
        [lc.TodoListMiddleware(), hitl()],
        [limit(), lc.HumanInTheLoopMiddleware(interrupt_on={"search": True})],
        [lc.ToolCallLimitMiddleware(run_limit=1), lc.HumanInTheLoopMiddleware(interrupt_on={})],
    ):
        _agent, texts = build(stack)
        assert texts == [], stack
