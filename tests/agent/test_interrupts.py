"""Hooks that call langgraph's ``interrupt()``: the run pauses, ``Command(resume=...)`` goes on.

Counting calls shows that nothing already done is done again: the model is not called
again on resume, an approved tool runs exactly once, a rejected one never.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
import support
from harness import Driver, contents, tool_calls
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from funcware import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
    after_model,
    before_model,
    create_agent,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.testing import ScriptedChatModel

Saver = BaseCheckpointSaver[Any]


class Outbox:
    """A ``send_email`` tool that records every email it actually sends."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

        @tool
        def send_email(to: str, body: str) -> str:
            """Send an email."""
            self.sent.append((to, body))
            return f"sent to {to}"

        self.tool = send_email


def hi() -> dict[str, Any]:
    return {"messages": [HumanMessage("email bob")]}


def email_model(*more: Any) -> ScriptedChatModel:
    call = tool_calls(("send_email", {"to": "bob", "body": "hello"}))
    return ScriptedChatModel(responses=[call, "all done", *more])


def rejection(request: ToolCallRequest, reason: str) -> ToolMessage:
    return ToolMessage(
        content=f"The user rejected this call: {reason}",
        tool_call_id=request.tool_call["id"],
        name=request.tool_call["name"],
        status="error",
    )


def review(request: ToolCallRequest, decision: dict[str, Any]) -> ToolCallRequest | ToolMessage:
    """Apply a human decision to a pending tool call: the request to run, or a rejection."""
    if decision["type"] == "approve":
        return request
    if decision["type"] == "edit":
        return request.override(tool_call={**request.tool_call, "args": decision["args"]})
    return rejection(request, decision["reason"])


def ask(request: ToolCallRequest) -> dict[str, Any]:
    answer: dict[str, Any] = interrupt(
        {"tool": request.tool_call["name"], "args": request.tool_call["args"]}
    )
    return answer


@wrap_tool_call
def approval(request: ToolCallRequest, handler: Any) -> Any:
    reviewed = review(request, ask(request))
    return reviewed if isinstance(reviewed, ToolMessage) else handler(reviewed)


@wrap_tool_call(name="approval")
async def async_approval(request: ToolCallRequest, handler: Any) -> Any:
    reviewed = review(request, ask(request))
    return reviewed if isinstance(reviewed, ToolMessage) else await handler(reviewed)


APPROVALS = [pytest.param(approval, id="sync_hook"), pytest.param(async_approval, id="async_hook")]
DECISIONS = {
    "approve": {"type": "approve"},
    "edit": {"type": "edit", "args": {"to": "eve", "body": "hello eve"}},
    "reject": {"type": "reject", "reason": "not bob"},
}


@pytest.mark.parametrize("hook", APPROVALS)
@pytest.mark.parametrize("decision", DECISIONS)
def test_a_pending_tool_call_can_be_approved_edited_or_rejected(
    driver: Driver,
    checkpointer: Saver,
    thread: dict[str, Any],
    hook: AgentMiddleware[Any, Any, Any],
    decision: str,
) -> None:
    outbox = Outbox()
    model = email_model()
    agent = create_agent(model, [outbox.tool], middleware=[hook], checkpointer=checkpointer)

    paused = driver.invoke(agent, hi(), thread)

    [pending] = paused["__interrupt__"]
    assert pending.value == {"tool": "send_email", "args": {"to": "bob", "body": "hello"}}
    assert (len(model.calls), outbox.sent) == (1, [])
    assert driver.get_state(agent, thread).next == ("tools",)

    done = driver.invoke(agent, Command(resume=DECISIONS[decision]), thread)

    assert "__interrupt__" not in done
    assert len(model.calls) == 2  # once before the pause, once after the tool: never again
    answer = done["messages"][2]
    assert isinstance(answer, ToolMessage)
    assert answer.tool_call_id == "call-0"
    if decision == "approve":
        assert outbox.sent == [("bob", "hello")]
        assert (answer.text, answer.status) == ("sent to bob", "success")
    elif decision == "edit":
        assert outbox.sent == [("eve", "hello eve")]
        assert answer.text == "sent to eve"
    else:
        assert outbox.sent == []
        assert answer.status == "error"
        assert answer.text == "The user rejected this call: not bob"
    assert contents(done["messages"])[-1] == "all done"
    assert contents(model.calls[1].messages)[2] == answer.text  # the model saw the outcome


