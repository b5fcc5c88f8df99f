"""Logging around the model: one log line before and after every model call, with timing.

Guarantee: every model call that reaches ``log_model_call`` leaves one request
line and one outcome line.

When to use: see what the agent sends to the model and what comes back (message count,
tools offered, tool calls requested, latency, failures) without touching the model or
the prompt. It is the first middleware to add when an agent misbehaves.

The hook is a ``wrap_model_call``: it logs the request, calls ``handler`` (the rest of the
onion and the model), then logs the answer or the error, and re-raises errors so that
retries and fallbacks further out still see them. It writes to the standard ``logging``
module, so handlers, levels and formats are configured the usual way.

Where it sits in the onion decides what it sees. ``compose(retry_once, log_model_call)``
puts the retry outside the logger, so every attempt is logged; put the logger first to
log one line per model call however many attempts it took. Both orders are useful, so
neither layer declares one: they declare only what they touch (the logger reads, the retry
may call its handler again), and nothing they touch conflicts.

How to adapt: log at DEBUG and include ``request.messages[-1].text`` to see the content;
add ``response.result[-1].usage_metadata`` for token counts; send the records to your
tracing system with a ``logging.Handler``; or keep the timing in state by returning an
``ExtendedModelResponse`` with a ``Command(update=...)``.
"""

from __future__ import annotations

import logging
import logging.handlers
import time
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import BaseTool, tool

from funcware import ModelRequest, ModelResponse, compose, create_agent, wrap_model_call
from funcware.testing import ScriptedChatModel

logger = logging.getLogger(__name__)


def _tool_name(tool: BaseTool | dict[str, Any]) -> str:
    if isinstance(tool, BaseTool):
        return tool.name
    return str(tool.get("function", tool).get("name", "?"))


def _describe(response: ModelResponse[Any]) -> str:
    message = response.result[-1]
    if isinstance(message, AIMessage) and message.tool_calls:
        return "tool calls " + ", ".join(call["name"] for call in message.tool_calls)
    return f"text ({len(message.text)} chars)"


@wrap_model_call(reads=["request.messages", "request.tools", "model.result", "model.calls"])
def log_model_call(
    request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
) -> ModelResponse[Any]:
    """Log each model call: what goes in, what comes out (or the error), how long it took."""
    names = [_tool_name(t) for t in request.tools]
    logger.info("model call: %d messages, tools %s", len(request.messages), names)
    start = time.perf_counter()
    try:
        response = handler(request)
    except Exception as exc:
        elapsed = (time.perf_counter() - start) * 1000
        logger.warning("model call failed after %.1f ms: %s: %s", elapsed, type(exc).__name__, exc)
        raise
    elapsed = (time.perf_counter() - start) * 1000
    logger.info("model answered in %.1f ms: %s", elapsed, _describe(response))
    return response


@wrap_model_call(reads=["model.error"], writes=["handler.retry"])
def retry_once(
    request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
) -> ModelResponse[Any]:
    """Try the model a second time after a connection error (see ``model_retry`` for more)."""
    try:
        return handler(request)
    except ConnectionError:
        return handler(request)


@tool
def lookup(topic: str) -> str:
    """Look a topic up in the (pretend) knowledge base."""
    return f"Notes about {topic}."


def demo() -> tuple[Any, dict[str, Any]]:
    """A dropped connection, a retry, a tool round trip: every attempt leaves a log line."""
    model = ScriptedChatModel(
        responses=[
            ConnectionError("connection reset by peer"),
            AIMessage("", tool_calls=[{"name": "lookup", "args": {"topic": "owls"}, "id": "l1"}]),
            "Owls are nocturnal birds of prey.",
        ]
    )
    agent = create_agent(model, [lookup], middleware=[compose(retry_once, log_model_call)])

    records = logging.handlers.BufferingHandler(capacity=1000)
    level = logger.level
    logger.addHandler(records)
    logger.setLevel(logging.INFO)
    try:
        state = agent.invoke({"messages": [HumanMessage("Tell me about owls.")]})
    finally:
        logger.removeHandler(records)
        logger.setLevel(level)

    lines = [record.getMessage() for record in records.buffer]
    assert len(lines) == 6, lines  # (call, outcome) x 3 attempts
    assert lines[1].startswith("model call failed") and "ConnectionError" in lines[1]
    assert lines[3].endswith("tool calls lookup")
    return agent, state


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    print(demo()[1]["messages"][-1].content)
