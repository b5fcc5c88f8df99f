"""Structured-output retries and bindings side by side with LangChain 1.5.

The same retry middleware (append feedback to ``request.messages``, call again after a
``StructuredOutputError``) leaves the same history on both; funcware's bindings build from
LangChain's schema spec objects as from its own.

Needs the ``langchain`` extra; skipped without it, failed when ``FUNCWARE_REQUIRE_LANGCHAIN=1``.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel
from support import call, calls_tool, require_langchain

import funcware
from funcware.structured_output import OutputToolBinding, ProviderStrategyBinding
from funcware.testing import ScriptedChatModel

lc_agents = require_langchain("langchain.agents")
lc_so = require_langchain("langchain.agents.structured_output")
lc_mw = require_langchain("langchain.agents.middleware")


class WeatherReport(BaseModel):
    """A weather report."""

    temperature: float
    conditions: str


def report(call_id: str, **args: Any) -> AIMessage:
    return calls_tool(call("WeatherReport", args, call_id))


def retry_middleware(library: str) -> Any:
    base = lc_mw.AgentMiddleware if library == "langchain" else funcware.AgentMiddleware
    error = (
        lc_so.StructuredOutputError if library == "langchain" else funcware.StructuredOutputError
    )

    class Retry(base):  # type: ignore[misc, valid-type]
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            for attempt in range(3):
                try:
                    return handler(request)
                except error as exc:
                    if attempt == 2:
                        raise
                    request.messages.append(HumanMessage(f"Error: {exc}. Please try again."))
            raise AssertionError("unreachable")

    return Retry()


def run(library: str) -> dict[str, Any]:
    builder = lc_agents.create_agent if library == "langchain" else funcware.create_agent
    strategies = lc_so if library == "langchain" else funcware
    agent = builder(
        model=ScriptedChatModel(
            responses=[
                report("1", temperature="warm", conditions="sunny"),
                report("2", temperature=72.5),
                report("3", temperature=72.5, conditions="sunny"),
            ]
        ),
        tools=[],
        middleware=[retry_middleware(library)],
        response_format=strategies.ToolStrategy(schema=WeatherReport, handle_errors=False),
        checkpointer=InMemorySaver(),
    )
    result: dict[str, Any] = agent.invoke(
        {"messages": [HumanMessage("weather?")]}, {"configurable": {"thread_id": "t"}}
    )
    return result


def shape(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(type(m).__name__, str(m.content)[:40]) for m in result["messages"]]


def test_a_validation_retry_leaves_the_same_history_as_on_langchain() -> None:
    ours, theirs = run("funcware"), run("langchain")
    assert shape(ours) == shape(theirs)
    assert ours["structured_response"] == theirs["structured_response"]
    assert sum(isinstance(m, HumanMessage) for m in ours["messages"]) == 3


@pytest.mark.parametrize("binding", [OutputToolBinding, ProviderStrategyBinding])
def test_bindings_build_from_langchains_schema_spec(binding: Any) -> None:
    spec = lc_so._SchemaSpec(WeatherReport)  # the argument LangChain's own code passes
    ours = binding.from_schema_spec(spec)
    theirs = getattr(lc_so, binding.__name__).from_schema_spec(spec)
    assert (ours.schema, ours.schema_kind) == (theirs.schema, theirs.schema_kind)
    if binding is OutputToolBinding:
        assert ours.tool.name == theirs.tool.name == "WeatherReport"
        assert ours.tool.args_schema == theirs.tool.args_schema
        args = {"temperature": 1.0, "conditions": "x"}
        assert ours.parse(args) == theirs.parse(args)
    else:
        answer = AIMessage('{"temperature": 1.0, "conditions": "x"}')
        assert ours.parse(answer) == theirs.parse(answer)


class Location(BaseModel):
    """A place."""

    city: str


def test_handle_errors_naming_langchains_exception_types_retries_funcwares_errors() -> None:
    agent = funcware.create_agent(
        ScriptedChatModel(
            responses=[
                report("1", temperature="warm"),
                report("2", temperature=1.0, conditions="x"),
            ]
        ),
        response_format=funcware.ToolStrategy(
            WeatherReport, handle_errors=(lc_so.StructuredOutputValidationError,)
        ),
    )
    result = agent.invoke({"messages": [HumanMessage("weather?")]})
    assert result["structured_response"] == WeatherReport(temperature=1.0, conditions="x")
    assert result["messages"][2].content.startswith("Error: Failed to parse")


def test_a_handle_errors_function_sees_langchains_exception_types() -> None:
    seen: list[type[Exception]] = []

    def message(exc: Exception) -> str:
        seen.append(type(exc))
        if isinstance(exc, lc_so.MultipleStructuredOutputsError):
            return "one answer, please"
        return "something else"

    both = calls_tool(
        call("WeatherReport", {"temperature": 1.0, "conditions": "x"}, "1"),
        call("Location", {"city": "Oslo"}, "2"),
    )
    agent = funcware.create_agent(
        ScriptedChatModel(responses=[both, report("3", temperature=1.0, conditions="x")]),
        response_format=funcware.ToolStrategy(WeatherReport | Location, handle_errors=message),
    )
    result = agent.invoke({"messages": [HumanMessage("weather?")]})
    assert [m.content for m in result["messages"][2:4]] == ["one answer, please"] * 2
    assert issubclass(seen[0], funcware.MultipleStructuredOutputsError)
