"""``wrap_agent_call`` runs around each run: invoke, ainvoke, stream, astream, batch, a
resume, a subagent; it may rewrite the request, retry (from the run's first checkpoint),
replace the result or raise; streams still stream through it; layers nest first outermost;
explain() and the run record show it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from funcware import (
    AgentMiddleware,
    AgentRequest,
    AgentResponse,
    before_model,
    create_agent,
    explain,
    wrap_agent_call,
)
from funcware.observe import record
from funcware.testing import ScriptedChatModel, StreamingScriptedChatModel

MODES = ["invoke", "ainvoke", "stream", "astream"]


def run(agent: Any, input: Any, config: Any = None, mode: str = "invoke") -> Any:
    """The run's result, however it is driven (a stream: its last values)."""
    if mode == "invoke":
        return agent.invoke(input, config)
    if mode == "ainvoke":
        return asyncio.run(agent.ainvoke(input, config))
    if mode == "stream":
        return list(agent.stream(input, config, stream_mode="values"))[-1]

    async def collect() -> Any:
        return [c async for c in agent.astream(input, config, stream_mode="values")][-1]

    return asyncio.run(collect())


def texts(messages: list[Any]) -> list[tuple[str, str]]:
    return [(type(m).__name__, str(m.content)) for m in messages]


def ask(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def add_call() -> AIMessage:
    return AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "c1"}])


@pytest.mark.parametrize("mode", MODES)
def test_layers_nest_first_outermost_around_each_run(mode: str) -> None:
    events: list[str] = []

    def layer(label: str) -> Any:
        @wrap_agent_call(name=label)
        def around(request: AgentRequest, handler: Any) -> AgentResponse:
            events.append(f"{label} in")
            response = handler(request)
            events.append(f"{label} out")
            return response

        return around

    agent = create_agent(
        ScriptedChatModel(responses=["a", "b"]), middleware=[layer("outer"), layer("inner")]
    )
    assert run(agent, ask("hi"), mode=mode)["messages"][-1].content == "a"
    assert run(agent, ask("hi"), mode=mode)["messages"][-1].content == "b"
    assert events == ["outer in", "inner in", "inner out", "outer out"] * 2


def test_batch_runs_each_input_through_the_wrap() -> None:
    seen: list[str] = []

    @wrap_agent_call
    def note(request: AgentRequest, handler: Any) -> AgentResponse:
        seen.append(request.input["messages"][0].content)
        return handler(request)

    agent = create_agent(ScriptedChatModel(responses=["x", "y"]), middleware=[note])
    results = agent.batch([ask("one"), ask("two")], {"max_concurrency": 1})
    assert sorted(seen) == ["one", "two"]
    assert sorted(r["messages"][-1].content for r in results) == ["x", "y"]


@pytest.mark.parametrize("mode", MODES)
def test_a_layer_rewrites_the_input_and_replaces_the_result(mode: str) -> None:
    @wrap_agent_call
    def rewrite(request: AgentRequest, handler: Any) -> AgentResponse:
        response = handler(request.override(input=ask("rewritten")))
        state = dict(response.result)
        state["messages"] = [*state["messages"], AIMessage("appended by the wrap")]
        return AgentResponse(state)

    model = ScriptedChatModel(responses=["answer"])
    agent = create_agent(model, middleware=[rewrite])
    result = run(agent, ask("original"), mode=mode)
    assert model.calls[0].messages[0].content == "rewritten"
    assert texts(result["messages"]) == [
        ("HumanMessage", "rewritten"),
        ("AIMessage", "answer"),
        ("AIMessage", "appended by the wrap"),
    ]


@pytest.mark.parametrize("mode", MODES)
def test_a_layer_changes_the_config_and_context(mode: str) -> None:
    seen: list[Any] = []

    class Tagger(AgentMiddleware):
        def wrap_agent_call(self, request: AgentRequest, handler: Any) -> AgentResponse:
            tags = [*request.config.get("tags", []), "wrapped"]
            config: RunnableConfig = {**request.config, "tags": tags}
            return handler(request.override(config=config, context={"tenant": "acme"}))

        def before_model(self, state: Any, runtime: Any, config: RunnableConfig) -> None:
            seen.append((config.get("tags"), runtime.context))

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[Tagger()])
    run(agent, ask("hi"), mode=mode)
    tags, context = seen[0]
    assert "wrapped" in tags and context == {"tenant": "acme"}


