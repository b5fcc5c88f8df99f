"""Model-call counter: custom state that users see, plus a private field they do not.

Guarantee: ``model_calls`` equals the number of answers the model gave in the
thread (each counted once, in ``after_model``).

When to use: budgets, metrics, or any per-thread bookkeeping that must survive across
turns (with a checkpointer) and be readable by other hooks.

The middleware declares a ``state_schema``: ``model_calls`` is a normal field (it
shows in the result), ``last_seen`` is ``PrivateStateAttr`` (hooks read and write it,
callers never see it). A class is used here to keep the hook and its limit together.

How to adapt: raise ``limit``; jump to ``"end"`` instead of raising; count per tool.
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.runtime import Runtime

from funcware import AgentMiddleware, AgentState, PrivateStateAttr, create_agent
from funcware.testing import ScriptedChatModel


class CallCountState(AgentState, total=False):
    model_calls: int
    last_seen: Annotated[int, PrivateStateAttr]


class ModelCallCounter(AgentMiddleware[CallCountState]):
    """Counts model calls in ``model_calls``; remembers the history length privately."""

    state_schema = CallCountState
    reads = ("state.model_calls", "state.messages", "messages.history", "model.calls")
    writes = ("state.model_calls", "state.last_seen")

    def __init__(self, limit: int = 10) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValueError(
                f"ModelCallCounter(limit={limit!r}): give a whole number of model calls, 0 "
                "or more (a limit that is not a number would never be reached)."
            )
        self.limit = limit

    def after_model(self, state: CallCountState, runtime: Runtime[None]) -> dict[str, Any]:
        calls = state.get("model_calls", 0) + 1
        if calls > self.limit:
            raise RuntimeError(f"model call budget of {self.limit} exceeded")
        return {"model_calls": calls, "last_seen": len(state["messages"])}


@tool
def weather(city: str) -> str:
    """Current weather for a city."""
    return f"Sunny in {city}."


def demo() -> tuple[Any, dict[str, Any]]:
    """Two model calls (one tool round trip): the counter reaches 2."""
    model = ScriptedChatModel(
        responses=[
            AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "Oslo"}, "id": "w1"}]),
            "It is sunny in Oslo.",
        ]
    )
    agent = create_agent(model, [weather], middleware=[ModelCallCounter(limit=5)])
    state = agent.invoke({"messages": [HumanMessage("Weather in Oslo?")]})
    return agent, state


if __name__ == "__main__":
    print(demo()[1]["model_calls"])
