"""Every exception (and warning) class funcware raises for a mistake, in one place.

``from funcware.errors import InvalidJumpError`` (or ``from funcware import ...``). Each
class lives here, so a traceback names it ``funcware.errors.InvalidJumpError``; the core
and the features raise them from here.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BrokenStackError",
    "DoubleCallWarning",
    "DuplicateMiddlewareError",
    "FuncwareDeprecationWarning",
    "HookTimeoutError",
    "InvalidJumpError",
    "MiddlewareOrderError",
    "MiddlewareOrderWarning",
    "MissingCheckpointerError",
    "NondeterministicHookError",
    "RunClosedError",
    "RunConfigError",
    "StateSchemaConflictWarning",
    "ToolCallPairingError",
    "ToolCallPairingWarning",
    "UndeclaredEffectError",
    "UnknownNodeError",
    "UnknownStateKeyError",
    "UnknownStateKeyWarning",
]


class FuncwareDeprecationWarning(DeprecationWarning):
    """Something public is deprecated: the message says since which version, what to use
    instead, and the release that removes it (at least one minor release later).

    A ``DeprecationWarning``, so Python shows it in ``__main__`` and under pytest; turn it
    into an error with ``-W error::funcware.FuncwareDeprecationWarning``.
    """


class RunConfigError(ValueError):
    """A run's ``config["configurable"]["funcware"]`` asks for a stack the agent cannot run:
    an unknown name, a middleware that may not be switched off, a malformed request."""


class RunClosedError(RuntimeError):
    """A ``wrap_agent_call`` layer asked for another attempt after the caller stopped
    reading the run's stream (the run is over; the layer's handler refuses)."""


class BrokenStackError(ValueError):
    """The middleware stack cannot form an agent; the message lists every problem."""


class DuplicateMiddlewareError(BrokenStackError, AssertionError):
    """Two middleware share a name: LangChain raises ``AssertionError`` for it, so this is one.

    Its message starts with LangChain's sentence, then lists every problem of the stack.
    """


class InvalidJumpError(ValueError):
    """A hook returned a ``jump_to`` it did not declare, or an unknown target."""


class UnknownNodeError(ValueError):
    """A hook's ``Command(goto=...)`` names a node the agent's graph does not have."""


class MissingCheckpointerError(RuntimeError):
    """A hook or tool called ``interrupt()`` in an agent that has no checkpointer."""


class UnknownStateKeyError(ValueError):
    """A hook wrote a state key that no state schema of the agent declares (strict mode)."""


class UnknownStateKeyWarning(UserWarning):
    """A hook wrote a state key that no state schema declares; the write was dropped."""


class ToolCallPairingError(ValueError):
    """A write broke the tool-call pairing contract (``effects="strict"``): names the
    middleware, the hook, its ``file:line`` and the message."""


class ToolCallPairingWarning(UserWarning):
    """A write, or the messages about to reach the model, broke the tool-call pairing
    contract; names the middleware, the hook, its ``file:line`` and the message."""


class DoubleCallWarning(UserWarning):
    """A wrap layer called its handler again after it answered and kept the second answer."""


class StateSchemaConflictWarning(UserWarning):
    """Two middleware declare one state field with conflicting types; the later one is used."""


class HookTimeoutError(TimeoutError):
    """A hook did not finish within its ``timeout=``; names the middleware, hook and limit."""

    def __init__(self, middleware: str, hook: str, where: str, timeout: float) -> None:
        super().__init__(
            f"middleware {middleware!r}, hook {hook} (defined at {where}) did not finish "
            f"within its timeout of {timeout:g} s. Raise timeout= if the hook needs longer, "
            "or catch HookTimeoutError in an outer layer to fall back."
        )
        self.middleware = middleware
        self.hook = hook
        self.where = where
        self.timeout = timeout

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from its fields, then given back what was added to it since: its notes
        # and its message as it now stands (FUNCWARE_ERROR_NOTES=message appends the note).
        state = {**self.__dict__, "args": self.args}
        return (type(self), (self.middleware, self.hook, self.where, self.timeout), state)


class MiddlewareOrderError(ValueError):
    """The middleware order breaks a declared constraint; the message lists every problem."""


class MiddlewareOrderWarning(UserWarning):
    """Two declared middleware touch one effect and nothing says which goes first, or one
    hides from the other what it needs (a hazard)."""


class UndeclaredEffectError(RuntimeError):
    """A declared middleware did something it did not declare (``effects="strict"``)."""


class NondeterministicHookError(ValueError):
    """A hook placed in a Temporal workflow could not be replayed identically
    (``funcware.temporal``)."""
