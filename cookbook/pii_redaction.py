"""PII redaction: mask e-mail addresses and card numbers in model input, tool output and answers.

Guarantee: no raw e-mail address or card number reaches the model, is stored from
a tool's result or a model answer, or streams to the client.

When to use: the model provider must not receive personal data the user typed, personal
data a tool returns must not be stored in the conversation (and so not in a checkpointer,
a trace, or the next model call), and the model's answer must not show it either — not
even in the token stream.

Three small hooks, composed into one middleware:

- ``redact_model_input`` (``wrap_model_call``) rewrites the messages of each model
  request through ``request.override(messages=...)``. The state keeps what the user
  wrote; only what is *sent to the model* is masked.
- ``redact_tool_output`` (``wrap_tool_call``) masks the ``ToolMessage`` a tool returns,
  before it is written to the state.
- ``redact_model_output`` (``wrap_model_call`` with
  ``stream=SlidingWindow(chars=64, check=redact)``) masks the model's answer as it
  streams: its text goes through ``redact`` and reaches the user 64 characters behind the
  newest token (enough to see a whole address or card number before showing any of it);
  the answer the state keeps is exactly what was streamed (the hook masks it too, so
  the state is masked wherever the middleware runs). Tool-call arguments are held to
  the end of the message and checked too.

How to adapt: add patterns to ``PATTERNS`` (phone numbers, IBANs) or check card numbers
with the Luhn algorithm to avoid masking order numbers; replace each value with a stable
token (a hash) so the model can still tell two addresses apart; redact the state itself
in a ``before_model`` hook when even the stored input must be clean.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command

from funcware import (
    ModelRequest,
    ModelResponse,
    SlidingWindow,
    ToolCallRequest,
    compose,
    create_agent,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.testing import ScriptedChatModel

PATTERNS = (
    (re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"), "[EMAIL]"),
    (re.compile(r"\b\d(?:[ -]?\d){12,18}\b"), "[CARD]"),  # 13 to 19 digits
)
"""``(pattern, placeholder)`` pairs, applied in order."""

M = TypeVar("M", bound=BaseMessage)


def redact(text: str) -> str:
    """``text`` with every match of ``PATTERNS`` replaced by its placeholder."""
    for pattern, placeholder in PATTERNS:
        text = pattern.sub(placeholder, text)
    return text


def _redact_block(block: str | dict[Any, Any]) -> str | dict[Any, Any]:
    if isinstance(block, str):
        return redact(block)
    if block.get("type") == "text" and isinstance(block.get("text"), str):
        return {**block, "text": redact(block["text"])}
    return block


def _redact_message(message: M) -> M:
    """A masked copy of ``message`` (text content and text blocks), or itself if clean."""
    content = message.content
    masked = redact(content) if isinstance(content, str) else [_redact_block(b) for b in content]
    return message if masked == content else message.model_copy(update={"content": masked})


@wrap_model_call(reads=["request.messages"], writes=["request.messages"])
def redact_model_input(
    request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
) -> ModelResponse[Any]:
    """Send the model masked copies of the messages; the state is left as it is."""
    return handler(request.override(messages=[_redact_message(m) for m in request.messages]))


@wrap_tool_call(reads=["tool.result"], writes=["tool.answer.rewrite"])
def redact_tool_output(
    request: ToolCallRequest,
    handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
) -> ToolMessage | Command[Any]:
    """Mask the tool's result before it is stored in the conversation."""
    result = handler(request)
    if isinstance(result, ToolMessage):
        return _redact_message(result)
    return result


@wrap_model_call(
    stream=SlidingWindow(chars=64, check=redact),
    reads=["model.result"],
    writes=["model.answer.rewrite"],
)
def redact_model_output(
    request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
) -> ModelResponse[Any]:
    """Mask the answer the state keeps; ``stream=`` masks what streams the same way."""
    response = handler(request)
    return ModelResponse(
        result=[_redact_message(m) for m in response.result],
        structured_response=response.structured_response,
    )


pii_redaction = compose(
    redact_model_input, redact_tool_output, redact_model_output, name="pii_redaction"
)


@tool
def lookup_customer(customer_id: str) -> str:
    """Fetch a customer's record from the CRM."""
    return (
        f"Customer {customer_id}: Jane Doe, jane.doe@example.com, "
        "card 4111 1111 1111 1111, plan: premium."
    )


def demo() -> tuple[Any, dict[str, Any]]:
    """The user, a tool and the answer reveal PII; the model sees none, the answer shows none."""
    model = ScriptedChatModel(
        responses=[
            AIMessage(
                "",
                tool_calls=[{"name": "lookup_customer", "args": {"customer_id": "42"}, "id": "l1"}],
            ),
            "You are on the premium plan; the receipt goes to jane.doe@example.com.",
        ]
    )
    agent = create_agent(model, [lookup_customer], middleware=[pii_redaction])
    question = HumanMessage(
        "I'm customer 42 (jane.doe@example.com, card 4111-1111-1111-1111). Which plan am I on?"
    )
    state = agent.invoke({"messages": [question]})
    return agent, state


if __name__ == "__main__":
    for message in demo()[1]["messages"]:
        print(f"{message.type}: {message.text}")
