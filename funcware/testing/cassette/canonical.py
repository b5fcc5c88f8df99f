"""The canonical, JSON form of what a cassette stores: requests, answers, tool results.

A request is ``{"messages", "tools", "tool_choice", "settings"}``: messages without their
ids and provider metadata (those change from run to run), tools as OpenAI function
schemas, and the call's keyword settings. Two requests match when their canonical forms
are equal. Answers keep everything (ids, metadata, usage) so a replay is exact.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, message_to_dict, messages_from_dict
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic_core import to_jsonable_python

__all__ = [
    "canonical_request",
    "canonical_tools",
    "dump_message",
    "jsonable",
    "key",
    "load_message",
]

# Fields that differ between two runs of the same conversation, or only echo the provider.
_VOLATILE = frozenset({"id", "response_metadata", "usage_metadata"})


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON values (objects no JSON can hold become their ``repr``)."""
    return to_jsonable_python(value, fallback=repr)


def key(value: Any) -> str:
    """One string per canonical value: equal values, equal keys."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _request_message(message: BaseMessage) -> dict[str, Any]:
    data = message_to_dict(message)["data"]
    kept = {
        name: value
        for name, value in data.items()
        if name not in _VOLATILE and value not in (None, {}, [], False)
    }
    kept["content"] = data.get("content", "")
    return jsonable({"type": message.type, **kept})  # type: ignore[no-any-return]


def canonical_tools(tools: Sequence[Any]) -> list[dict[str, Any]]:
    """The tools as OpenAI function schemas, the form both recording and replay compare."""
    return [convert_to_openai_tool(tool) for tool in tools]


def canonical_request(
    messages: Sequence[BaseMessage],
    tools: Sequence[dict[str, Any]],
    tool_choice: Any,
    settings: dict[str, Any],
) -> dict[str, Any]:
    """The request a model call makes, as the cassette stores and compares it."""
    return {
        "messages": [_request_message(m) for m in messages],
        "tools": jsonable(list(tools)),
        "tool_choice": jsonable(tool_choice),
        "settings": jsonable({k: v for k, v in settings.items() if v is not None}),
    }


def dump_message(message: BaseMessage) -> dict[str, Any]:
    """``message`` with every field, as JSON values."""
    return jsonable(message_to_dict(message))  # type: ignore[no-any-return]


def load_message(data: dict[str, Any]) -> BaseMessage:
    """A fresh message from :func:`dump_message`'s output."""
    return messages_from_dict([data])[0]
