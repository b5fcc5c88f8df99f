"""Refusing an ``interrupt()`` that could never be resumed (an agent with no checkpointer).

Without a checkpointer langgraph pauses the run, returns ``__interrupt__`` and keeps
nothing, so the later ``Command(resume=...)`` fails without saying who paused. funcware
raises at the interrupt instead, naming the hook (or tool) that called ``interrupt()``.
"""

from __future__ import annotations

import contextlib
from typing import Any

from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER
from langgraph.errors import GraphInterrupt

from funcware.errors import MissingCheckpointerError

__all__ = ["MissingCheckpointerError", "mark_interrupter", "refuse_unresumable"]

_RAISED_IN = "__funcware_interrupted_in__"


def mark_interrupter(exc: BaseException, owner: str) -> None:
    """Remember on an interrupt which hook raised it (the first to see it, the innermost)."""
    if isinstance(exc, GraphInterrupt) and not hasattr(exc, _RAISED_IN):
        with contextlib.suppress(AttributeError):
            setattr(exc, _RAISED_IN, owner)


def refuse_unresumable(exc: BaseException, config: Any, owner: str) -> None:
    """Raise :class:`MissingCheckpointerError` if ``exc`` is an interrupt nothing can resume.

    ``config`` is the node's config (``None`` outside a graph: then nothing is checked);
    ``owner`` says who ran, used when no hook marked the interrupt as its own.
    """
    if not isinstance(exc, GraphInterrupt) or not isinstance(config, dict):
        return
    if config.get("configurable", {}).get(CONFIG_KEY_CHECKPOINTER) is not None:
        return
    who = getattr(exc, _RAISED_IN, owner)
    raise MissingCheckpointerError(
        f"{who} called interrupt(), but this agent has no checkpointer, so the paused run "
        "could not be resumed. Build the agent with a checkpointer, e.g. "
        "create_agent(..., checkpointer=InMemorySaver()) (langgraph.checkpoint.memory), and "
        "run it with config={'configurable': {'thread_id': '...'}}."
    ) from exc
