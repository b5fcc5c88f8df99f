"""Middleware chosen per run through ``config["configurable"]["funcware"]``: switched off,
added by name (registered off by default) or as objects; wrap-style middleware switch
without a rebuild, other stacks get a graph built once and reused; required middleware
cannot be switched off; the checks apply to the stack that runs; explain shows it."""

from __future__ import annotations

import asyncio
import re
from importlib import import_module
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from funcware import (
    AgentMiddleware,
    AgentRequest,
    AgentResponse,
    MiddlewareOrderError,
    RunConfigError,
    before_model,
    create_agent,
    explain,
    wrap_agent_call,
    wrap_model_call,
)
from funcware.testing import ScriptedChatModel

MODES = ["invoke", "ainvoke", "stream", "astream"]
agent_module = import_module("funcware.compose.agent")


def run(agent: Any, input: Any, config: Any = None, mode: str = "invoke") -> Any:
    if mode == "invoke":
        return agent.invoke(input, config)
    if mode == "ainvoke":
        return asyncio.run(agent.ainvoke(input, config))
    if mode == "stream":
        return list(agent.stream(input, config, stream_mode="values"))[-1]

    async def collect() -> Any:
        return [c async for c in agent.astream(input, config, stream_mode="values")][-1]

    return asyncio.run(collect())


def ask(text: str = "hi") -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


def choose(**choice: Any) -> dict[str, Any]:
    return {"configurable": {"funcware": choice}}


