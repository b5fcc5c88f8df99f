"""Which exceptions passed through a hook (the model, a tool or a composite's tail raised
them) rather than being raised by it: no wrap layer is noted for those (:mod:`.error_notes`)."""

from __future__ import annotations

import contextlib

__all__ = ["is_passed_through", "note_passed_through", "passed_through"]

_PASSED = "__funcware_passed_through__"


def note_passed_through(exc: BaseException) -> None:
    """Mark ``exc`` as having come out of a ``handler``: outer layers did not raise it."""
    with contextlib.suppress(AttributeError):  # exceptions that refuse attributes
        setattr(exc, _PASSED, True)


def is_passed_through(exc: BaseException) -> bool:
    """Whether ``exc`` is marked: noted already, or raised by a tail."""
    return bool(getattr(exc, _PASSED, False))


class _PassedThrough:
    """``with passed_through:`` marks what its block raises; stateless, so shared by all."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: BaseException | None, traceback: object) -> None:
        if exc is not None:  # returning None lets it propagate
            note_passed_through(exc)


passed_through = _PassedThrough()
"""Wraps an onion's tail (the model, the tool, a composite's handler)."""
