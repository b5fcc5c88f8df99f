"""A model wrap layer that returned an ``ExtendedModelResponse``: its response and the state
writes of its ``Command`` checked. Loaded only when a layer returns one."""

from __future__ import annotations

from typing import Any

from langgraph.types import Command

from funcware.compose.steps.keys import check_keys
from funcware.compose.wraps.layers import NO_WRITES, Outcome, Writes
from funcware.compose.wraps.results import as_model_response, checked_response
from funcware.compose.wraps.updates import update_writes
from funcware.hooks.middleware import HookImpl
from funcware.hooks.types import ExtendedModelResponse

__all__ = ["extended_outcome"]


def _command_writes(command: object, impl: HookImpl) -> Writes:
    if command is None:
        return NO_WRITES
    if not isinstance(command, Command) or command.goto or command.resume or command.graph:
        from funcware.compose.wraps.result_errors import bad_command

        raise bad_command(command, impl)
    return update_writes(command.update, impl.describe())


def extended_outcome(
    value: ExtendedModelResponse[Any], impl: HookImpl, known: frozenset[str] | None
) -> Outcome:
    """``value``'s response and its command's writes (with ``known``: only to those keys)."""
    inner = as_model_response(value.model_response)
    if inner is None:
        from funcware.compose.wraps.result_errors import bad_inner_response

        raise bad_inner_response(value.model_response, impl)
    checked_response(inner, impl.describe())
    writes = _command_writes(value.command, impl)
    check_keys((key for key, _ in writes), known, impl.describe())
    return inner, writes
