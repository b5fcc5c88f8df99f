"""Tool selection: offer the model only the tools the current task needs.

Guarantee: with a ``toolset`` in the state, every model call is offered only that
group's tools.

When to use: an agent with many tools confuses the model and spends tokens on tool
schemas it will never use. The caller (or an earlier hook) knows which group of tools
fits the task; give the model that group only.

The middleware adds a ``toolset`` field to the state (``state_schema``), so the caller
can pass ``{"messages": [...], "toolset": "math"}``. Before each model call it keeps, in
``request.tools``, only the tools named in ``TOOLSETS[toolset]`` and hands the narrowed
request to ``handler``. The request's list is its own: the agent still knows every tool,
and the next call (or run) starts again from the full list. Without a ``toolset``, the
model sees every tool.

How to adapt: pick the group from keywords in the last human message
(``request.messages[-1].text``); have a small, cheap model choose the tools; set
``toolset`` from an earlier hook (a ``before_model`` that classifies the request); also
refuse, in a ``wrap_tool_call``, calls to tools outside the group (a model can still ask
for a tool it has seen earlier in the conversation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import BaseTool, tool

from funcware import AgentState, ModelRequest, ModelResponse, create_agent, wrap_model_call
from funcware.testing import ScriptedChatModel

TOOLSETS: dict[str, frozenset[str]] = {
    "math": frozenset({"add", "multiply"}),
    "travel": frozenset({"forecast", "find_flights"}),
}


class ToolsetState(AgentState[Any], total=False):
    toolset: str


def _tool_name(tool: BaseTool | dict[str, Any]) -> str:
    if isinstance(tool, BaseTool):
        return tool.name
    return str(tool.get("function", tool).get("name", "?"))


@wrap_model_call(
    state_schema=ToolsetState,
    reads=["state.toolset", "request.tools"],
    writes=["request.tools"],
)
def select_tools(
    request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
) -> ModelResponse[Any]:
    """Narrow ``request.tools`` to the group named by ``state["toolset"]``, if any."""
    toolset = request.state.get("toolset")
    if toolset is None:
        return handler(request)
    if toolset not in TOOLSETS:
        raise ValueError(f"unknown toolset {toolset!r}; known: {', '.join(TOOLSETS)}")
    wanted = TOOLSETS[toolset]
    return handler(request.override(tools=[t for t in request.tools if _tool_name(t) in wanted]))


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@tool
def forecast(city: str) -> str:
    """Tomorrow's weather for a city."""
    return f"Rain in {city}."


@tool
def find_flights(origin: str, destination: str) -> str:
    """Flights between two cities."""
    return f"Two flights from {origin} to {destination}."


def demo() -> tuple[Any, dict[str, Any]]:
    """Four tools, toolset "math": both model calls see only add and multiply."""
    model = ScriptedChatModel(
        responses=[
            AIMessage("", tool_calls=[{"name": "multiply", "args": {"a": 6, "b": 7}, "id": "m1"}]),
            "6 x 7 = 42.",
        ]
    )
    agent = create_agent(model, [add, multiply, forecast, find_flights], middleware=[select_tools])
    state = agent.invoke({"messages": [HumanMessage("What is 6 times 7?")], "toolset": "math"})
    assert [sorted(call.tool_names) for call in model.calls] == [["add", "multiply"]] * 2
    return agent, state


if __name__ == "__main__":
    print(demo()[1]["messages"][-1].content)
