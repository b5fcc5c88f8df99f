"""The pairing contract in a running agent: a third-party middleware that breaks it is
named (warning), refused (``effects="strict"``) or repaired (``tool_pairing="repair"``),
sync, async and streamed, with a checkpointer."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from harness import Driver
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)
from langgraph.checkpoint.base import BaseCheckpointSaver

from funcware import (
    AgentMiddleware,
    ToolCallPairingError,
    ToolCallPairingWarning,
    after_model,
    create_agent,
    wrap_model_call,
)
from funcware.pairing.breaks import MISSING_ANSWER
from funcware.testing import ScriptedChatModel


def lookup(city: str) -> str:
    """Look up the weather in a city."""
    return f"sunny in {city}"


class DropToolOutputs(AgentMiddleware):
    """Third-party style: deletes tool outputs from the history to save tokens, and so
    leaves the model's tool call without its answer."""

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        outputs = [m for m in state["messages"] if isinstance(m, ToolMessage)]
        if not outputs:
            return None
        return {"messages": [RemoveMessage(id=m.id) for m in outputs if m.id]}


WHERE = f"{__file__}:{DropToolOutputs.before_model.__code__.co_firstlineno}"


def scripted() -> ScriptedChatModel:
    call = {"name": "lookup", "args": {"city": "Paris"}, "id": "call-1", "type": "tool_call"}
    return ScriptedChatModel(responses=[AIMessage("", tool_calls=[call]), "It is sunny."])


def run(driver: Driver, agent: Any, thread: dict[str, Any], streamed: bool) -> list[Any]:
    question = {"messages": [HumanMessage("Weather in Paris?")]}
    if streamed:
        driver.stream(agent, question, thread, stream_mode="values")
    else:
        driver.invoke(agent, question, thread)
    return list(driver.get_state(agent, thread).values["messages"])


@pytest.fixture(params=["invoke", "stream"])
def streamed(request: pytest.FixtureRequest) -> bool:
    return bool(request.param == "stream")


@pytest.mark.parametrize("checkpointer", ["memory", "sqlite"], indirect=True)
def test_a_write_that_breaks_the_contract_is_named(
    driver: Driver,
    checkpointer: BaseCheckpointSaver[Any],
    thread: dict[str, Any],
    streamed: bool,
) -> None:
    model = scripted()
    agent = create_agent(model, [lookup], middleware=[DropToolOutputs()], checkpointer=checkpointer)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        messages = run(driver, agent, thread, streamed)
    named = [str(w.message) for w in caught if w.category is ToolCallPairingWarning]
    assert named[0].startswith(
        f"The write of middleware 'DropToolOutputs', hook before_model (defined at {WHERE}) "
        "breaks the tool-call pairing contract"
    )
    assert "messages[1] (AIMessage, id=" in named[0]
    assert "tool call 'lookup' (id 'call-1') has no ToolMessage answer" in named[0]
    assert named[1].startswith("The history sent to the model breaks the tool-call pairing")
    assert len(named) == 2
    # The warning changes nothing: the write was applied, the model saw the broken history.
    assert [type(m).__name__ for m in messages] == ["HumanMessage", "AIMessage", "AIMessage"]
    assert [type(m).__name__ for m in model.calls[1].messages] == ["HumanMessage", "AIMessage"]


