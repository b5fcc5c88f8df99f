"""Schema tool: a tool given only as a JSON schema, answered by a wrap_tool_call hook.

Guarantee: every ``get_weather`` call that reaches the tools is answered by the hook,
never by the tool node's "no implementation" error.

When to use: the tool's implementation does not fit a Python function the agent can own
— it lives behind a service client the middleware already holds, it is generated from an
OpenAPI document, or several tools share one dispatcher. The model only needs the schema.

A dict passed in ``create_agent(tools=[...])`` is bound to the model as it is, but the
agent has nothing to run for it. The ``wrap_tool_call`` hook looks at the call's name:
for ``get_weather`` it builds the ``ToolMessage`` itself and never calls ``handler``;
any other call goes on inward to the real tool. (A schema tool nobody answers yields an
error ``ToolMessage`` that says so, rather than a crash.)

How to adapt: put several schemas in ``SCHEMAS`` and dispatch on the name to a table of
functions; validate ``args`` against the schema before serving; return
``status="error"`` when the backend fails so the model can recover.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command

from funcware import ToolCallRequest, create_agent, wrap_tool_call
from funcware.testing import ScriptedChatModel

WEATHER_SCHEMA: dict[str, Any] = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name, e.g. 'Paris'."},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
}

FORECASTS = {"paris": 18, "oslo": 4}
"""The (pretend) weather backend: degrees Celsius by city."""


def _weather(city: str, unit: str = "celsius") -> str:
    celsius = FORECASTS.get(city.lower())
    if celsius is None:
        return f"No weather data for {city}."
    if unit == "fahrenheit":
        return f"{celsius * 9 / 5 + 32:.0f}°F and cloudy in {city}."
    return f"{celsius}°C and cloudy in {city}."


@wrap_tool_call(reads=["tool.args"], writes=["handler.skip"])
def serve_weather(
    request: ToolCallRequest,
    handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
) -> ToolMessage | Command[Any]:
    """Answer ``get_weather`` calls here; let every other tool call through."""
    call = request.tool_call
    if call["name"] != WEATHER_SCHEMA["name"]:
        return handler(request)
    args = call["args"]
    return ToolMessage(
        content=_weather(str(args.get("city", "")), str(args.get("unit", "celsius"))),
        name=call["name"],
        tool_call_id=call["id"],
    )


@tool
def local_time(city: str) -> str:
    """Local time in a city."""
    return f"It is 14:00 in {city}."


def demo() -> tuple[Any, dict[str, Any]]:
    """The model calls the schema tool and a normal tool; the hook answers the first."""
    model = ScriptedChatModel(
        responses=[
            AIMessage(
                "",
                tool_calls=[
                    {"name": "get_weather", "args": {"city": "Paris"}, "id": "w1"},
                    {"name": "local_time", "args": {"city": "Paris"}, "id": "t1"},
                ],
            ),
            "In Paris it is 14:00, 18°C and cloudy.",
        ]
    )
    agent = create_agent(model, [WEATHER_SCHEMA, local_time], middleware=[serve_weather])
    state = agent.invoke({"messages": [HumanMessage("Weather and time in Paris?")]})
    return agent, state


if __name__ == "__main__":
    for message in demo()[1]["messages"]:
        print(f"{message.type}: {message.text}")
