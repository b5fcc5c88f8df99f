"""create_agent with a checkpointer (memory, SQLite, PostgreSQL) and with a store."""

from __future__ import annotations

from typing import Annotated, Any

from harness import Driver, contents, tool_calls
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.runtime import Runtime
from langgraph.store.memory import InMemoryStore
from support import lookup
from typing_extensions import NotRequired

from funcware import (
    AgentState,
    ModelRequest,
    ModelResponse,
    PrivateStateAttr,
    ToolCallRequest,
    after_agent,
    after_model,
    before_agent,
    before_model,
    create_agent,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.testing import ScriptedChatModel

Saver = BaseCheckpointSaver[Any]


def say(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


def other_thread(config: dict[str, Any]) -> dict[str, Any]:
    return {"configurable": {"thread_id": config["configurable"]["thread_id"] + "-other"}}


# -- conversations continue ---------------------------------------------------------


def test_a_conversation_continues_on_the_same_thread(
    driver: Driver, checkpointer: Saver, thread: dict[str, Any]
) -> None:
    model = ScriptedChatModel(
        responses=[tool_calls(("lookup", {"key": "tide"})), "high at noon", "low at six", "hello"]
    )
    agent = create_agent(model, [lookup], checkpointer=checkpointer)

    first = driver.invoke(agent, say("when is high tide?"), thread)
    second = driver.invoke(agent, say("and low tide?"), thread)

    assert contents(first["messages"]) == [
        "when is high tide?",
        "",
        "value of tide",
        "high at noon",
    ]
    assert contents(second["messages"]) == [
        *contents(first["messages"]),
        "and low tide?",
        "low at six",
    ]
    assert contents(model.calls[2].messages) == contents(second["messages"])[:-1]

    fresh = driver.invoke(agent, say("hi"), other_thread(thread))
    assert contents(fresh["messages"]) == ["hi", "hello"]


class MemoState(AgentState[Any]):
    turns: NotRequired[Annotated[int, PrivateStateAttr]]
    last_topic: NotRequired[str]


@before_agent(state_schema=MemoState)
def count_turns(state: MemoState) -> dict[str, Any]:
    return {"turns": state.get("turns", 0) + 1}


@after_agent(state_schema=MemoState)
async def remember_topic(state: MemoState) -> dict[str, Any]:
    return {"last_topic": f"turn {state.get('turns')}: {state['messages'][-2].text}"}


def test_custom_and_private_state_written_by_middleware_survives(
    driver: Driver, checkpointer: Saver, thread: dict[str, Any]
) -> None:
    seen: list[tuple[int | None, str | None]] = []

    @wrap_model_call
    def watch(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        seen.append((request.state.get("turns"), request.state.get("last_topic")))
        return handler(request)

    model = ScriptedChatModel(responses=["a", "b", "c"])
    agent = create_agent(
        model, middleware=[count_turns, watch, remember_topic], checkpointer=checkpointer
    )

    driver.invoke(agent, say("tides"), thread)
    driver.invoke(agent, say("moons"), thread)
    third = driver.invoke(agent, say("stars"), thread)

    assert seen == [(1, None), (2, "turn 1: tides"), (3, "turn 2: moons")]
    assert third["last_topic"] == "turn 3: stars"
    assert "turns" not in third
    snapshot = driver.get_state(agent, thread)
    assert snapshot.values["turns"] == 3
    assert snapshot.values["last_topic"] == "turn 3: stars"
    assert snapshot.next == ()


def test_state_survives_into_a_new_agent_built_on_the_same_checkpointer(
    driver: Driver, checkpointer: Saver, thread: dict[str, Any]
) -> None:
    def build(responses: list[Any]) -> Any:
        model = ScriptedChatModel(responses=responses)
        return model, create_agent(
            model, middleware=[count_turns, remember_topic], checkpointer=checkpointer
        )

    _, first = build(["a"])
    driver.invoke(first, say("tides"), thread)
    model, second = build(["b"])
    result = driver.invoke(second, say("moons"), thread)

    assert contents(model.calls[0].messages) == ["tides", "a", "moons"]
    assert result["last_topic"] == "turn 2: moons"


def test_each_hook_node_leaves_a_checkpoint(
    driver: Driver, checkpointer: Saver, thread: dict[str, Any]
) -> None:
    @after_model
    def noop(state: Any) -> None:
        return None

    agent = create_agent(
        ScriptedChatModel(responses=["a"]),
        middleware=[count_turns, noop],
        checkpointer=checkpointer,
    )
    driver.invoke(agent, say("hi"), thread)

    if driver.is_async:

        async def history() -> list[Any]:
            return [s async for s in agent.aget_state_history(thread)]

        snapshots = driver.run(history())
    else:
        snapshots = list(agent.get_state_history(thread))
    nexts = [s.next for s in reversed(snapshots)]
    assert nexts == [
        ("__start__",),
        ("count_turns.before_agent",),
        ("model",),
        ("noop.after_model",),
        (),
    ]


# -- store --------------------------------------------------------------------------


def test_the_store_given_to_create_agent_is_the_runtime_store_of_every_hook(
    driver: Driver, thread: dict[str, Any]
) -> None:
    store = InMemoryStore()
    seen: list[tuple[str, bool]] = []

    @before_agent
    def load(state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        seen.append(("before_agent", runtime.store is store))
        assert runtime.store is not None
        item = runtime.store.get(("prefs",), "user")
        if item is None:
            return None
        return {"messages": [HumanMessage(f"(prefers {item.value['style']})")]}

    @before_model
    async def model_side(state: Any, runtime: Runtime[Any]) -> None:
        seen.append(("before_model", runtime.store is store))

    @wrap_model_call
    def around_model(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        seen.append(("wrap_model_call", request.runtime.store is store))
        return handler(request)

    @wrap_tool_call
    async def around_tool(request: ToolCallRequest, handler: Any) -> Any:
        seen.append(("wrap_tool_call", request.runtime.store is store))
        return await handler(request)

    @after_agent
    def save(state: Any, runtime: Runtime[Any]) -> None:
        seen.append(("after_agent", runtime.store is store))
        assert runtime.store is not None
        runtime.store.put(("prefs",), "user", {"style": "terse"})

    model = ScriptedChatModel(responses=[tool_calls(("lookup", {"key": "k"})), "done", "again"])
    agent = create_agent(
        model,
        [lookup],
        middleware=[load, model_side, around_model, around_tool, save],
        store=store,
    )

    first = driver.invoke(agent, say("hi"), thread)
    second = driver.invoke(agent, say("hi"), other_thread(thread))  # the store spans threads

    assert all(same for _, same in seen)
    assert {where for where, _ in seen} == {
        "before_agent",
        "before_model",
        "wrap_model_call",
        "wrap_tool_call",
        "after_agent",
    }
    assert contents(first["messages"])[:1] == ["hi"]
    assert contents(second["messages"]) == ["hi", "(prefers terse)", "again"]
    assert isinstance(first["messages"][2], ToolMessage)