@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("history", [False, True], ids=["new thread", "thread with history"])
def test_a_retry_leaves_the_thread_with_one_clean_run(
    mode: str, history: bool, flavour: str
) -> None:
    retries: list[str] = []

    def sync_retry(request: AgentRequest, handler: Any) -> AgentResponse:
        try:
            return handler(request)
        except ConnectionError as exc:
            retries.append(str(exc))
            return handler(request)

    async def async_retry(request: AgentRequest, handler: Any) -> AgentResponse:
        try:
            return await handler(request)
        except ConnectionError as exc:
            retries.append(str(exc))
            return await handler(request)

    retry_once = wrap_agent_call(sync_retry if flavour == "sync" else async_retry)

    # The first attempt runs the tool, then fails on its second model call.
    script: list[Any] = ["earlier answer"] if history else []
    script += [add_call(), ConnectionError("provider down"), add_call(), "3"]
    agent = create_agent(
        ScriptedChatModel(responses=script),
        [add],
        middleware=[retry_once],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": f"{mode}-{history}-{flavour}"}}
    before = []
    if history:
        run(agent, ask("hello"), config, mode)
        before = [("HumanMessage", "hello"), ("AIMessage", "earlier answer")]
    result = run(agent, ask("1 + 2?"), config, mode)
    clean = [
        *before,
        ("HumanMessage", "1 + 2?"),
        ("AIMessage", ""),
        ("ToolMessage", "3"),
        ("AIMessage", "3"),
    ]
    assert retries == ["provider down"]
    assert texts(result["messages"]) == clean
    assert texts(agent.get_state(config).values["messages"]) == clean
    assert agent.get_state(config).next == ()  # no half-finished step


@pytest.mark.parametrize("mode", MODES)
def test_an_error_passes_through_and_a_layer_may_raise_its_own(mode: str) -> None:
    @wrap_agent_call
    def translate(request: AgentRequest, handler: Any) -> AgentResponse:
        try:
            return handler(request)
        except ConnectionError as exc:
            raise RuntimeError("the agent is unavailable") from exc

    agent = create_agent(
        ScriptedChatModel(responses=[ConnectionError("down")]), middleware=[translate]
    )
    with pytest.raises(RuntimeError, match="the agent is unavailable"):
        run(agent, ask("hi"), mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_a_layer_that_returns_no_response_is_named(mode: str) -> None:
    @wrap_agent_call
    def forgetful(request: AgentRequest, handler: Any) -> Any:
        handler(request)

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[forgetful])
    with pytest.raises(TypeError) as caught:
        run(agent, ask("hi"), mode=mode)
    message = str(caught.value)
    assert "middleware 'forgetful', hook wrap_agent_call" in message
    assert "test_wrap_agent_call.py:" in message and "return handler(request)" in message


def test_the_decorator_refuses_a_function_it_cannot_call() -> None:
    with pytest.raises(TypeError, match=r"called as f\(request, handler\)"):
        wrap_agent_call(lambda request: request)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_tokens_stream_through_the_wrap_as_they_come(mode: str) -> None:
    events: list[str] = []

    @wrap_agent_call
    def around(request: AgentRequest, handler: Any) -> AgentResponse:
        events.append("wrap in")
        response = handler(request)
        events.append("wrap out")
        return response

    model = StreamingScriptedChatModel(responses=["Hello there"], chunk_size=4)
    agent = create_agent(model, middleware=[around])
    if mode == "stream":
        for chunk, _ in agent.stream(ask("hi"), stream_mode="messages"):
            events.append(f"token {chunk.content!r}")
    else:

        async def consume() -> None:
            async for chunk, _ in agent.astream(ask("hi"), stream_mode="messages"):
                events.append(f"token {chunk.content!r}")

        asyncio.run(consume())
    tokens = [e for e in events if e.startswith("token") and e != "token ''"]
    assert tokens == ["token 'Hell'", "token 'o th'", "token 'ere'"]
    assert events[0] == "wrap in" and events[-1] == "wrap out"


@pytest.mark.parametrize("mode", MODES)
def test_a_paused_run_returns_through_the_wrap_and_the_resume_is_a_new_call(mode: str) -> None:
    responses: list[AgentResponse] = []
    inputs: list[Any] = []

    @wrap_agent_call
    def watch(request: AgentRequest, handler: Any) -> AgentResponse:
        inputs.append(request.input)
        response = handler(request)
        responses.append(response)
        return response

    class Approval(AgentMiddleware):
        def after_model(self, state: Any, runtime: Any) -> None:
            if interrupt("approve?") != "yes":
                raise AssertionError("not approved")

    agent = create_agent(
        ScriptedChatModel(responses=["done"]),
        middleware=[watch, Approval()],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": mode}}
    paused = run(agent, ask("hi"), config, mode)
    assert paused["__interrupt__"][0].value == "approve?"
    assert responses[0].interrupted and responses[0].interrupts[0].value == "approve?"
    finished = run(agent, Command(resume="yes"), config, mode)
    assert finished["messages"][-1].content == "done"
    assert isinstance(inputs[1], Command) and not responses[1].interrupted
    assert len(inputs) == 2


@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize("mode", MODES)
def test_class_layers_work_under_either_entry(flavour: str, mode: str) -> None:
    calls: list[str] = []

    class SyncOnly(AgentMiddleware):
        def wrap_agent_call(
            self, request: AgentRequest, handler: Callable[[AgentRequest], AgentResponse]
        ) -> AgentResponse:
            calls.append("sync")
            return handler(request)

    class AsyncOnly(AgentMiddleware):
        async def awrap_agent_call(
            self,
            request: AgentRequest,
            handler: Callable[[AgentRequest], Awaitable[AgentResponse]],
        ) -> AgentResponse:
            calls.append("async")
            return await handler(request)

    member = SyncOnly() if flavour == "sync" else AsyncOnly()
    agent = create_agent(ScriptedChatModel(responses=[add_call(), "3"]), [add], middleware=[member])
    assert run(agent, ask("1 + 2?"), mode=mode)["messages"][-1].content == "3"
    assert calls == [flavour]


def test_a_subagent_used_as_a_tool_runs_its_own_wrap() -> None:
    inner_runs: list[str] = []

    @wrap_agent_call
    def inner_wrap(request: AgentRequest, handler: Any) -> AgentResponse:
        inner_runs.append(request.input["messages"][0].content)
        return handler(request)

    researcher = create_agent(ScriptedChatModel(responses=["found it"]), middleware=[inner_wrap])

    @tool
    def research(question: str) -> str:
        """Ask the researcher."""
        return str(researcher.invoke(ask(question))["messages"][-1].content)

    call = AIMessage("", tool_calls=[{"name": "research", "args": {"question": "why?"}, "id": "r"}])
    agent = create_agent(ScriptedChatModel(responses=[call, "because"]), [research])
    result = agent.invoke(ask("go"))
    assert inner_runs == ["why?"]
    assert texts(result["messages"])[-2:] == [("ToolMessage", "found it"), ("AIMessage", "because")]


def test_a_subagent_as_a_graph_node_runs_its_own_wrap() -> None:
    from langgraph.graph import START, MessagesState, StateGraph

    runs: list[int] = []

    @wrap_agent_call
    def count(request: AgentRequest, handler: Any) -> AgentResponse:
        runs.append(1)
        return handler(request)

    sub = create_agent(ScriptedChatModel(responses=["sub answer"]), middleware=[count])
    parent = StateGraph(MessagesState)
    parent.add_node("sub", sub)
    parent.add_edge(START, "sub")
    result = parent.compile(checkpointer=InMemorySaver()).invoke(
        ask("hi"), {"configurable": {"thread_id": "parent"}}
    )
    assert runs == [1]
    assert result["messages"][-1].content == "sub answer"


def test_explain_and_the_run_record_show_the_layers() -> None:
    @wrap_agent_call
    def timing(request: AgentRequest, handler: Any) -> AgentResponse:
        return handler(request)

    @before_model
    def look(state: Any) -> None:
        return None

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[timing, look])
    assert "  agent call    timing ( run )" in str(explain(agent)).splitlines()
    with record() as recorded:
        agent.invoke(ask("hi"))
    layer = next(layer for layer in recorded.layers if layer.hook == "wrap_agent_call")
    assert (layer.middleware, layer.outcome, layer.handler_calls) == ("timing", "passed", 1)
    hook = next(layer for layer in recorded.layers if layer.hook == "before_model")
    assert hook.parent is layer  # what ran inside the wrap nests under it


def test_an_agent_without_layers_has_no_run_wrap() -> None:
    agent = create_agent(ScriptedChatModel(responses=["ok"]))
    assert not any(type(w).__name__ == "AgentCallWrap" for w in agent.run_wraps)  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_caller_that_stops_reading_ends_the_run_and_its_layers(mode: str) -> None:
    ended: list[str] = []

    @wrap_agent_call
    def around(request: AgentRequest, handler: Any) -> AgentResponse:
        try:
            return handler(request)
        finally:
            ended.append("layer ended")

    model = StreamingScriptedChatModel(responses=["Hello there", "again"], chunk_size=2)
    agent = create_agent(model, middleware=[around])
    if mode == "stream":
        for _ in agent.stream(ask("hi"), stream_mode="messages"):
            break
    else:

        async def first() -> None:
            chunks = agent.astream(ask("hi"), stream_mode="messages")
            async for _ in chunks:
                break
            await chunks.aclose()  # type: ignore[attr-defined]

        asyncio.run(first())
    deadline = time.monotonic() + 5
    while not ended and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ended == ["layer ended"]
    assert agent.invoke(ask("hi"))["messages"][-1].content == "again"  # the agent still runs


def test_a_subagent_node_retries_cleanly_under_its_parents_checkpointer() -> None:
    from langgraph.graph import START, MessagesState, StateGraph

    @wrap_agent_call
    def retry_once(request: AgentRequest, handler: Any) -> AgentResponse:
        try:
            return handler(request)
        except ConnectionError:
            return handler(request)

    script = [add_call(), ConnectionError("provider down"), add_call(), "3"]
    sub = create_agent(ScriptedChatModel(responses=script), [add], middleware=[retry_once])
    parent = StateGraph(MessagesState)
    parent.add_node("sub", sub)
    parent.add_edge(START, "sub")
    graph = parent.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "parent-retry"}}
    graph.invoke(ask("1 + 2?"), config)
    clean = [
        ("HumanMessage", "1 + 2?"),
        ("AIMessage", ""),
        ("ToolMessage", "3"),
        ("AIMessage", "3"),
    ]
    assert texts(graph.get_state(config).values["messages"]) == clean
