"""``effects="strict"`` watches what node hooks do to the messages, in the finer vocabulary.

A ``ToolMessage`` is an answer (``messages.answer``), a ``RemoveMessage`` or a message with
the id of one already in the state a rewrite (``messages.rewrite``), anything else an
append (``messages.append``). A hook that declares any of the three and does another is
refused naming the middleware, the hook, its file:line and the effect, in a dict update
or a ``Command``, sync or async; a hook that declares only the coarse ``state.messages``
may write messages any way; one that declares neither is refused for ``state.messages``
and told which change it made. A wrap that declares a message effect may write messages
in its command. The default ``effects="warn"`` watches nothing.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt
from support import hi

from funcware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    UndeclaredEffectError,
    after_model,
    create_agent,
    wrap_model_call,
)
from funcware.hooks.middleware import where
from funcware.testing import ScriptedChatModel, arun_hook, run_hook

PROPOSAL = AIMessage(
    "", id="ai-1", tool_calls=[{"name": "echo", "args": {"text": "a"}, "id": "c1"}]
)
STATE = {"messages": [HumanMessage("hi", id="h-1"), PROPOSAL]}

CHANGES: dict[str, Any] = {
    "messages.answer": lambda: [ToolMessage("refused", tool_call_id="c1", status="error")],
    "messages.rewrite.text": lambda: [PROPOSAL.model_copy(update={"tool_calls": []})],
    "messages.rewrite.calls": lambda: [
        PROPOSAL.model_copy(
            update={"tool_calls": [{"name": "echo", "args": {"text": "edited"}, "id": "c1"}]}
        )
    ],
    "messages.append": lambda: [AIMessage("a reminder")],
}
REMOVAL = lambda: [RemoveMessage(id="h-1")]  # noqa: E731


def hook(writes: list[str], change: Any, *, command: bool = False, is_async: bool = False) -> Any:
    if is_async:

        async def abody(state: Any) -> Any:
            update = {"messages": change()}
            return Command(update=update) if command else update

        return after_model(name="writer", writes=writes)(abody)

    def body(state: Any) -> Any:
        update = {"messages": change()}
        return Command(update=update) if command else update

    return after_model(name="writer", writes=writes)(body)


def run(middleware: Any, is_async: bool) -> Any:
    if is_async:
        return asyncio.run(arun_hook(middleware, "after_model", state=STATE))
    return run_hook(middleware, "after_model", state=STATE)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("command", [False, True], ids=["dict", "command"])
@pytest.mark.parametrize("effect", list(CHANGES))
def test_an_undeclared_kind_of_message_change_is_refused(
    effect: str, command: bool, is_async: bool
) -> None:
    other = next(e for e in CHANGES if e != effect)
    writer = hook([other], CHANGES[effect], command=command, is_async=is_async)
    with pytest.raises(UndeclaredEffectError) as info:
        run(writer, is_async)
    text = str(info.value)
    assert text.startswith(
        f"middleware 'writer', hook after_model (defined at {where(writer.__wrapped__)})"
    )
    assert f": effect {effect!r}, which it did not declare (it declares writes=[{other}])" in text
    assert f"Add {effect!r} to its writes=" in text
    run(hook([effect], CHANGES[effect], command=command, is_async=is_async), is_async)


def test_a_removal_is_a_rewrite_of_text() -> None:
    with pytest.raises(UndeclaredEffectError, match=r"effect 'messages.rewrite.text'"):
        run_hook(hook(["messages.append"], REMOVAL), "after_model", state=STATE)
    run_hook(hook(["messages.rewrite.text"], REMOVAL), "after_model", state=STATE)


def test_the_coarse_rewrite_allows_both_kinds_of_rewrite() -> None:
    for effect in ("messages.rewrite.text", "messages.rewrite.calls"):
        run_hook(hook(["messages.rewrite"], CHANGES[effect]), "after_model", state=STATE)
    masker = hook(["messages.rewrite.text"], CHANGES["messages.rewrite.calls"])
    with pytest.raises(UndeclaredEffectError, match=r"added or changed a tool call"):
        run_hook(masker, "after_model", state=STATE)


def test_the_coarse_name_allows_every_kind() -> None:
    for change in [*CHANGES.values(), REMOVAL]:
        run_hook(hook(["state.messages"], change), "after_model", state=STATE)


def test_a_message_write_without_any_message_effect_names_the_kind() -> None:
    writer = hook(["interrupt"], CHANGES["messages.answer"])
    with pytest.raises(UndeclaredEffectError) as info:
        run_hook(writer, "after_model", state=STATE)
    assert (
        "wrote state key 'messages' (as 'messages.answer'): effect 'state.messages', "
        "which it did not declare"
    ) in str(info.value)


def test_warn_mode_watches_no_message_change() -> None:
    writer = hook(["messages.append"], CHANGES["messages.answer"])
    run_hook(writer, "after_model", state=STATE, effects="warn")


@tool
def refund(amount: int) -> str:
    """Refund an amount."""
    return f"refunded {amount}"


class Approval(AgentMiddleware[AgentState[Any], Any]):
    """Asks a person about refunds; a rejection answers the call. It declares an edit
    (``messages.rewrite``) it may make, but forgot the answer."""

    reads = ("messages.latest",)
    writes = ("interrupt", "messages.rewrite")

    def after_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        last = next(m for m in reversed(state["messages"]) if isinstance(m, AIMessage))
        if not last.tool_calls:
            return None
        if interrupt("refund?") == "no":
            call = last.tool_calls[0]
            return {"messages": [ToolMessage("rejected", tool_call_id=call["id"] or "")]}
        return None


def test_an_agent_under_strict_effects_refuses_an_undeclared_answer() -> None:
    proposal = AIMessage("", tool_calls=[{"name": "refund", "args": {"amount": 500}, "id": "r"}])
    agent = create_agent(
        ScriptedChatModel(responses=[proposal, "done"]),
        [refund],
        middleware=[Approval()],
        checkpointer=InMemorySaver(),
        effects="strict",
    )
    config: Any = {"configurable": {"thread_id": "refund"}}
    assert agent.invoke(hi(), config)["__interrupt__"]
    with pytest.raises(UndeclaredEffectError) as info:
        agent.invoke(Command(resume="no"), config)
    text = str(info.value)
    assert text.startswith("middleware 'Approval', hook after_model (defined at ")
    assert "answered a pending tool call with a ToolMessage: effect 'messages.answer'" in text


@pytest.mark.parametrize(("writes", "allowed"), [(["messages.append"], True), ([], False)])
def test_a_model_wrap_writes_messages_in_its_command_only_when_declared(
    writes: list[str], allowed: bool
) -> None:
    @wrap_model_call(name="noter", writes=writes)
    def noter(request: Any, handler: Any) -> Any:
        note = Command(update={"messages": [HumanMessage("a note")]})
        return ExtendedModelResponse(handler(request), note)

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[noter], effects="strict")
    if allowed:
        assert [m.text for m in agent.invoke(hi())["messages"]][-2:] == ["ok", "a note"]
        return
    with pytest.raises(UndeclaredEffectError, match=r"effect 'state.messages'"):
        agent.invoke(hi())
