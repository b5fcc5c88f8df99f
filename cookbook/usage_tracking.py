"""Usage tracking: add up token usage in the state from a wrap_model_call hook.

Guarantee: ``usage`` holds the sum of the ``usage_metadata`` of every model answer
the hook sees.

When to use: cost reporting, per-thread token budgets, or metrics that other hooks (and
the caller) read from the state rather than from logs.

A ``wrap_model_call`` hook sees the model's answer but cannot return a state update
the way node hooks do. It returns ``ExtendedModelResponse(response, Command(update=...))``
instead: the response goes on as usual and the command's update is written to the state
with it. The hook reads each ``AIMessage``'s ``usage_metadata``, adds it to the running
total found in ``request.state`` and writes the new total to ``usage``, a field the
middleware declares in its ``state_schema``.

How to adapt: keep totals per model name (``request.model``); refuse the call (return
an ``AIMessage`` without calling ``handler``) once a budget is spent; with a checkpointer
the total carries over from one turn of a thread to the next.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict, cast

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.types import Command

from funcware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelCallResult,
    ModelRequest,
    ModelResponse,
    create_agent,
)
from funcware.testing import ScriptedChatModel


class Usage(TypedDict):
    input_tokens: int
    output_tokens: int
    total_tokens: int
    model_calls: int


class UsageState(AgentState, total=False):
    usage: Usage


NO_USAGE = Usage(input_tokens=0, output_tokens=0, total_tokens=0, model_calls=0)


class UsageTracker(AgentMiddleware[UsageState]):
    """Adds every model answer's ``usage_metadata`` to the ``usage`` field of the state."""

    state_schema = UsageState
    reads = ("state.usage", "model.result", "model.calls")
    writes = ("state.usage",)

    def wrap_model_call(
        self,
        request: ModelRequest[None],
        handler: Callable[[ModelRequest[None]], ModelResponse[Any]],
    ) -> ModelCallResult[Any]:
        response = handler(request)
        state = cast(UsageState, request.state)
        total = Usage(**state.get("usage", NO_USAGE))  # a copy: never edit the state in place
        total["model_calls"] += 1
        for message in response.result:
            usage = message.usage_metadata if isinstance(message, AIMessage) else None
            if usage is not None:
                total["input_tokens"] += usage["input_tokens"]
                total["output_tokens"] += usage["output_tokens"]
                total["total_tokens"] += usage["total_tokens"]
        return ExtendedModelResponse(response, Command(update={"usage": total}))


@tool
def convert(amount: float, currency: str) -> str:
    """Convert an amount of euros to another currency."""
    return f"{amount * 1.1:.2f} {currency}"


SCRIPT = [
    AIMessage(
        "",
        tool_calls=[{"name": "convert", "args": {"amount": 20, "currency": "USD"}, "id": "c1"}],
        usage_metadata={"input_tokens": 120, "output_tokens": 18, "total_tokens": 138},
    ),
    AIMessage(
        "20 euros are 22.00 US dollars.",
        usage_metadata={"input_tokens": 165, "output_tokens": 12, "total_tokens": 177},
    ),
]
"""The model's answers, each with the usage a provider would report."""


def demo() -> tuple[Any, dict[str, Any]]:
    """Two model calls: ``usage`` ends up holding the sum of both answers' usage."""
    model = ScriptedChatModel(responses=SCRIPT)
    agent = create_agent(model, [convert], middleware=[UsageTracker()])
    state = agent.invoke({"messages": [HumanMessage("How much is 20 EUR in USD?")]})
    return agent, state


if __name__ == "__main__":
    print(demo()[1]["usage"])
