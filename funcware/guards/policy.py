"""How a guard's decisions apply to what the user sees streamed: ``stream=`` on a middleware.

A guard (an ``after_model`` or ``wrap_model_call`` hook that rewrites, redacts or blocks an
answer) runs after the model has produced its tokens. Without a policy the user has already
seen those tokens. A middleware says how its decisions govern the stream:

- ``"pass"`` (the default): the model's tokens stream as they come; the guard changes only
  the state.
- ``"buffer"``: the turn's tokens are held until every buffering guard has run on the whole
  message; then the message as the guards left it (rewritten, redacted, replaced or removed)
  is streamed, as one chunk per message.
- :class:`SlidingWindow`: for guards that can judge text incrementally (PII redaction).
  The model's text passes through the guard's ``check`` and is released once it is
  ``chars`` characters behind the newest token; the message the state keeps is exactly the
  text released.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Union

__all__ = ["STREAM_POLICIES", "SlidingWindow", "StreamPolicy", "check_stream_policy"]

STREAM_POLICIES = ("pass", "buffer")


@dataclass(frozen=True)
class SlidingWindow:
    """Release a guarded answer's text ``chars`` characters behind the newest token.

    ``check(text) -> text`` returns ``text`` with what must not be shown replaced (a
    redaction); it is applied to held text before any of it is released, and the text is
    cut only where checking the two parts apart gives what checking them together gives,
    so a match is never split. ``chars`` must be at least the longest text ``check`` needs
    to see to decide (the longest e-mail address, card number, ...): a character is
    released once ``chars`` newer characters have arrived after it, and never changes
    after that. At the end of the message everything left is checked and released.
    Tool-call chunks are held until the end of the message.
    """

    chars: int
    check: Callable[[str], str]

    def __post_init__(self) -> None:
        if isinstance(self.chars, bool) or not isinstance(self.chars, int) or self.chars < 1:
            raise ValueError(
                f"SlidingWindow(chars={self.chars!r}) must be a positive int: the number of "
                "characters held behind the newest token."
            )
        if not callable(self.check):
            raise TypeError(
                f"SlidingWindow(check={self.check!r}) must be a function taking the held "
                "text and returning it checked (e.g. with e-mail addresses masked)."
            )


StreamPolicy = Union[Literal["pass", "buffer"], SlidingWindow]  # noqa: UP007 - a runtime alias
"""What ``stream=`` accepts: ``"pass"``, ``"buffer"`` or a :class:`SlidingWindow`."""


def check_stream_policy(value: object, owner: str) -> StreamPolicy:
    """``value`` if it is a stream policy; a ``ValueError`` naming ``owner`` otherwise."""
    if isinstance(value, SlidingWindow) or value in STREAM_POLICIES:
        return value  # type: ignore[return-value]
    raise ValueError(
        f"{owner} got stream={value!r}; use stream='pass' (the default: tokens stream as the "
        "model makes them), stream='buffer' (hold the turn until the guard has run) or "
        "stream=SlidingWindow(chars=..., check=...) (release checked text behind a window)."
    )
