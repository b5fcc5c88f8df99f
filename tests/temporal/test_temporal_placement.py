"""Where each step of an agent runs on Temporal follows from what its middleware declares;
a hook the workflow could not replay is refused at build, naming it, its file:line and the
fix. (``placement()`` only reads the agent: these tests need no Temporal.)"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from funcware import (
    AgentMiddleware,
    after_model,
    before_model,
    compose,
    create_agent,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.temporal import NondeterministicHookError, placement
from funcware.testing import ScriptedChatModel


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return key


@before_model(reads=["messages.history"], writes=["state.turns"])
def declared(state: Any) -> None:
    return None


@before_model
def undeclared(state: Any) -> None:
    return None


class Declares(AgentMiddleware):
    reads = ("messages.latest",)

    def after_model(self, state: Any, runtime: Any) -> None:
        return None


class Silent(AgentMiddleware):
    def after_model(self, state: Any, runtime: Any) -> None:
        return None


@wrap_model_call
def outer(request: Any, handler: Any) -> Any:
    return handler(request)


@wrap_model_call
def inner(request: Any, handler: Any) -> Any:
    return handler(request)


@wrap_tool_call
def around_tool(request: Any, handler: Any) -> Any:
    return handler(request)


def build(*middleware: Any) -> Any:
    model = ScriptedChatModel(responses=[AIMessage("hi")])
    return create_agent(model, [lookup], middleware=list(middleware))


def test_declared_hooks_run_in_the_workflow_the_rest_as_activities() -> None:
    agent = build(declared, undeclared, Declares(), Silent(), compose(outer, inner), around_tool)
    placed = placement(agent)
    assert {s.node: s.where for s in placed.steps} == {
        "model": "activity",
        "tools": "activity",
        "declared.before_model": "workflow",
        "undeclared.before_model": "activity",
        "Declares.after_model": "workflow",
        "Silent.after_model": "activity",
    }
    model = next(s for s in placed.steps if s.node == "model")
    tools = next(s for s in placed.steps if s.node == "tools")
    assert model.layers == ("outer", "inner") and tools.layers == ("around_tool",)
    assert "declares no effects: may do I/O" in str(placed)
    assert "model  " in str(placed) and "(inside: outer, inner)" in str(placed)


def test_activity_and_workflow_override_the_declarations() -> None:
    placed = placement(build(declared, Silent()), activity=["declared"], workflow=[])
    assert placed.where("declared.before_model") == "activity"
    with pytest.raises(ValueError, match=r"names \['nope'\].*its middleware: Silent, declared"):
        placement(build(declared, Silent()), workflow=["nope"])
    with pytest.raises(TypeError, match=r"write activity=\['declared'\]"):
        placement(build(declared), activity="declared")


def test_a_hook_with_a_deadline_is_refused_in_the_workflow() -> None:
    @before_model(reads=["messages.history"], timeout=2.0)
    def hurried(state: Any) -> None:
        return None

    line = hurried.__wrapped__.__code__.co_firstlineno
    with pytest.raises(NondeterministicHookError) as refused:
        placement(build(hurried))
    message = str(refused.value)
    assert "middleware 'hurried', hook before_model" in message
    assert f"{__file__}:{line}" in message
    assert "timeout=2" in message and "wall clock" in message
    assert "activity=['hurried']" in message  # the fix
    assert (
        placement(build(hurried), activity=["hurried"]).where("hurried.before_model") == "activity"
    )


def test_an_undeclared_hook_forced_into_the_workflow_is_refused() -> None:
    with pytest.raises(NondeterministicHookError) as refused:
        placement(build(undeclared), workflow=["undeclared"])
    message = str(refused.value)
    assert "middleware 'undeclared', hook before_model" in message
    assert "declares no effects" in message and "reads=[...], writes=[...]" in message
    silent = build(Silent())
    with pytest.raises(NondeterministicHookError, match="middleware 'Silent', hook after_model"):
        placement(silent, workflow=["Silent"])


def test_placement_takes_only_what_create_agent_built() -> None:
    with pytest.raises(TypeError, match="pass create_agent"):
        placement([declared])


def test_after_model_hooks_and_an_agent_without_tools() -> None:
    @after_model(reads=["messages.latest"], can_jump_to=["end"])
    def stop(state: Any) -> None:
        return None

    agent = create_agent(ScriptedChatModel(responses=["hi"]), middleware=[stop])
    assert [(s.node, s.where) for s in placement(agent).steps] == [
        ("model", "activity"),
        ("stop.after_model", "workflow"),
    ]