@pytest.mark.parametrize("hook", APPROVALS)
def test_parallel_tool_calls_pause_together_and_resume_by_interrupt_id(
    driver: Driver, thread: dict[str, Any], hook: AgentMiddleware[Any, Any, Any]
) -> None:
    outbox = Outbox()
    call = tool_calls(
        ("send_email", {"to": "bob", "body": "1"}),
        ("send_email", {"to": "al", "body": "2"}),
        ("send_email", {"to": "cy", "body": "3"}),
    )
    model = ScriptedChatModel(responses=[call, "done"])
    agent = create_agent(model, [outbox.tool], middleware=[hook], checkpointer=InMemorySaver())

    paused = driver.invoke(agent, hi(), thread)

    pending = {i.value["args"]["to"]: i.id for i in paused["__interrupt__"]}
    assert set(pending) == {"bob", "al", "cy"}
    decisions = {
        pending["bob"]: DECISIONS["approve"],
        pending["al"]: {"type": "edit", "args": {"to": "al", "body": "2, edited"}},
        pending["cy"]: DECISIONS["reject"],
    }
    done = driver.invoke(agent, Command(resume=decisions), thread)

    assert sorted(outbox.sent) == [("al", "2, edited"), ("bob", "1")]
    answers = {m.tool_call_id: (m.status, m.text) for m in done["messages"][2:5]}
    assert answers == {
        "call-0": ("success", "sent to bob"),
        "call-1": ("success", "sent to al"),
        "call-2": ("error", "The user rejected this call: not bob"),
    }
    assert len(model.calls) == 2


def test_resuming_one_of_several_pending_calls_keeps_the_others_pending(
    driver: Driver, thread: dict[str, Any]
) -> None:
    outbox = Outbox()
    call = tool_calls(
        ("send_email", {"to": "bob", "body": "1"}), ("send_email", {"to": "al", "body": "2"})
    )
    model = ScriptedChatModel(responses=[call, "done"])
    agent = create_agent(model, [outbox.tool], middleware=[approval], checkpointer=InMemorySaver())

    paused = driver.invoke(agent, hi(), thread)
    first, second = paused["__interrupt__"]
    still = driver.invoke(agent, Command(resume={first.id: DECISIONS["approve"]}), thread)

    assert [i.id for i in still["__interrupt__"]] == [second.id]
    assert len(outbox.sent) == 1
    done = driver.invoke(agent, Command(resume={second.id: DECISIONS["approve"]}), thread)

    assert sorted(outbox.sent) == [("al", "2"), ("bob", "1")]  # each exactly once
    assert contents(done["messages"])[-1] == "done"
    assert len(model.calls) == 2


