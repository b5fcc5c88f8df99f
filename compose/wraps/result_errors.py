"""What was wrong with a wrap hook's result, in words (loaded only when one is wrong)."""

from __future__ import annotations

from funcware.hooks.middleware import HookImpl
from funcware.hooks.wording import a, returned

__all__ = ["bad_command", "bad_inner_response", "not_a_model_result", "not_a_tool_result"]


def bad_command(command: object, impl: HookImpl) -> Exception:
    """The error for an ``ExtendedModelResponse`` whose command is no plain update."""
    for field in ("goto", "resume", "graph"):
        if getattr(command, field, None):
            # LangChain's sentence first (code matches on it), then where it came from.
            return NotImplementedError(
                f"Command {field} is not yet supported in wrap_model_call middleware. "
                f"{impl.describe()} returned a Command with {field}={getattr(command, field)!r} "
                "in an ExtendedModelResponse; only `update` is supported there. To route the "
                "agent, use the jump_to state field with before_model/after_model hooks instead."
            )
    return TypeError(
        f"{impl.describe()} returned an ExtendedModelResponse whose command is "
        f"{a(type(command).__name__)}; use langgraph.types.Command(update={{...}})."
    )


def bad_inner_response(value: object, impl: HookImpl) -> TypeError:
    """The error for an ``ExtendedModelResponse`` whose ``model_response`` is no response."""
    return TypeError(
        f"{impl.describe()} returned an ExtendedModelResponse whose model_response "
        f"is {returned(value)}; it must be a ModelResponse: "
        "ExtendedModelResponse(model_response=handler(request), command=Command(...))."
    )


def not_a_model_result(value: object, impl: HookImpl) -> TypeError:
    """The error for a ``wrap_model_call`` result of the wrong type."""
    return TypeError(
        f"{impl.describe()} returned {returned(value)}; a wrap_model_call hook must return "
        "a ModelResponse, an AIMessage or an ExtendedModelResponse."
    )


def not_a_tool_result(value: object, impl: HookImpl) -> TypeError:
    """The error for a ``wrap_tool_call`` result of the wrong type."""
    return TypeError(
        f"{impl.describe()} returned {returned(value)}; a wrap_tool_call hook must return "
        "a ToolMessage or a langgraph Command."
    )
