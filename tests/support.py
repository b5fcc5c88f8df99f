"""Helpers shared by test modules (fixtures live in conftest.py)."""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
from types import ModuleType
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolCall
from langchain_core.tools import tool

import funcware
from funcware import after_agent, after_model, before_agent, before_model

REQUIRE_LANGCHAIN = "FUNCWARE_REQUIRE_LANGCHAIN"
REQUIRE_DEEPAGENTS = "FUNCWARE_REQUIRE_DEEPAGENTS"
DEEPAGENTS_BUILDERS = ("deepagents.graph", "deepagents.middleware.subagents")
"""deepagents' modules that build agents with ``create_agent``."""

NODE_DECORATORS: dict[str, Any] = {
    "before_agent": before_agent,
    "before_model": before_model,
    "after_model": after_model,
    "after_agent": after_agent,
}
"""The four node-hook decorators by hook name."""


def funcware_notes(exc: BaseException) -> list[str]:
    """The notes on ``exc`` other than langgraph's own ("During task with name ...")."""
    return [n for n in getattr(exc, "__notes__", []) if not n.startswith("During task ")]


def hi() -> dict[str, Any]:
    """A fresh input: one human message (add_messages gives messages ids in place)."""
    return {"messages": [HumanMessage("hi")]}


def call(name: str, args: dict[str, Any], call_id: str) -> ToolCall:
    """A tool call as a model would make it."""
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def calls_tool(*tool_calls: ToolCall) -> AIMessage:
    """An AI message that makes these tool calls."""
    return AIMessage(content="", tool_calls=list(tool_calls))


class Runner:
    """Runs a compiled agent with ``invoke``/``stream`` or ``ainvoke``/``astream``."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.is_async = mode == "ainvoke"

    def __call__(self, agent: Any, inputs: dict[str, Any] | None = None) -> dict[str, Any]:
        inputs = inputs if inputs is not None else hi()
        if self.is_async:
            result: dict[str, Any] = asyncio.run(agent.ainvoke(inputs))
        else:
            result = agent.invoke(inputs)
        return result

    def stream(self, agent: Any, inputs: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Every ``stream_mode="updates"`` chunk, in order."""
        inputs = inputs if inputs is not None else hi()
        if not self.is_async:
            return list(agent.stream(inputs, stream_mode="updates"))

        async def collect() -> list[dict[str, Any]]:
            return [chunk async for chunk in agent.astream(inputs, stream_mode="updates")]

        return asyncio.run(collect())


def require_langchain(module: str) -> ModuleType:
    """Import a LangChain module; skip the test file without it (fail if CI requires it)."""
    if os.environ.get(REQUIRE_LANGCHAIN) != "1":
        return pytest.importorskip(
            module, reason="the LangChain interop tests need the `langchain` extra"
        )
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        problem = exc
    pytest.fail(
        f"{REQUIRE_LANGCHAIN}=1 but {module} cannot be imported ({problem}); "
        "install the extra: pip install -e '.[langchain]'",
        pytrace=False,
    )


def require_deepagents(module: str = "deepagents") -> ModuleType:
    """Import a deepagents module; skip the test file without it (fail if CI requires it)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if os.environ.get(REQUIRE_DEEPAGENTS) == "1":
            raise AssertionError(
                f"{REQUIRE_DEEPAGENTS}=1 but deepagents is not installed "
                "(pip install -e '.[deepagents]')"
            ) from exc
        pytest.skip(
            f"deepagents is not installed ({exc}); pip install -e '.[deepagents]' "
            f"(Python 3.11+; this is {sys.version.split()[0]})",
            allow_module_level=True,
        )


def build_deep_agents_on_funcware(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """deepagents builds with funcware's create_agent (until the test ends); the agents it built."""
    built: list[Any] = []

    def create_agent(*args: Any, **kwargs: Any) -> Any:
        agent = funcware.create_agent(*args, **kwargs)
        built.append(agent)
        return agent

    for name in DEEPAGENTS_BUILDERS:
        module = importlib.import_module(name)
        assert hasattr(module, "create_agent"), f"{name} no longer imports create_agent"
        monkeypatch.setattr(module, "create_agent", create_agent)
    return built


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


class QuotaExceeded(Exception):
    """A user's own exception type, with a field of its own."""

    def __init__(self, message: str, remaining: int = 0) -> None:
        super().__init__(message)
        self.remaining = remaining