# -- interrupts from node hooks -----------------------------------------------------


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_an_after_model_review_approves_edits_and_rejects_tool_calls(
    driver: Driver, checkpointer: Saver, thread: dict[str, Any], flavour: str
) -> None:
    def decide(state: Any) -> dict[str, Any] | None:
        last = state["messages"][-1]
        if not isinstance(last, AIMessage) or not last.tool_calls:
            return None
        decisions = interrupt([c["args"] for c in last.tool_calls])
        calls: list[Any] = []
        rejected: list[ToolMessage] = []
        for call, decision in zip(last.tool_calls, decisions, strict=True):
            if decision["type"] == "edit":
                call = {**call, "args": decision["args"]}
            elif decision["type"] == "reject":
                rejected.append(ToolMessage("rejected", tool_call_id=call["id"], name=call["name"]))
            calls.append(call)
        return {"messages": [last.model_copy(update={"tool_calls": calls}), *rejected]}

    if flavour == "sync":
        reviewer = after_model(name="reviewer")(decide)
    else:

        async def adecide(state: Any) -> dict[str, Any] | None:
            return decide(state)

        reviewer = after_model(name="reviewer")(adecide)

    outbox = Outbox()
    call = tool_calls(
        ("send_email", {"to": "bob", "body": "1"}),
        ("send_email", {"to": "al", "body": "2"}),
        ("send_email", {"to": "cy", "body": "3"}),
    )
    model = ScriptedChatModel(responses=[call, "done"])
    agent = create_agent(model, [outbox.tool], middleware=[reviewer], checkpointer=checkpointer)

    paused = driver.invoke(agent, hi(), thread)
    [pending] = paused["__interrupt__"]
    assert [a["to"] for a in pending.value] == ["bob", "al", "cy"]
    assert driver.get_state(agent, thread).next == ("reviewer.after_model",)

    decisions = [
        {"type": "approve"},
        {"type": "edit", "args": {"to": "al", "body": "edited"}},
        {"type": "reject"},
    ]
    done = driver.invoke(agent, Command(resume=decisions), thread)

    assert sorted(outbox.sent) == [("al", "edited"), ("bob", "1")]
    assert len(model.calls) == 2
    ai = done["messages"][1]
    assert [c["args"]["body"] for c in ai.tool_calls] == ["1", "edited", "3"]
    assert len(done["messages"]) == 6  # human, ai, three tool answers, final
    assert {m.tool_call_id: m.text for m in done["messages"][2:5]} == {
        "call-0": "sent to bob",
        "call-1": "sent to al",
        "call-2": "rejected",
    }


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_before_model_interrupt_holds_the_model_until_resumed(
    driver: Driver, checkpointer: Saver, thread: dict[str, Any], flavour: str
) -> None:
    entered: list[int] = []

    def gate(state: Any) -> dict[str, Any]:
        entered.append(len(state["messages"]))
        note = interrupt("add a note?")
        return {"messages": [HumanMessage(f"note: {note}")]}

    if flavour == "sync":
        hook = before_model(name="gate")(gate)
    else:

        async def agate(state: Any) -> dict[str, Any]:
            return gate(state)

        hook = before_model(name="gate")(agate)

    model = ScriptedChatModel(responses=["ok"])
    agent = create_agent(model, middleware=[hook], checkpointer=checkpointer)

    paused = driver.invoke(agent, hi(), thread)
    assert [i.value for i in paused["__interrupt__"]] == ["add a note?"]
    assert model.calls == []

    done = driver.invoke(agent, Command(resume="be kind"), thread)

    assert contents(done["messages"]) == ["email bob", "note: be kind", "ok"]
    assert contents(model.calls[0].messages) == ["email bob", "note: be kind"]
    assert len(model.calls) == 1
    assert entered == [1, 1]  # the interrupted hook itself runs again on resume


