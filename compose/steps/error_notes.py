"""Notes on exceptions raised by user hooks: which middleware and hook, and where
(loaded when a hook raises).

The exception itself propagates with its type, its traceback and any notes it had;
funcware adds a note (``add_note``), once, at the hook that raised it. langgraph's
control-flow exceptions (interrupts, bubbling commands) and what only passes through a
hook without being an error of it (cancellation, ``KeyboardInterrupt``, ``SystemExit``)
are never touched.

Where a note is shown is the deployment's choice, read from the environment variable
``FUNCWARE_ERROR_NOTES`` when a hook fails (never on a call that succeeds):

- unset, empty or ``"note"``: a PEP 678 note only (tracebacks show it, ``str`` and
  ``repr`` do not);
- ``"message"``: the same text is also appended, on a new line, to the exception's
  message, for servers that report ``str(exc)`` or ``repr(exc)`` but drop notes. Only a
  message that is the exception's single string argument and shown as such by ``str``
  changes; others (a ``KeyError``'s key, several arguments, a custom ``__str__`` such
  as pydantic's ``ValidationError``) keep theirs, and their note stays a note. Code that
  turns the exception into text (an outer layer that handles it) sees the note too;
- anything else: refused with a ``ValueError`` naming the variable and the allowed values.
"""

from __future__ import annotations

import contextlib
import os

from langgraph.errors import GraphBubbleUp

from funcware.compose.steps.failures import is_passed_through, note_passed_through
from funcware.compose.steps.pauses import mark_interrupter
from funcware.hooks.middleware import HookImpl

__all__ = ["ERROR_NOTES_ENV", "ERROR_NOTES_MODES", "note_raised"]

ERROR_NOTES_ENV = "FUNCWARE_ERROR_NOTES"
"""The environment variable that says where a hook's failure note goes."""
ERROR_NOTES_MODES = ("note", "message")
"""Its allowed values (unset means ``"note"``)."""


def note_raised(exc: BaseException, impl: HookImpl) -> None:
    """Add ``raised in middleware 'x', hook y (defined at file:line)`` to ``exc``, once.

    An interrupt gets no note; the hook that raised it is remembered for the error an
    agent without a checkpointer gives (see :mod:`.pauses`). With
    ``FUNCWARE_ERROR_NOTES=message`` the note is also appended to the message; any value
    but ``note`` or ``message`` is refused with a ``ValueError`` raised from ``exc``.
    """
    if not isinstance(exc, Exception) or isinstance(exc, GraphBubbleUp):
        if not is_passed_through(exc):
            mark_interrupter(exc, impl.describe())
        return
    if is_passed_through(exc):
        return
    note_passed_through(exc)
    note = f"raised in {impl.describe()}"
    _add_note(exc, note)
    mode = os.environ.get(ERROR_NOTES_ENV) or "note"  # set but empty: unset
    if mode == "message":
        _append_to_message(exc, note)
    elif mode != "note":
        # Refused, not warned about: a warning in a server's log is easily missed, and
        # a misspelt setting would leave the operator believing clients see the notes.
        # The refusal is raised from ``exc`` (which keeps its note), so the traceback still
        # shows the hook's own error. Its message names the setting and nothing of the
        # failure (the operator's intent is unknown), and a server reports a ValueError's
        # message to the client, so the mistake shows where it is looked for.
        refusal = ValueError(
            f"{ERROR_NOTES_ENV}={mode!r} is not a valid setting: use 'note' (the default: "
            "a hook's failure gets a PEP 678 note) or 'message' (the note is also appended "
            "to the exception's message), or leave it unset. funcware read it when a hook "
            "raised; that exception is this error's __cause__."
        )
        note_passed_through(refusal)  # outer layers leave the refusal as it is
        raise refusal from exc


def _add_note(exc: BaseException, note: str) -> None:
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:  # Python 3.10: keep the note where 3.11's traceback would look for it
        notes = list(getattr(exc, "__notes__", []))
        with contextlib.suppress(AttributeError):
            setattr(exc, "__notes__", [*notes, note])  # noqa: B010


def _append_to_message(exc: BaseException, note: str) -> None:
    """Append ``note`` to the message of ``exc`` if ``str(exc)`` is its one string argument."""
    args = exc.args
    if len(args) != 1 or not isinstance(args[0], str):
        return
    message = args[0]
    if message.endswith(note):  # already there (an exception raised twice)
        return
    try:
        if str(exc) != message:  # a __str__ of its own (KeyError, ImportError, ...)
            return
        exc.args = (f"{message}\n{note}",)
        if str(exc) != exc.args[0]:  # a __str__ that ignores args after all
            exc.args = args
    except Exception:  # a __str__ or an args that misbehaves: leave the message alone
        with contextlib.suppress(Exception):
            exc.args = args
