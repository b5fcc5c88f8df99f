"""Checking what wrap hooks return, and the two kinds of onion (model calls, tool calls)."""

from __future__ import annotations

from functools import partial
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import Command

from funcware.compose.steps.keys import check_keys, written_keys
from funcware.compose.wraps.layers import NO_WRITES, Outcome
from funcware.compose.wraps.onion import CallKind
from funcware.hooks.middleware import HookImpl
from funcware.hooks.types import ExtendedModelResponse, ModelResponse, result_problem

__all__ = [
    "MODEL_CALLS",
    "TOOL_CALLS",
    "as_model_response",
    "checked_response",
    "model_calls",
    "tool_calls",
]


def checked_response(response: ModelResponse[Any], owner: str) -> ModelResponse[Any]:
    """``response`` if its ``result`` is a list of messages; else a ``TypeError`` for ``owner``."""
    problem = result_problem(response.result)
    if problem is None:
        return response
    raise TypeError(f"{owner} returned a ModelResponse whose result {problem}.")


def as_model_response(value: object) -> ModelResponse[Any] | None:
    """``value`` as a ``ModelResponse`` if it is one or an ``AIMessage``; else ``None``."""
    if isinstance(value, ModelResponse):
        return value
    if isinstance(value, AIMessage):
        return ModelResponse(result=[value])
    return None


def _normalize_model(value: object, impl: HookImpl, known: frozenset[str] | None) -> Outcome:
    if isinstance(value, ModelResponse):
        return checked_response(value, impl.describe()), NO_WRITES
    if isinstance(value, AIMessage):
        return ModelResponse(result=[value]), NO_WRITES
    if isinstance(value, ExtendedModelResponse):
        from funcware.compose.wraps.extended import extended_outcome

        return extended_outcome(value, impl, known)
    from funcware.compose.wraps.result_errors import not_a_model_result

    raise not_a_model_result(value, impl)


def _normalize_tool(value: object, impl: HookImpl, known: frozenset[str] | None) -> Outcome:
    if isinstance(value, Command) and value.graph is None:  # not a parent graph's keys
        check_keys(written_keys(value), known, impl.describe())
    if isinstance(value, (ToolMessage, Command)):
        return value, NO_WRITES
    from funcware.compose.wraps.result_errors import not_a_tool_result

    raise not_a_tool_result(value, impl)


def model_calls(known: frozenset[str] | None = None) -> CallKind:
    """The model-call onion kind; with ``known``, command writes must be state keys."""
    return CallKind("wrap_model_call", partial(_normalize_model, known=known), ModelResponse)


def tool_calls(known: frozenset[str] | None = None) -> CallKind:
    """The tool-call onion kind; with ``known``, a returned Command must write state keys."""
    return CallKind("wrap_tool_call", partial(_normalize_tool, known=known), ToolMessage)


MODEL_CALLS = model_calls()
TOOL_CALLS = tool_calls()
