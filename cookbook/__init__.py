"""funcware.cookbook — one self-contained, copy-pasteable recipe per module.

Each recipe module has a docstring (what it does, when to use it, how to adapt it) and a
``demo()`` that runs it offline on ``ScriptedChatModel`` and returns ``(agent, state)``;
a recipe may also define ``highlights(agent, state) -> list[str]``, lines the tour prints
to show what it did. Every recipe's middleware declares its effects (``reads=``/``writes=``,
and ordering constraints where its meaning depends on placement), and its demo keeps to
them under ``effects="strict"``.
``python -m funcware.cookbook`` runs the tour; ``python -m funcware.cookbook NAME`` one.
"""

from __future__ import annotations

import difflib
import importlib
from types import ModuleType

__all__ = ["RECIPES", "load", "suggestion"]

RECIPES: tuple[str, ...] = (
    "message_limit",
    "model_call_counter",
    "logging_around_model",
    "model_retry",
    "model_fallback",
    "prompt_from_context",
    "dynamic_model",
    "tool_selection",
    "tool_monitoring",
    "tool_call_limit",
    "tool_retry",
    "schema_tool",
    "usage_tracking",
    "outer_wins",
    "content_guard",
    "pii_redaction",
    "guarded_stream",
    "human_approval",
    "prompt_caching",
    "summarize_history",
    "resilient_hooks",
    "structured_triage",
    "routed_fallback",
    "once_per_call",
)
"""Recipe module names, in tour order."""


def suggestion(name: str) -> str:
    """``" (did you mean 'x'?)"`` with the recipe name closest to ``name``, or ``""``."""
    close = difflib.get_close_matches(name, RECIPES, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def load(name: str) -> ModuleType:
    """Import the recipe module ``name`` (one of :data:`RECIPES`)."""
    if name not in RECIPES:
        raise KeyError(f"no recipe named {name!r}{suggestion(name)}; recipes: {', '.join(RECIPES)}")
    return importlib.import_module(f"{__name__}.{name}")