@pytest.mark.parametrize("checkpointer", ["memory", "sqlite"], indirect=True)
def test_repair_sends_the_model_a_history_it_accepts(
    driver: Driver,
    checkpointer: BaseCheckpointSaver[Any],
    thread: dict[str, Any],
    streamed: bool,
) -> None:
    model = scripted()
    agent = create_agent(
        model,
        [lookup],
        middleware=[DropToolOutputs()],
        checkpointer=checkpointer,
        tool_pairing="repair",
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        messages = run(driver, agent, thread, streamed)
    named = [str(w.message) for w in caught if w.category is ToolCallPairingWarning]
    assert len(named) == 1 and "'DropToolOutputs', hook before_model" in named[0]
    assert messages[-1].content == "It is sunny."
    sent = model.calls[1].messages
    assert [type(m).__name__ for m in sent] == ["HumanMessage", "AIMessage", "ToolMessage"]
    assert sent[2].status == "error" and sent[2].tool_call_id == "call-1"
    assert sent[2].content == MISSING_ANSWER.format(name="lookup")


@pytest.mark.parametrize("checkpointer", ["memory", "sqlite"], indirect=True)
def test_strict_refuses_the_write_before_it_is_applied(
    driver: Driver,
    checkpointer: BaseCheckpointSaver[Any],
    thread: dict[str, Any],
    streamed: bool,
) -> None:
    model = scripted()
    agent = create_agent(
        model, [lookup], middleware=[DropToolOutputs()], checkpointer=checkpointer, effects="strict"
    )
    with pytest.raises(ToolCallPairingError, match=r"'DropToolOutputs', hook before_model"):
        run(driver, agent, thread, streamed)
    saved = driver.get_state(agent, thread).values["messages"]
    assert [type(m).__name__ for m in saved] == ["HumanMessage", "AIMessage", "ToolMessage"]
    assert len(model.calls) == 1


def test_a_model_wrap_that_trims_the_request_badly_is_named() -> None:
    @wrap_model_call
    def keep_last_message(request: Any, handler: Any) -> Any:
        return handler(request.override(messages=request.messages[-1:]))

    agent = create_agent(scripted(), [lookup], middleware=[keep_last_message])
    with pytest.warns(ToolCallPairingWarning) as caught:
        agent.invoke({"messages": [HumanMessage("Weather in Paris?")]})
    first = str(caught[0].message)
    line = keep_last_message.__wrapped__.__code__.co_firstlineno
    assert first.startswith(
        "The history sent to the model (the agent's history kept the contract, so this model "
        "wrap changed it: middleware 'keep_last_message', hook wrap_model_call (defined at "
        f"{__file__}:{line})) breaks"
    )
    assert "messages[0] (ToolMessage, tool_call_id='call-1') answers no tool call" in first


def test_jumping_to_the_end_past_unanswered_calls_is_named() -> None:
    @after_model(can_jump_to=["end"])
    def stop_here(state: Any) -> dict[str, Any]:
        return {"jump_to": "end"}

    agent = create_agent(scripted(), [lookup], middleware=[stop_here])
    with pytest.warns(ToolCallPairingWarning, match="jumps to the end and leaves the latest"):
        agent.invoke({"messages": [HumanMessage("Weather in Paris?")]})


def test_rewriting_the_calls_by_id_and_jumping_to_the_end_is_named() -> None:
    @after_model(can_jump_to=["end"])
    def redact_and_stop(state: Any) -> dict[str, Any]:
        # A redaction-style rewrite that keeps the calls, then the end: still unanswered.
        return {"messages": [state["messages"][-1].model_copy()], "jump_to": "end"}

    agent = create_agent(scripted(), [lookup], middleware=[redact_and_stop])
    with pytest.warns(ToolCallPairingWarning, match="jumps to the end and leaves the latest"):
        agent.invoke({"messages": [HumanMessage("Weather in Paris?")]})


def test_a_broken_input_is_named_at_the_model_call() -> None:
    agent = create_agent(scripted(), [lookup])
    orphan = ToolMessage("stale", tool_call_id="gone")
    with pytest.warns(ToolCallPairingWarning, match=r"The history sent to the model") as caught:
        agent.invoke({"messages": [orphan, HumanMessage("Weather in Paris?")]})
    assert "messages[0] (ToolMessage, tool_call_id='gone') answers no tool call" in str(
        caught[0].message
    )


@pytest.mark.parametrize("mode", ["warn", "repair", "off"])
def test_an_agent_that_keeps_the_contract_hears_nothing(driver: Driver, mode: str) -> None:
    @after_model
    def note(state: Any) -> dict[str, Any]:
        return {"messages": []}

    agent = create_agent(scripted(), [lookup], middleware=[note], tool_pairing=mode)  # type: ignore[arg-type]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ToolCallPairingWarning)
        result = driver.invoke(agent, {"messages": [HumanMessage("Weather in Paris?")]})
    assert result["messages"][-1].content == "It is sunny."


def test_off_checks_nothing() -> None:
    agent = create_agent(scripted(), [lookup], middleware=[DropToolOutputs()], tool_pairing="off")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ToolCallPairingWarning)
        agent.invoke({"messages": [HumanMessage("Weather in Paris?")]})


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match=r"tool_pairing='fix'; use one of 'warn', 'repair', 'off'"):
        create_agent(scripted(), [lookup], tool_pairing="fix")  # type: ignore[arg-type]


def test_a_rewrite_by_id_that_drops_the_calls_is_named(driver: Driver) -> None:
    class StripToolCalls(AgentMiddleware):
        """Third-party style: rewrites earlier answers as plain text, dropping their calls."""

        def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            rewritten = [
                AIMessage(m.text or "(used a tool)", id=m.id)
                for m in state["messages"]
                if isinstance(m, AIMessage) and m.tool_calls
            ]
            return {"messages": rewritten} if rewritten else None

    agent = create_agent(scripted(), [lookup], middleware=[StripToolCalls()])
    with pytest.warns(ToolCallPairingWarning) as caught:
        driver.invoke(agent, {"messages": [HumanMessage("Weather in Paris?")]})
    first = str(caught[0].message)
    assert "middleware 'StripToolCalls', hook before_model" in first
    assert (
        "messages[2] (ToolMessage, tool_call_id='call-1') answers no tool call before it" in first
    )
