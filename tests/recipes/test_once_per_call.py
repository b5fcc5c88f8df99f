"""The once_per_call recipe: a tool call's tool starts at most once per ledger.

Two agents sharing one ledger file stand for two server instances sharing a database: a
step re-run on the second (as after a failover) must get the first's answer, and a call
whose first attempt died inside the tool must be reported, not repeated (unless the
caller asked for ``unfinished="retry"``). The same checks run on PostgreSQL when
``FUNCWARE_POSTGRES_URL`` is set. Runs here use ``durability="sync"``, the one under which
the recipe's guarantee covers a worker's death; on any other run it warns, which the last
tests check (the kill itself is ``tests/deploy/test_scale_out.py``'s).
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import ToolRuntime
from langgraph.types import Command

from funcware import create_agent
from funcware.cookbook.once_per_call import (
    DURABILITY_KEY,
    CallLedger,
    DurabilityWarning,
    OncePerToolCall,
    call_key,
    run_durability,
)
from funcware.testing import ScriptedChatModel


def reply(messages: list[BaseMessage]) -> AIMessage:
    """Call ``refund`` and ``lookup`` once, then report the tool answers."""
    if isinstance(messages[-1], ToolMessage):
        return AIMessage("Done. " + " ".join(m.text for m in messages if m.type == "tool"))
    calls = [
        {"name": "refund", "args": {"order": "A7"}, "id": "r1"},
        {"name": "lookup", "args": {"order": "A7"}, "id": "l1"},
    ]
    return AIMessage("", tool_calls=calls)


class Shop:
    """Counts what the tools did (the side effects)."""

    def __init__(self) -> None:
        self.refunds: list[str] = []
        self.lookups = 0

    def tools(self) -> list[Any]:
        @tool
        def refund(order: str) -> str:
            """Refund an order."""
            self.refunds.append(order)
            return f"Refunded {order}."

        @tool
        def lookup(order: str) -> str:
            """Look an order up (read-only)."""
            self.lookups += 1
            return f"{order} is open."

        return [refund, lookup]


def agent_on(ledger: CallLedger, shop: Shop, **options: Any) -> Any:
    once = OncePerToolCall(ledger, tools={"refund"}, **options)
    model = ScriptedChatModel(respond=reply)
    return create_agent(model, shop.tools(), middleware=[once], checkpointer=InMemorySaver())


def thread() -> RunnableConfig:
    return {"configurable": {"thread_id": f"t-{uuid.uuid4().hex}"}}


def run(agent: Any, payload: Any, config: RunnableConfig) -> Any:
    """``agent.invoke`` with the durability the recipe needs; any warning fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DurabilityWarning)
        return agent.invoke(payload, config, durability="sync")


@pytest.fixture(params=["sqlite-file", "sqlite-memory", "postgres"])
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CallLedger]:
    if request.param == "sqlite-file":
        yield CallLedger.sqlite(str(tmp_path / "ledger.db"))
    elif request.param == "sqlite-memory":
        yield CallLedger.sqlite()
    else:
        yield CallLedger.postgres(request.getfixturevalue("postgres_url")).setup()


def test_a_step_run_again_elsewhere_gets_the_recorded_answer(ledger: CallLedger) -> None:
    config = thread()
    first, second = Shop(), Shop()
    done = run(agent_on(ledger, first), {"messages": [HumanMessage("refund A7")]}, config)
    # Another instance runs the same tool step again from the same conversation.
    proposal = done["messages"][1]
    again = agent_on(ledger, second)
    again.update_state(config, {"messages": [HumanMessage("refund A7"), proposal]})
    replayed = run(again, None, config)

    assert first.refunds == ["A7"] and second.refunds == []  # paid once across both
    assert second.lookups == 1  # a tool outside tools= is not wrapped
    answers = {m.tool_call_id: m.text for m in replayed["messages"] if m.type == "tool"}
    assert answers == {"r1": "Refunded A7.", "l1": "A7 is open."}
    thread_id = config["configurable"]["thread_id"]
    recorded = ledger.answers()[(thread_id, "r1")]
    assert recorded == {"content": "Refunded A7.", "name": "refund", "status": "success"}


def test_a_call_whose_first_attempt_died_is_reported_not_repeated(ledger: CallLedger) -> None:
    config = thread()
    ledger.start(config["configurable"]["thread_id"], "r1")  # a worker died inside the tool
    shop = Shop()
    state = run(agent_on(ledger, shop), {"messages": [HumanMessage("refund A7")]}, config)

    assert shop.refunds == []
    (answer,) = [m for m in state["messages"] if m.type == "tool" and m.tool_call_id == "r1"]
    assert answer.status == "error" and "whether it took effect is unknown" in answer.text


def test_retry_runs_an_unfinished_call_again(ledger: CallLedger) -> None:
    config = thread()
    ledger.start(config["configurable"]["thread_id"], "r1")
    shop = Shop()
    run(
        agent_on(ledger, shop, unfinished="retry"),
        {"messages": [HumanMessage("refund A7")]},
        config,
    )
    assert shop.refunds == ["A7"]
    assert ledger.answers()[(config["configurable"]["thread_id"], "r1")] is not None


