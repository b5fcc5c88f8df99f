"""Middleware written for LangChain that writes undeclared state keys runs as on LangChain.

The class below is written the way published packages write theirs: it derives from
LangChain's ``AgentMiddleware``, declares no ``state_schema``, and returns keys of its own
from a node hook, a model wrap's command and a tool wrap's command. On LangChain the writes
are dropped silently; on funcware the run goes the same way and each (hook, key) warns once.

Needs the ``langchain`` extra; skipped without it, failed when ``FUNCWARE_REQUIRE_LANGCHAIN=1``.
"""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.types import Command
from support import call, calls_tool, require_langchain

import funcware
from funcware.testing import ScriptedChatModel

lc_agents = require_langchain("langchain.agents")
lc_mw = require_langchain("langchain.agents.middleware")


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


class UsageTracker(lc_mw.AgentMiddleware):  # type: ignore[misc,name-defined]
    """Counts turns and remembers the last tool, in keys no schema declares."""

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any]:
        turns = state.get("tracker_turns", 0) + 1
        return {"tracker_turns": turns, "messages": [HumanMessage(f"turn {turns}")]}

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        response = handler(request)
        return lc_mw.ExtendedModelResponse(
            model_response=response, command=Command(update={"tracker_calls": 1})
        )

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        response = await handler(request)
        return lc_mw.ExtendedModelResponse(
            model_response=response, command=Command(update={"tracker_calls": 1})
        )

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        result = handler(request)
        return Command(update={"messages": [result], "tracker_last_tool": "echo"})

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        result = await handler(request)
        return Command(update={"messages": [result], "tracker_last_tool": "echo"})


def run(side: str, mode: str) -> tuple[dict[str, Any], list[str]]:
    make = funcware.create_agent if side == "funcware" else lc_agents.create_agent
    model = ScriptedChatModel(responses=[calls_tool(call("echo", {"text": "x"}, "e1")), "done"])
    agent = make(model, [echo], middleware=[UsageTracker()])
    inputs = {"messages": [HumanMessage("hi")]}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = asyncio.run(agent.ainvoke(inputs)) if mode == "ainvoke" else agent.invoke(inputs)
    texts = [
        str(w.message) for w in seen if issubclass(w.category, funcware.UnknownStateKeyWarning)
    ]
    return result, texts


def shape(result: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(type(m).__name__, m.content) for m in result["messages"]]


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_the_run_matches_langchains_and_warns_once_per_hook_and_key(mode: str) -> None:
    ours, warned = run("funcware", mode)
    theirs, silent = run("langchain", mode)
    assert shape(ours) == shape(theirs)
    assert shape(ours)[-1] == ("AIMessage", "done")
    assert sorted(ours) == sorted(theirs) == ["messages"]
    assert silent == []
    written = {
        ("before_model", "tracker_turns"),
        ("wrap_model_call", "tracker_calls"),
        ("wrap_tool_call", "tracker_last_tool"),
    }
    assert len(warned) == len(written)
    for hook, key in written:
        [text] = [t for t in warned if f"hook {hook} " in t and f"'{key}'" in t]
        assert text.startswith("middleware 'UsageTracker'")
        assert __file__ in text and "Declare it in a state_schema" in text


def test_effects_strict_refuses_what_langchain_drops() -> None:
    model = ScriptedChatModel(responses=["done"])
    agent = funcware.create_agent(model, middleware=[UsageTracker()], effects="strict")
    with pytest.raises(funcware.UnknownStateKeyError, match="'tracker_turns'"):
        agent.invoke({"messages": [HumanMessage("hi")]})