def test_a_wrap_model_call_interrupt_calls_the_model_once_after_resume(
    driver: Driver, thread: dict[str, Any]
) -> None:
    @wrap_model_call
    def confirm(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        budget = interrupt("spend tokens?")
        return handler(request.override(model_settings={"max_tokens": budget}))

    model = ScriptedChatModel(responses=["ok"])
    agent = create_agent(model, middleware=[confirm], checkpointer=InMemorySaver())

    paused = driver.invoke(agent, hi(), thread)
    assert "__interrupt__" in paused and model.calls == []
    done = driver.invoke(agent, Command(resume=64), thread)

    assert [c.settings for c in model.calls] == [{"max_tokens": 64}]
    assert contents(done["messages"]) == ["email bob", "ok"]


def test_one_hook_may_interrupt_several_times(driver: Driver, thread: dict[str, Any]) -> None:
    @before_model
    def interview(state: Any) -> dict[str, Any]:
        name = interrupt("name?")
        city = interrupt("city?")
        return {"messages": [HumanMessage(f"{name} from {city}")]}

    model = ScriptedChatModel(responses=["hello"])
    agent = create_agent(model, middleware=[interview], checkpointer=InMemorySaver())

    asked = [driver.invoke(agent, hi(), thread)["__interrupt__"][0].value]
    asked.append(driver.invoke(agent, Command(resume="Ada"), thread)["__interrupt__"][0].value)
    done = driver.invoke(agent, Command(resume="Paris"), thread)

    assert asked == ["name?", "city?"]
    assert contents(done["messages"]) == ["email bob", "Ada from Paris", "hello"]
    assert len(model.calls) == 1


# -- bridged hooks ------------------------------------------------------------------


def bridged_approval(threads: list[str]) -> AgentMiddleware[Any, Any, Any]:
    @wrap_tool_call
    def sync_only_approval(request: ToolCallRequest, handler: Any) -> Any:
        threads.append(threading.current_thread().name)
        reviewed = review(request, ask(request))
        return reviewed if isinstance(reviewed, ToolMessage) else handler(reviewed)

    return sync_only_approval


def bridged_gate(threads: list[str]) -> AgentMiddleware[Any, Any, Any]:
    @before_model
    def sync_only_gate(state: Any) -> dict[str, Any] | None:
        threads.append(threading.current_thread().name)
        if len(state["messages"]) > 1:  # only the first loop asks
            return None
        return {"messages": [HumanMessage(f"gate: {interrupt('open?')}")]}

    return sync_only_gate


@pytest.mark.parametrize("make", [bridged_approval, bridged_gate])
def test_a_sync_only_hook_interrupts_under_ainvoke_from_a_worker_thread(
    thread: dict[str, Any], make: Callable[[list[str]], AgentMiddleware[Any, Any, Any]]
) -> None:

    threads: list[str] = []
    outbox = Outbox()
    model = email_model()
    agent = create_agent(
        model, [outbox.tool], middleware=[make(threads)], checkpointer=InMemorySaver()
    )

    async def run() -> tuple[Any, Any]:
        paused = await agent.ainvoke(hi(), thread)
        done = await agent.ainvoke(Command(resume=DECISIONS["approve"]), thread)
        return paused, done

    paused, done = asyncio.run(run())

    assert len(paused["__interrupt__"]) == 1
    assert threads and all(name.startswith("funcware-bridge") for name in threads)
    assert "__interrupt__" not in done
    assert outbox.sent == [("bob", "hello")]
    assert len(model.calls) == 2
    assert contents(done["messages"])[-1] == "all done"


def test_an_async_only_hook_interrupts_under_invoke(thread: dict[str, Any]) -> None:
    outbox = Outbox()
    model = email_model()
    agent = create_agent(
        model, [outbox.tool], middleware=[async_approval], checkpointer=InMemorySaver()
    )

    paused = agent.invoke(hi(), thread)
    done = agent.invoke(Command(resume=DECISIONS["edit"]), thread)

    assert len(paused["__interrupt__"]) == 1
    assert outbox.sent == [("eve", "hello eve")]
    assert len(model.calls) == 2
    assert contents(done["messages"])[-1] == "all done"


# -- an interrupt with a checkpointer still pauses and resumes -------------------


def test_an_interrupt_with_a_checkpointer_still_pauses_and_resumes() -> None:
    from langgraph.types import Command

    @before_model
    def asks(state: Any) -> dict[str, Any]:
        return {"messages": [HumanMessage(f"answer: {interrupt('ok?')}")]}

    agent = create_agent(
        ScriptedChatModel(responses=["done"]), middleware=[asks], checkpointer=InMemorySaver()
    )
    thread = {"configurable": {"thread_id": "t"}}
    assert agent.invoke(support.hi(), thread)["__interrupt__"][0].value == "ok?"
    result = agent.invoke(Command(resume="yes"), thread)
    assert [m.content for m in result["messages"]] == ["hi", "answer: yes", "done"]