def test_retry_with_the_call_key_makes_an_idempotent_effect_happen_once(
    ledger: CallLedger,
) -> None:
    """The first attempt paid and died before its answer was recorded; the retry pays again,
    under the same key, so the payment system keeps one payment."""
    payments: dict[str, str] = {}

    @tool
    def refund(order: str, runtime: ToolRuntime) -> str:
        """Refund an order, idempotently on the call's key."""
        key = call_key(runtime.config["configurable"]["thread_id"], runtime.tool_call_id or "")
        payments.setdefault(key, order)
        return f"Refunded {order}."

    config = thread()
    thread_id = config["configurable"]["thread_id"]
    ledger.start(thread_id, "r1")
    payments[call_key(thread_id, "r1")] = "A7"  # what the dead attempt did
    once = OncePerToolCall(ledger, tools={"refund"}, unfinished="retry")
    model = ScriptedChatModel(respond=reply)
    agent = create_agent(
        model, [refund, Shop().tools()[1]], middleware=[once], checkpointer=InMemorySaver()
    )
    state = run(agent, {"messages": [HumanMessage("refund A7")]}, config)
    answers = {m.tool_call_id: m.text for m in state["messages"] if m.type == "tool"}
    assert answers["r1"] == "Refunded A7."  # the tool ran again ...
    assert payments == {f"{thread_id}:r1": "A7"}  # ... and the payment system kept one


def test_calls_are_keyed_by_thread_and_call_id(ledger: CallLedger) -> None:
    shop = Shop()
    agent = agent_on(ledger, shop)
    for _ in range(2):  # the same call id in two threads: two calls
        run(agent, {"messages": [HumanMessage("refund A7")]}, thread())
    assert shop.refunds == ["A7", "A7"]
    assert call_key("t1", "r1") == "t1:r1"


def test_a_tool_returning_a_command_is_refused() -> None:
    @tool
    def refund(order: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
        """Refund an order."""
        return Command(update={"messages": [ToolMessage("ok", tool_call_id=tool_call_id)]})

    once = OncePerToolCall(CallLedger.sqlite(), tools={"refund"})
    model = ScriptedChatModel(respond=reply)
    agent = create_agent(model, [refund], middleware=[once], checkpointer=InMemorySaver())
    with pytest.raises(TypeError, match=r"OncePerToolCall.wrap_tool_call: tool 'refund'.*Command"):
        run(agent, {"messages": [HumanMessage("refund A7")]}, thread())


def test_a_run_without_a_thread_id_is_refused() -> None:
    shop = Shop()
    once = OncePerToolCall(CallLedger.sqlite(), tools={"refund"})
    agent = create_agent(ScriptedChatModel(respond=reply), shop.tools(), middleware=[once])
    with pytest.raises(ValueError, match="runs without a thread_id"):
        agent.invoke({"messages": [HumanMessage("refund A7")]})
    assert shop.refunds == []


def test_an_unknown_unfinished_policy_is_refused() -> None:
    with pytest.raises(ValueError, match=r"unfinished='again'"):
        OncePerToolCall(CallLedger.sqlite(), unfinished="again")  # type: ignore[arg-type]


def test_a_stable_ids_flag_that_is_not_a_bool_is_refused() -> None:
    with pytest.raises(TypeError, match=r"stable_ids='yes'"):
        OncePerToolCall(CallLedger.sqlite(), stable_ids="yes")  # type: ignore[arg-type]


# -- durability: the recipe says when a worker's death can repeat an effect -------------


def test_the_durability_is_read_where_langgraph_keeps_it() -> None:
    from langgraph._internal._constants import CONFIG_KEY_DURABILITY

    assert DURABILITY_KEY == CONFIG_KEY_DURABILITY
    assert run_durability({}) == "async"  # LangGraph's default, when a run names none
    assert run_durability({"configurable": {DURABILITY_KEY: "sync"}}) == "sync"


@pytest.mark.parametrize("durability", [None, "async", "exit"])
def test_a_run_whose_durability_is_not_sync_is_warned_about(durability: str | None) -> None:
    shop = Shop()
    agent = agent_on(CallLedger.sqlite(), shop)
    with pytest.warns(DurabilityWarning) as caught:
        agent.invoke({"messages": [HumanMessage("refund A7")]}, thread(), durability=durability)
    message = str(caught[0].message)
    assert f"durability={durability or 'async'!r}" in message
    assert "the call to 'refund'" in message and "durability='sync'" in message
    assert "stable_ids=True" in message
    assert shop.refunds == ["A7"]  # a warning, not a refusal: the run goes on


def test_a_run_with_sync_durability_or_stable_ids_is_not_warned_about() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DurabilityWarning)
        shop = Shop()
        run(
            agent_on(CallLedger.sqlite(), shop), {"messages": [HumanMessage("refund A7")]}, thread()
        )
        agent = agent_on(CallLedger.sqlite(), shop, stable_ids=True)
        agent.invoke({"messages": [HumanMessage("refund A7")]}, thread())  # LangGraph's default
    assert shop.refunds == ["A7", "A7"]


def test_a_subgraph_sees_the_durability_its_parent_run_was_given() -> None:
    """The agent as a node of another graph: the parent's durability is the one checked."""
    from langgraph.graph import START, StateGraph

    from funcware import AgentState

    shop = Shop()
    inner = agent_on(CallLedger.sqlite(), shop)
    outer = StateGraph(AgentState).add_node("agent", inner).add_edge(START, "agent")
    parent = outer.compile(checkpointer=InMemorySaver())
    run(parent, {"messages": [HumanMessage("refund A7")]}, thread())
    with pytest.warns(DurabilityWarning):
        parent.invoke({"messages": [HumanMessage("refund A7")]}, thread())
    assert shop.refunds == ["A7", "A7"]
