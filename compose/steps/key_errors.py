"""A write to a state key the agent does not have, in words (loaded only when one happens)."""

from __future__ import annotations

import difflib
import warnings

from funcware.compose.steps.keys import StateKeys
from funcware.errors import UnknownStateKeyError, UnknownStateKeyWarning

__all__ = ["unknown_key"]


def _problem(key: str, known: frozenset[str], owner: str, outcome: str) -> str:
    close = difflib.get_close_matches(key, sorted(known), n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return (
        f"{owner} wrote state key {key!r}, which no state schema of this agent declares"
        f"{outcome}.{hint} Declare it in a state_schema (the middleware's "
        "class attribute, a TypedDict deriving from AgentState, or "
        f"create_agent(state_schema=...)). State keys: {', '.join(sorted(known))}."
    )


def unknown_key(key: str, known: frozenset[str], owner: str) -> None:
    """Warn (once per ``owner`` and ``key``) that ``owner`` wrote ``key``, unknown to the
    agent; raise :class:`UnknownStateKeyError` instead if ``known`` is strict."""
    if not isinstance(known, StateKeys) or known.strict:
        raise UnknownStateKeyError(_problem(key, known, owner, ", so langgraph would drop it"))
    if (owner, key) in known.warned:
        return
    known.warned.add((owner, key))
    outcome = ": the write was dropped and the run goes on, as in LangChain"
    warnings.warn(
        _problem(key, known, owner, outcome) + " (effects='strict' makes this an error.)",
        UnknownStateKeyWarning,
        stacklevel=3,
    )