class Stack:
    """A stack whose hooks write down that they ran."""

    def __init__(self) -> None:
        self.log: list[str] = []
        log = self.log

        @before_model(per_run="required")
        def guard(state: Any) -> None:
            log.append("guard")

        @wrap_model_call(per_run="on")
        def tracer(request: Any, handler: Any) -> Any:
            log.append("tracer")
            return handler(request)

        @wrap_model_call(per_run="off")
        def audit(request: Any, handler: Any) -> Any:
            log.append("audit")
            return handler(request)

        @before_model
        def trim(state: Any) -> None:
            log.append("trim")

        @wrap_agent_call(per_run="off")
        def timing(request: AgentRequest, handler: Any) -> AgentResponse:
            log.append("timing")
            return handler(request)

        self.middleware = [guard, tracer, audit, trim, timing]

    def take(self) -> list[str]:
        taken = list(self.log)
        self.log.clear()
        return taken


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many graphs were built for stacks runs chose."""
    counted: list[int] = []
    real = agent_module.create_agent

    def counting(*args: Any, **kwargs: Any) -> Any:
        counted.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(agent_module, "create_agent", counting)
    return counted


@pytest.mark.parametrize("mode", MODES)
def test_wrap_style_middleware_switch_per_run_without_a_rebuild(
    mode: str, builds: list[int]
) -> None:
    stack = Stack()
    agent = create_agent(ScriptedChatModel(responses=["a", "b", "c"]), middleware=stack.middleware)
    run(agent, ask(), mode=mode)
    assert stack.take() == ["guard", "trim", "tracer"]  # audit and timing are off by default
    run(agent, ask(), choose(disable=["tracer"], add=["audit", "timing"]), mode)
    assert stack.take() == ["timing", "guard", "trim", "audit"]
    run(agent, ask(), mode=mode)
    assert stack.take() == ["guard", "trim", "tracer"]  # the choice was for one run only
    assert builds == []


@pytest.mark.parametrize("mode", MODES)
def test_switching_a_node_hook_builds_a_graph_once_per_stack(mode: str, builds: list[int]) -> None:
    stack = Stack()
    agent = create_agent(ScriptedChatModel(responses=["a"] * 4), middleware=stack.middleware)
    no_trim = choose(disable=["trim"])
    run(agent, ask(), no_trim, mode)
    run(agent, ask(), no_trim, mode)
    assert stack.take() == ["guard", "tracer"] * 2
    assert builds == [1]
    run(agent, ask(), choose(disable=["trim", "tracer"]), mode)
    assert stack.take() == ["guard"]
    assert builds == [1, 1]  # another stack, another graph
    run(agent, ask(), mode=mode)
    assert stack.take() == ["guard", "trim", "tracer"]


def test_an_agent_that_declares_nothing_still_switches_per_run() -> None:
    log: list[str] = []

    @wrap_model_call
    def noisy(request: Any, handler: Any) -> Any:
        log.append("noisy")
        return handler(request)

    agent = create_agent(ScriptedChatModel(responses=["a", "b"]), middleware=[noisy])
    agent.invoke(ask(), choose(disable=["noisy"]))
    assert log == []
    agent.invoke(ask())
    assert log == ["noisy"]


@pytest.mark.parametrize("mode", MODES)
def test_a_run_adds_an_in_process_middleware(mode: str) -> None:
    stack = Stack()
    seen: list[int] = []

    class CountMessages(AgentMiddleware):
        def before_model(self, state: Any, runtime: Any) -> None:
            seen.append(len(state["messages"]))

    agent = create_agent(ScriptedChatModel(responses=["a", "b"]), middleware=stack.middleware)
    counter = CountMessages()
    run(agent, ask(), choose(add=[counter]), mode)
    assert seen == [1] and stack.take() == ["guard", "trim", "tracer"]
    run(agent, ask(), mode=mode)
    assert seen == [1]


def test_a_required_middleware_cannot_be_switched_off() -> None:
    stack = Stack()
    agent = create_agent(ScriptedChatModel(responses=["a"]), middleware=stack.middleware)
    with pytest.raises(RunConfigError) as caught:
        agent.invoke(ask(), choose(disable=["guard"]))
    message = str(caught.value)
    assert "middleware 'guard' (" in message and "test_per_run.py:" in message
    assert "per_run='required'" in message and '["disable"]' in message
    assert stack.take() == []


@pytest.mark.parametrize(
    ("choice", "words"),
    [
        ({"disable": ["nope"]}, "no middleware of that name (its middleware: 'guard'"),
        ({"disable": "tracer"}, 'give a list (of names): "disable": ["name"]'),
        ({"remove": ["tracer"]}, 'give a dict with "disable"'),
        ({"disable": ["tracer"], "add": ["tracer"]}, "both disables and adds 'tracer'"),
        ({"add": [42]}, "give the name of a middleware registered on the agent"),
    ],
)
def test_a_malformed_choice_is_a_clear_error(choice: dict[str, Any], words: str) -> None:
    agent = create_agent(ScriptedChatModel(responses=["a"]), middleware=Stack().middleware)
    with pytest.raises(RunConfigError, match=re.escape(words)):
        agent.invoke(ask(), {"configurable": {"funcware": choice}})


def test_the_order_checks_apply_to_the_stack_that_runs() -> None:
    @wrap_model_call(position="outermost")
    def first(request: Any, handler: Any) -> Any:
        return handler(request)

    agent = create_agent(ScriptedChatModel(responses=["a"]), middleware=Stack().middleware)
    with pytest.raises(MiddlewareOrderError, match="first"):
        agent.invoke(ask(), choose(add=[first]))


def test_the_declared_option_is_checked_where_it_is_given() -> None:
    with pytest.raises(TypeError, match=r"per_run='sometimes'.*'required'"):

        @wrap_model_call(per_run="sometimes")  # type: ignore[arg-type]
        def odd(request: Any, handler: Any) -> Any:
            return handler(request)


@pytest.mark.parametrize("mode", MODES)
def test_a_paused_run_resumes_with_its_choice(mode: str) -> None:
    stack = Stack()

    class Approval(AgentMiddleware):
        def after_model(self, state: Any, runtime: Any) -> None:
            if interrupt("approve?") != "yes":
                raise AssertionError("not approved")

    agent = create_agent(
        ScriptedChatModel(responses=["done"]),
        middleware=[*stack.middleware, Approval()],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": mode, "funcware": {"disable": ["trim", "tracer"]}}}
    paused = run(agent, ask(), config, mode)
    assert paused["__interrupt__"][0].value == "approve?"
    finished = run(agent, Command(resume="yes"), config, mode)
    assert finished["messages"][-1].content == "done"
    assert stack.take() == ["guard"]
    state = agent.get_state({"configurable": {"thread_id": mode}})
    assert [m.content for m in state.values["messages"]] == ["hi", "done"]


def test_a_subagent_does_not_inherit_the_choice() -> None:
    inner_log: list[str] = []

    @wrap_model_call
    def inner_tracer(request: Any, handler: Any) -> Any:
        inner_log.append("inner")
        return handler(request)

    researcher = create_agent(ScriptedChatModel(responses=["found"]), middleware=[inner_tracer])

    @tool
    def research(question: str) -> str:
        """Ask the researcher."""
        return str(researcher.invoke(ask(question))["messages"][-1].content)

    stack = Stack()
    call = AIMessage("", tool_calls=[{"name": "research", "args": {"question": "q"}, "id": "r"}])
    agent = create_agent(
        ScriptedChatModel(responses=[call, "ok"]), [research], middleware=stack.middleware
    )
    result = agent.invoke(ask(), choose(disable=["tracer"]))
    assert result["messages"][-1].content == "ok" and inner_log == ["inner"]


def test_explain_shows_the_stack_a_run_gets() -> None:
    agent = create_agent(ScriptedChatModel(responses=["a"]), middleware=Stack().middleware)
    default = str(explain(agent, run={})).splitlines()[0]
    assert default == "3 middleware: guard, tracer, trim"
    chosen = str(explain(agent, run=choose(disable=["tracer"], add=["audit"])))
    assert chosen.splitlines()[0] == "3 middleware: guard, audit, trim"
    assert "  model call    audit ( model )" in chosen.splitlines()
