"""Tool retry: retry a failing tool with backoff; if it keeps failing, tell the model.

Guarantee: a tool call that keeps raising one of ``retry_on`` runs ``max_retries + 1``
times and then ends as one error ``ToolMessage``; the run goes on.

When to use: tools that call networks or services fail now and then. A transient failure
should be retried; a lasting one should not crash the run — the model can apologise, try
another tool, or answer without it.

``ToolRetry`` is a ``wrap_tool_call`` middleware that calls ``handler`` (the inner layers
and the tool) up to ``max_retries + 1`` times while it raises one of ``retry_on``, waiting
``base_delay * backoff_factor ** n`` seconds between attempts (``sleep`` is injectable;
the demo records the delays instead of sleeping). After the last failure it returns an
error ``ToolMessage`` (``status="error"``) that names the tool, the number of attempts and
the error, so the run goes on. Errors outside ``retry_on`` and interrupts
(``GraphBubbleUp``) pass through. Tools named in ``tools`` are the only ones retried
(all tools when it is ``None``).

How to adapt: retry only transient errors (``retry_on=(TimeoutError, ConnectionError)``)
so that bugs fail fast; add jitter when many runs call one service; re-raise instead of
answering for tools whose failure must stop the run; put a ``ToolMonitor``-style
recorder inside it (``compose(ToolRetry(...), monitor)``) to see every attempt.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command

from funcware import AgentMiddleware, AgentState, ToolCallRequest, create_agent
from funcware.testing import ScriptedChatModel


class ToolRetry(AgentMiddleware[AgentState[Any], Any]):
    """Retries failing tool calls; the final failure becomes an error ``ToolMessage``."""

    reads = ("tool.error",)
    writes = ("handler.retry", "tool.error.recover")

    def __init__(
        self,
        *,
        max_retries: int = 2,
        retry_on: tuple[type[Exception], ...] = (Exception,),
        tools: Collection[str] | None = None,
        base_delay: float = 1.0,
        backoff_factor: float = 2.0,
        sleep: Callable[[float], object] = time.sleep,
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"ToolRetry(max_retries={max_retries}) must be 0 or more")
        self.max_retries = max_retries
        self.retry_on = retry_on
        self.only = None if tools is None else frozenset(tools)
        self.base_delay = base_delay
        self.backoff_factor = backoff_factor
        self.sleep = sleep

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        name = request.tool_call["name"]
        if self.only is not None and name not in self.only:
            return handler(request)
        for attempt in range(self.max_retries + 1):
            if attempt:
                self.sleep(self.base_delay * self.backoff_factor ** (attempt - 1))
            try:
                return handler(request)
            except GraphBubbleUp:
                raise
            except self.retry_on as exc:
                error = exc
        return ToolMessage(
            f"Error: tool {name!r} failed after {self.max_retries + 1} attempts "
            f"({type(error).__name__}: {error}). Do not call it again for this request.",
            name=name,
            tool_call_id=request.tool_call["id"] or "",
            status="error",
        )


def demo() -> tuple[Any, dict[str, Any]]:
    """One tool succeeds on its third attempt; another always fails and becomes an error."""
    attempts = {"quote": 0}

    @tool
    def get_quote(symbol: str) -> str:
        """The latest price of a stock."""
        attempts["quote"] += 1
        if attempts["quote"] < 3:
            raise ConnectionError("quote service unreachable")
        return f"{symbol}: 42.10 (attempt {attempts['quote']})"

    @tool
    def get_news(symbol: str) -> str:
        """Today's headlines about a company."""
        raise TimeoutError("news service timed out")

    calls = [
        {"name": "get_quote", "args": {"symbol": "ACME"}, "id": "q1"},
        {"name": "get_news", "args": {"symbol": "ACME"}, "id": "n1"},
    ]
    model = ScriptedChatModel(
        responses=[
            AIMessage("", tool_calls=calls),
            "ACME trades at 42.10; the news service is unavailable right now.",
        ]
    )
    delays: list[float] = []
    retry = ToolRetry(max_retries=2, base_delay=0.5, sleep=delays.append)
    agent = create_agent(model, [get_quote, get_news], middleware=[retry])
    state = agent.invoke({"messages": [HumanMessage("How is ACME doing?")]})
    assert sorted(delays) == [0.5, 0.5, 1.0, 1.0]  # two tools, two retries each
    return agent, state


if __name__ == "__main__":
    print(demo()[1]["messages"][-1].content)
