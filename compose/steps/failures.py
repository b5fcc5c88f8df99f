"""Notes on exceptions raised by user hooks: which middleware and hook, and where.

The exception itself propagates unchanged (same type, same message); funcware only
adds a note (``add_note``), once, at the hook that raised it. langgraph's control-flow
exceptions (interrupts, bubbling commands) and what only passes through a hook without
being an error of it (cancellation, ``KeyboardInterrupt``, ``SystemExit``) are never touched.
"""

from __future__ import annotations

import contextlib

from langgraph.errors import GraphBubbleUp

from funcware.hooks.middleware import HookImpl

from .pauses import mark_interrupter

__all__ = ["note_passed_through", "note_raised"]

_PASSED = "__funcware_passed_through__"


def note_passed_through(exc: BaseException) -> None:
    """Mark ``exc`` as having come out of a ``handler``: outer layers did not raise it."""
    with contextlib.suppress(AttributeError):  # exceptions that refuse attributes
        setattr(exc, _PASSED, True)


def note_raised(exc: BaseException, impl: HookImpl) -> None:
    """Add ``raised in middleware 'x', hook y (defined at file:line)`` to ``exc``, once.

    An interrupt gets no note; the hook that raised it is remembered for the error an
    agent without a checkpointer gives (see :mod:`.pauses`).
    """
    if not isinstance(exc, Exception) or isinstance(exc, GraphBubbleUp):
        if not getattr(exc, _PASSED, False):
            mark_interrupter(exc, impl.describe())
        return
    if getattr(exc, _PASSED, False):
        return
    note_passed_through(exc)
    note = f"raised in {impl.describe()}"
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:  # Python 3.10: keep the note where 3.11's traceback would look for it
        notes = list(getattr(exc, "__notes__", []))
        with contextlib.suppress(AttributeError):
            setattr(exc, "__notes__", [*notes, note])  # noqa: B010
