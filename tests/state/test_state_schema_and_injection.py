"""The caller's state_schema wins; hooks get langgraph's injectables; no source read.

These run without langchain: the schemas and middleware here are funcware's own.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Sequence
from typing import Annotated, Any, Generic, TypeVar

import pytest
from harness import Driver, tool_calls
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, RemoveMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import StreamWriter
from typing_extensions import NotRequired, Required, get_type_hints

from funcware import (
    AgentMiddleware,
    AgentState,
    after_agent,
    after_model,
    before_agent,
    before_model,
    create_agent,
)
from funcware.errors import StateSchemaConflictWarning
from funcware.testing import ScriptedChatModel

# -- 1. the caller's state_schema wins ---------------------------------------------------

DELTA_WRITES: list[int] = []


def delta_reducer(state: list[AnyMessage] | None, writes: Sequence[Any]) -> list[AnyMessage]:
    """A batch reducer for DeltaChannel: add_messages over every write of the step."""
    DELTA_WRITES.append(len(writes))
    merged: list[AnyMessage] = list(state or [])
    for write in writes:
        merged = add_messages(merged, write)  # type: ignore[assignment, arg-type]
    return merged


class DeltaState(AgentState[Any]):
    messages: Required[Annotated[list[AnyMessage], DeltaChannel(delta_reducer)]]


REDUCED: list[int] = []


def counting_add_messages(left: Any, right: Any) -> Any:
    REDUCED.append(1)
    return add_messages(left, right)


class CountingState(AgentState[Any]):
    messages: Required[Annotated[list[AnyMessage], counting_add_messages]]


@tool
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


def _tool_loop_model() -> ScriptedChatModel:
    return ScriptedChatModel(responses=[tool_calls(("echo", {"text": "hi"})), "done"])


@before_model
def note(state: AgentState[Any]) -> dict[str, Any]:
    return {"messages": [HumanMessage(f"note {len(state['messages'])}")]}


def test_a_delta_channel_on_messages_runs_invoke_stream_and_a_checkpointer(
    driver: Driver,
) -> None:
    DELTA_WRITES.clear()
    agent = create_agent(
        _tool_loop_model(),
        [echo],
        middleware=[note],
        state_schema=DeltaState,
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "t1"}}

    chunks = driver.stream(agent, {"messages": [HumanMessage("hi")]}, config, stream_mode="values")
    final = chunks[-1]["messages"]
    assert [type(m).__name__ for m in final] == [
        "HumanMessage",
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "HumanMessage",
        "AIMessage",
    ]
    assert final[-1].content == "done"
    assert DELTA_WRITES, "the schema's DeltaChannel reducer was not used"

    # The checkpoint replays through the channel: the thread goes on where it was.
    agent2 = create_agent(
        ScriptedChatModel(responses=["again"]),
        [echo],
        middleware=[note],
        state_schema=DeltaState,
        checkpointer=agent.checkpointer,
    )
    result = driver.invoke(agent2, {"messages": [HumanMessage("more")]}, config)
    assert [m.content for m in result["messages"]][-3:] == ["more", "note 7", "again"]
    assert len(driver.get_state(agent2, config).values["messages"]) == 9


def test_a_delta_channel_takes_the_model_nodes_repair_of_invalid_tool_calls() -> None:
    broken = AIMessage(
        content="",
        invalid_tool_calls=[{"name": "echo", "args": "{", "id": "c1", "error": "bad json"}],
    )
    agent = create_agent(
        ScriptedChatModel(responses=[broken, "fixed"]), [echo], state_schema=DeltaState
    )

    # a jump back to the model after the broken call: answer it, then call again
    messages = agent.invoke({"messages": [HumanMessage("hi"), broken]})["messages"]

    assert [type(m).__name__ for m in messages][:3] == ["HumanMessage", "AIMessage", "ToolMessage"]
    assert messages[2].tool_call_id == "c1"


def test_a_custom_reducer_on_messages_given_by_the_caller_is_used(driver: Driver) -> None:
    REDUCED.clear()
    agent = create_agent(_tool_loop_model(), [echo], state_schema=CountingState)

    result = driver.invoke(agent, {"messages": [HumanMessage("hi")]})

    assert result["messages"][-1].content == "done"
    assert len(REDUCED) >= 3  # input, model, tool, model: all through the caller's reducer


def test_the_callers_schema_wins_over_a_middlewares_field() -> None:
    class CountState(AgentState[Any]):
        count: NotRequired[int]

    class TextCountState(AgentState[Any]):
        count: NotRequired[Annotated[list[str], operator.add]]

    @before_model(state_schema=CountState)
    def counts(state: CountState) -> None:
        return None

    agent = create_agent(
        ScriptedChatModel(responses=["ok"]), middleware=[counts], state_schema=TextCountState
    )

    hints = get_type_hints(agent.builder.state_schema, include_extras=True)
    assert hints["count"] == NotRequired[Annotated[list[str], operator.add]]


def test_a_clash_between_two_middleware_is_a_warning_naming_both() -> None:
    class IntState(AgentState[Any]):
        shared: NotRequired[int]

    class StrState(AgentState[Any]):
        shared: NotRequired[str]

    @before_model(state_schema=IntState)
    def first(state: IntState) -> None:
        return None

    @after_model(state_schema=StrState)
    def second(state: StrState) -> None:
        return None

    with pytest.warns(StateSchemaConflictWarning, match="'shared'") as caught:
        create_agent(ScriptedChatModel(responses=[]), middleware=[first, second])
    (warning,) = caught
    assert "middleware 'first'" in str(warning.message)
    assert "middleware 'second'" in str(warning.message)


ResultT = TypeVar("ResultT")


class GenericState(AgentState[ResultT], Generic[ResultT]):
    extra: NotRequired[int]


class GenericMiddleware(AgentMiddleware[GenericState[Any], Any, Any]):
    state_schema = GenericState

    def before_model(self, state: Any, runtime: Any) -> None:
        return None


def test_a_schema_generic_in_its_own_type_variable_is_not_a_structured_response_conflict() -> None:
    class Concrete(AgentState[int]):
        structured_response: NotRequired[int]

    @after_model(state_schema=Concrete)
    def concrete(state: Any) -> None:
        return None

    agent = create_agent(
        ScriptedChatModel(responses=["ok"]), middleware=[GenericMiddleware(), concrete]
    )

    assert "extra" in agent.builder.state_schema.__annotations__


# -- 2. node hooks get langgraph's injectable parameters ------------------------------------

SEEN: dict[str, Any] = {}


class InjectedClassHooks(AgentMiddleware[AgentState[Any], Any, Any]):
    def before_agent(
        self, state: AgentState[Any], runtime: Runtime[Any], config: RunnableConfig
    ) -> None:
        SEEN["before_agent"] = config["configurable"]["user"]

    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[Any], *, writer: StreamWriter
    ) -> None:
        writer({"from": "abefore_model"})
        SEEN["abefore_model"] = True

    def before_model(self, state: AgentState[Any], *, writer: StreamWriter) -> None:
        writer({"from": "before_model"})
        SEEN["before_model"] = True

    def after_model(self, state: AgentState[Any], store: BaseStore) -> None:
        SEEN["after_model"] = store.get(("ns",), "key")


@before_agent
def decorated_config(state: AgentState[Any], config: RunnableConfig) -> None:
    SEEN["decorated_config"] = config["configurable"]["user"]


@after_agent
async def decorated_async(
    state: AgentState[Any], *, runtime: Runtime[Any], store: BaseStore, writer: StreamWriter
) -> None:
    writer({"from": "decorated_async"})
    SEEN["decorated_async"] = (runtime.store is store, store.get(("ns",), "key"))


def test_hooks_get_config_writer_store_and_runtime_by_name(driver: Driver) -> None:
    SEEN.clear()
    store = InMemoryStore()
    store.put(("ns",), "key", {"v": 1})
    agent = create_agent(
        ScriptedChatModel(responses=["ok"]),
        middleware=[InjectedClassHooks(), decorated_config, decorated_async],
        store=store,
    )

    chunks = driver.stream(
        agent,
        {"messages": [HumanMessage("hi")]},
        {"configurable": {"user": "ada"}},
        stream_mode="custom",
    )

    assert SEEN["before_agent"] == "ada"
    assert SEEN["decorated_config"] == "ada"
    assert SEEN["after_model"].value == {"v": 1}
    assert SEEN["decorated_async"][0] is True
    assert SEEN["decorated_async"][1].value == {"v": 1}
    flavour = "abefore_model" if driver.is_async else "before_model"
    assert {"from": flavour} in chunks
    assert {"from": "decorated_async"} in chunks


def test_a_hook_with_only_state_is_called_with_only_state() -> None:
    class StateOnly(AgentMiddleware[AgentState[Any], Any, Any]):
        def before_model(self, state: AgentState[Any]) -> None:  # type: ignore[override]
            SEEN["state_only"] = len(state["messages"])

    SEEN.clear()
    create_agent(ScriptedChatModel(responses=["ok"]), middleware=[StateOnly()]).invoke(
        {"messages": [HumanMessage("hi")]}
    )
    assert SEEN["state_only"] == 1


def test_what_to_inject_is_decided_once_when_the_hook_is_read() -> None:
    impls = __import__("funcware.hooks.middleware", fromlist=["hook_impls"]).hook_impls
    found = impls(InjectedClassHooks())

    assert [name for name, _, _ in found["before_agent"].sync_call.extras] == ["config"]
    assert found["before_model"].sync_call.positional == 1
    assert [name for name, _, _ in found["before_model"].async_call.extras] == ["writer"]
    assert found["after_model"].sync_call.positional == 1
    assert [name for name, _, _ in found["after_model"].sync_call.extras] == ["store"]


def test_a_decorated_hook_needing_a_parameter_langgraph_cannot_give_is_refused() -> None:
    def needs_more(state: Any, runtime: Any, budget: int) -> None:
        return None

    with pytest.raises(TypeError, match=r"cannot use .*needs_more"):
        before_model(needs_more)


# -- 3. building reads no source file ---------------------------------------------------------


class SchemaState(AgentState[Any]):
    notes: NotRequired[list[str]]


class ClassWithSchema(AgentMiddleware[SchemaState, Any, Any]):
    state_schema = SchemaState

    def before_model(self, state: Any, runtime: Any) -> None:
        return None


def test_building_an_agent_never_reads_a_source_file(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> Any:
        raise AssertionError("a build read source code")

    monkeypatch.setattr(inspect, "getsourcelines", refuse)
    monkeypatch.setattr(inspect, "getsourcefile", refuse)
    monkeypatch.setattr(inspect, "findsource", refuse)

    agent = create_agent(
        ScriptedChatModel(responses=["ok"]), [echo], middleware=[ClassWithSchema()]
    )
    assert "notes" in agent.builder.state_schema.__annotations__


def test_a_class_location_is_still_reported_when_its_schema_clashes() -> None:
    class OtherState(AgentState[Any]):
        notes: NotRequired[int]

    @before_model(state_schema=OtherState)
    def other(state: Any) -> None:
        return None

    with pytest.warns(StateSchemaConflictWarning) as caught:
        create_agent(ScriptedChatModel(responses=[]), middleware=[ClassWithSchema(), other])
    (warning,) = caught
    assert f"{__file__}:" in str(warning.message)
    assert "middleware 'ClassWithSchema'" in str(warning.message)


def test_removing_all_messages_through_a_delta_channel_resets_the_history() -> None:
    @before_model
    def reset(state: AgentState[Any]) -> dict[str, Any] | None:
        if len(state["messages"]) > 1:
            return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage("fresh")]}
        return None

    agent = create_agent(
        ScriptedChatModel(responses=[tool_calls(("echo", {"text": "x"})), "end"]),
        [echo],
        middleware=[reset],
        state_schema=DeltaState,
    )
    messages = agent.invoke({"messages": [HumanMessage("hi")]})["messages"]
    assert [m.content for m in messages] == ["fresh", "end"]
