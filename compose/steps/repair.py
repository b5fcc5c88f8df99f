"""Answering tool calls the model made with unparseable arguments.

A provider reports such calls in ``AIMessage.invalid_tool_calls``; nothing executes
them, and the next request would carry an assistant tool call without a reply, which
chat APIs reject. Before each model call, every unanswered one gets an error
``ToolMessage`` right after its AI message (as LangChain's agent does).
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage

__all__ = ["answer_invalid_tool_calls"]


def answer_invalid_tool_calls(messages: Sequence[AnyMessage]) -> list[AnyMessage] | None:
    """``messages`` with an error reply after each unanswered invalid tool call.

    ``None`` when there is nothing to answer (the common case: no copy is made).
    """
    if not any(isinstance(m, AIMessage) and m.invalid_tool_calls for m in messages):
        return None
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    repaired: list[AnyMessage] = []
    for message in messages:
        repaired.append(message)
        if not isinstance(message, AIMessage):
            continue
        for call in message.invalid_tool_calls:
            call_id = call.get("id")
            if call_id is None or call_id in answered:
                continue
            name = call.get("name") or "unknown"
            repaired.append(
                ToolMessage(
                    content=(  # LangChain's words: code written for it matches on them
                        f"Tool call {name} with id {call_id} could not be executed - "
                        "arguments were malformed or truncated."
                    ),
                    name=name,
                    tool_call_id=call_id,
                    status="error",
                )
            )
            answered.add(call_id)
    return repaired if len(repaired) != len(messages) else None
