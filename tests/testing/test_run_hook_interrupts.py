"""``run_hook`` on a hook that calls ``interrupt()``: the pause is reported, ``resume=`` answers it.

As in an agent, a resumed hook runs again from its start and ``interrupt()`` returns the
answer; sync and async paths alike, for node hooks and wrap hooks.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.types import interrupt
from support import call, require_langchain

from funcware import after_model, before_agent, before_model, wrap_tool_call
from funcware.testing import arun_hook, run_hook

MODES = ["sync", "async"]


def approval_gate(seen: list[str]) -> Any:
    @after_model
    def gate(state: Any) -> Any:
        seen.append("asked")
        answer = interrupt({"question": "send it?", "draft": state["messages"][-1].content})
        seen.append(f"answered {answer}")
        if answer == "no":
            return {"messages": [AIMessage("cancelled")]}
        return None

    return gate


STATE = {"messages": [HumanMessage("hi"), AIMessage("draft reply")]}


@pytest.mark.parametrize("mode", MODES)
def test_a_pause_is_reported_with_what_the_hook_asked(mode: Any) -> None:
    seen: list[str] = []
    result = run_hook(approval_gate(seen), "after_model", state=STATE, mode=mode)
    [paused] = result.interrupts
    assert paused.value == {"question": "send it?", "draft": "draft reply"}
    assert result.returned is None and result.update is None
    assert seen == ["asked"]


@pytest.mark.parametrize("mode", MODES)
def test_resume_answers_the_pause_and_the_hook_runs_again_from_its_start(mode: Any) -> None:
    seen: list[str] = []
    result = run_hook(approval_gate(seen), "after_model", state=STATE, mode=mode, resume="no")
    assert result.interrupts == ()
    assert result.update is not None
    assert [m.content for m in result.update["messages"]] == ["cancelled"]
    assert seen == ["asked", "asked", "answered no"]
    approved = run_hook(approval_gate([]), "after_model", state=STATE, mode=mode, resume="yes")
    assert approved.returned is None and approved.interrupts == ()


@pytest.mark.parametrize("mode", MODES)
def test_a_tool_wrap_pause_then_resume_calls_the_handler_once(mode: Any) -> None:
    @wrap_tool_call
    def confirm(request: Any, handler: Any) -> Any:
        if interrupt(f"run {request.tool_call['name']}?") != "yes":
            return ToolMessage("refused", tool_call_id=request.tool_call["id"], status="error")
        return handler(request)

    tool_call = call("delete", {"path": "a"}, "d1")
    paused = run_hook(confirm, "wrap_tool_call", tool_call=tool_call, responses=["ok"], mode=mode)
    assert [i.value for i in paused.interrupts] == ["run delete?"]
    assert paused.handler_calls == 0
    ran = run_hook(
        confirm, "wrap_tool_call", tool_call=tool_call, responses=["ok"], mode=mode, resume="yes"
    )
    assert ran.handler_calls == 1 and ran.returned.content == "ok"


@pytest.mark.parametrize("mode", MODES)
def test_a_second_interrupt_after_the_answer_pauses_again(mode: Any) -> None:
    @before_agent
    def two_questions(state: Any) -> Any:
        name = interrupt("name?")
        age = interrupt("age?")
        return {"messages": [HumanMessage(f"{name} {age}")]}

    result = run_hook(two_questions, "before_agent", mode=mode, resume="ada")
    assert [i.value for i in result.interrupts] == ["age?"]
    assert result.returned is None


def test_resume_for_a_hook_that_never_pauses_is_an_error() -> None:
    @before_model
    def calm(state: Any) -> Any:
        return None

    with pytest.raises(ValueError, match=r"resume='yes'.*middleware 'calm', hook before_model"):
        run_hook(calm, "before_model", resume="yes")


def test_arun_hook_reports_and_resumes_in_an_async_test() -> None:
    async def main() -> tuple[Any, Any]:
        gate = approval_gate([])
        paused = await arun_hook(gate, "after_model", state=STATE)
        resumed = await arun_hook(gate, "after_model", state=STATE, resume="no")
        return paused, resumed

    paused, resumed = asyncio.run(main())
    assert paused.interrupts[0].value["question"] == "send it?"
    assert resumed.update["messages"][0].content == "cancelled"


@pytest.mark.parametrize("mode", MODES)
def test_langchains_human_in_the_loop_middleware_pauses_and_takes_a_decision(mode: Any) -> None:
    lc_mw = require_langchain("langchain.agents.middleware")
    hitl = lc_mw.HumanInTheLoopMiddleware(interrupt_on={"delete": True})
    asking = AIMessage("", tool_calls=[call("delete", {"path": "a"}, "d1")])
    state = {"messages": [HumanMessage("clean up"), asking]}
    paused = run_hook(hitl, "after_model", state=state, mode=mode)
    [request] = paused.interrupts
    [action] = request.value["action_requests"]
    assert (action["name"], action["args"]) == ("delete", {"path": "a"})
    rejected = run_hook(
        hitl,
        "after_model",
        state=state,
        mode=mode,
        resume={"decisions": [{"type": "reject", "message": "not that one"}]},
    )
    assert rejected.interrupts == () and rejected.update is not None
    replies = [m for m in rejected.update["messages"] if isinstance(m, ToolMessage)]
    [reply] = replies
    assert (reply.tool_call_id, reply.status) == ("d1", "error")
    assert str(reply.content).endswith("with reason: not that one")
