"""Prompt caching: append a cache-marked block to the system message, keeping its blocks.

Guarantee: every model call's system message ends with exactly one cache-marked
reference block, after the prompt's own blocks.

When to use: a long, stable prefix — a policy handbook, a product manual, many examples —
sent with every model call. Providers that support prompt caching (Anthropic's
``cache_control``, for one) bill and answer faster when that prefix is marked cacheable.

A ``wrap_model_call`` hook turns the system message's content into a list of content
blocks (a plain string becomes one text block; existing blocks are kept untouched and in
order) and appends the reference text as one more block carrying
``"cache_control": {"type": "ephemeral"}``. Everything up to and including that block is
the cacheable prefix. The hook builds a new ``SystemMessage`` with
``request.override(system_message=...)``, so each call starts again from the agent's
prompt and the block is never added twice.

How to adapt: mark the last existing block instead of appending one when the prompt
itself is the long part; keep anything that changes per call (dates, user names) out of
the marked prefix — put it in the messages — or the cache never hits; use
``{"type": "ephemeral", "ttl": "1h"}`` where the provider offers longer lifetimes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool

from funcware import ModelRequest, ModelResponse, create_agent, wrap_model_call
from funcware.testing import ScriptedChatModel

REFERENCE = """Returns handbook (v12).
1. Unopened items may be returned within 30 days for a full refund.
2. Opened electronics may be returned within 14 days; a 10% restocking fee applies.
3. Refunds go to the original payment method within 5 business days.
"""
"""The long, stable text worth caching (a real one would run to thousands of tokens)."""


def cache_block(text: str) -> dict[str, Any]:
    """A new text block that marks the prompt up to and including it as cacheable."""
    return {"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}


def _blocks(content: str | list[str | dict[Any, Any]]) -> list[str | dict[Any, Any]]:
    """The content as a list of blocks: a string becomes one text block."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [
        {"type": "text", "text": block} if isinstance(block, str) else block for block in content
    ]


@wrap_model_call(reads=["request.system_message"], writes=["request.system_message"])
def cache_reference(
    request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
) -> ModelResponse[Any]:
    """Send the system prompt's blocks plus the cache-marked reference block."""
    system = request.system_message or SystemMessage(content="")
    blocks = _blocks(system.content)  # a new list: the agent's prompt is not edited
    block = cache_block(REFERENCE)
    if block in blocks:  # an outer layer (or the prompt itself) already added it
        return handler(request)
    blocks.append(block)
    return handler(request.override(system_message=system.model_copy(update={"content": blocks})))


@tool
def order_status(order_id: str) -> str:
    """Look up an order."""
    return f"Order {order_id}: opened laptop, delivered 6 days ago."


SYSTEM_PROMPT = SystemMessage(
    content=[
        {"type": "text", "text": "You are the returns assistant of Example Shop."},
        {"type": "text", "text": "Answer briefly and cite the handbook rule you apply."},
    ]
)


def demo() -> tuple[Any, dict[str, Any]]:
    """Two model calls; each receives both prompt blocks, then the cache-marked block."""
    model = ScriptedChatModel(
        responses=[
            AIMessage(
                "", tool_calls=[{"name": "order_status", "args": {"order_id": "A7"}, "id": "o1"}]
            ),
            "Yes: opened electronics within 14 days, minus a 10% restocking fee (rule 2).",
        ]
    )
    agent = create_agent(
        model, [order_status], system_prompt=SYSTEM_PROMPT, middleware=[cache_reference]
    )
    state = agent.invoke({"messages": [HumanMessage("Can I still return order A7?")]})
    return agent, state


if __name__ == "__main__":
    print(demo()[1]["messages"][-1].content)
