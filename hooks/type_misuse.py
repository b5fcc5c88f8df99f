"""What the value types say when they are misused: a deprecated assignment to a
``ModelRequest``, an unknown or doubled ``override()`` field, a ``ModelResponse`` result that
is no list of messages. Loads only when one happens."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, SystemMessage

from funcware.hooks.wording import a


def assign(request: Any, name: str, value: Any) -> None:
    """``request.name = value``, with the ``DeprecationWarning`` that points at ``override``."""
    fix = "system_message=SystemMessage(...)" if name == "system_prompt" else f"{name}=..."
    warnings.warn(
        f"Direct attribute assignment to ModelRequest.{name} is deprecated. "
        f"Use request.override({fix}) instead to create a new request "
        f"(assigning changes the request in place, for every layer that holds it).",
        DeprecationWarning,
        stacklevel=3,  # the user's assignment (ModelRequest.__setattr__ is in between)
    )
    if name == "system_prompt":
        name = "system_message"
        value = None if value is None else SystemMessage(content=value)
    object.__setattr__(request, name, value)


def both_prompts(where: str, fix: str) -> ValueError:
    """``system_prompt`` and ``system_message`` were both given to ``where``."""
    return ValueError(
        f"Cannot specify both system_prompt and system_message: {where} takes one; pass {fix}."
    )


def bad_override(changes: Mapping[str, Any], valid: Sequence[str]) -> Exception:
    """``ModelRequest.override()`` got fields a request does not have, or both prompts."""
    unknown = sorted(set(changes) - set(valid))
    if unknown:
        return TypeError(
            f"ModelRequest.override() got unknown field(s) {', '.join(unknown)}; "
            f"valid fields are: {', '.join(valid)}."
        )
    return both_prompts("ModelRequest.override()", "system_message=SystemMessage(...)")


def unknown_agent_request_fields(changes: Mapping[str, Any]) -> TypeError:
    """``AgentRequest.override()`` got fields an ``AgentRequest`` does not have."""
    unknown = sorted(set(changes) - {"input", "config", "context"})
    return TypeError(
        f"AgentRequest.override() got {', '.join(map(repr, unknown))}; "
        "an AgentRequest has input, config and context."
    )


def result_problem(result: object) -> str:
    """Why ``result`` (no list of messages) cannot be a ``ModelResponse.result``, with the fix."""
    fix = "ModelResponse(result=[AIMessage(content=...)])"
    if isinstance(result, BaseMessage):
        problem = f"is {a(type(result).__name__)}, not a list"
        fix = "ModelResponse(result=[message]) (or return the AIMessage itself)"
    elif isinstance(result, list):
        index, item = next((i, x) for i, x in enumerate(result) if not isinstance(x, BaseMessage))
        problem = f"has {a(type(item).__name__)} at position {index}, not a message"
    else:
        problem = f"is {a(type(result).__name__)}, not a list of messages"
        if isinstance(result, str):
            problem += " (langchain-core would turn every character into a message)"
    return f"{problem}. Write {fix}"
