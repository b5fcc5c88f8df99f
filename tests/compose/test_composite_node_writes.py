"""A composite run as one node folds its members' writes with the agent's reducers."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command
from typing_extensions import NotRequired, TypedDict

from funcware import AgentState, before_model, compose
from funcware.compose.stream.quiet import runnable_config


def _joined(left: list[str] | None, right: list[str]) -> list[str]:
    return [*(left or []), *right]


class Logged(AgentState):
    log: NotRequired[Annotated[list[str], operator.add]]


seen: list[Any] = []


@before_model(state_schema=Logged)
def first(state: Any) -> dict[str, Any]:
    return {"log": ["first"], "tags": ["a"], "count": 1}


@before_model(state_schema=Logged)
def second(state: Any) -> Command[Any]:
    seen.append((list(state.get("log", [])), list(state.get("tags", [])), state.get("count")))
    return Command(update={"log": ["second"], "tags": ["b"], "count": 2})


def test_alone_each_member_sees_every_reducer_key_reduced() -> None:
    seen.clear()
    update = compose(first, second).before_model(
        {"messages": [HumanMessage("hi")], "log": ["old"]}, None
    )
    # log is a reducer key of the members' schemas: reduced, and both writes kept;
    # tags and count are plain keys as far as the composite can tell: the last write wins
    assert seen == [(["old", "first"], ["a"], 1)]
    assert isinstance(update, Command)
    assert update.update == [("log", ["first"]), ("log", ["second"]), ("tags", ["b"]), ("count", 2)]


class GraphState(TypedDict):
    messages: list[Any]
    log: NotRequired[Annotated[list[str], operator.add]]
    tags: NotRequired[Annotated[list[str], _joined]]
    count: NotRequired[int]


def _graph(node: Any) -> Any:
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(GraphState)
    graph.add_node("both", node)
    graph.add_edge(START, "both")
    graph.add_edge("both", END)
    return graph.compile()


def test_in_a_graph_the_graphs_reducers_are_used() -> None:
    seen.clear()
    stack = compose(first, second)
    result = _graph(lambda state: stack.before_model(state, None)).invoke(
        {"messages": [], "log": ["old"], "tags": ["t"]}
    )
    # tags has a reducer only in the graph's own schema: the second member sees it reduced
    # and no write is lost
    assert seen == [(["old", "first"], ["t", "a"], 1)]
    assert result["log"] == ["old", "first", "second"]
    assert result["tags"] == ["t", "a", "b"]
    assert result["count"] == 2


async def test_async_members_fold_the_same_way() -> None:
    seen.clear()
    stack = compose(first, second)

    async def node(state: Any, config: RunnableConfig) -> Any:
        with runnable_config(config):  # as funcware's nodes do on Python 3.10
            return await stack.abefore_model(state, None)

    result = await _graph(node).ainvoke({"messages": [], "tags": ["t"]})
    assert seen == [(["first"], ["t", "a"], 1)]
    assert result["tags"] == ["t", "a", "b"]


def _batched(state: list[Any] | None, writes: list[list[Any]]) -> list[Any]:
    return add_messages(list(state or []), [m for batch in writes for m in batch])


class DeltaState(TypedDict):
    messages: Annotated[list[Any], DeltaChannel(_batched)]


@before_model
def greet(state: Any) -> dict[str, Any]:
    return {"messages": [HumanMessage("hello")]}


@before_model
def count(state: Any) -> dict[str, Any]:
    return {"messages": [HumanMessage(f"{len(state['messages'])} so far")]}


def test_a_delta_channel_on_messages_folds_each_write_as_a_batch() -> None:
    stack = compose(greet, count)
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(DeltaState)
    graph.add_node("both", lambda state: stack.before_model(state, None))
    graph.add_edge(START, "both")
    graph.add_edge("both", END)
    result = graph.compile().invoke({"messages": [HumanMessage("hi")]})
    assert [m.text for m in result["messages"]] == ["hi", "hello", "2 so far"]
