"""Refusing writes to state keys the agent does not have (langgraph drops them silently).

A hook that returns ``{"mesages": [...]}`` would otherwise lose its update without a
word; in an agent, every key a hook or a wrap's command writes must be a state field.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

from langgraph.types import Command

__all__ = ["UnknownStateKeyError", "check_keys", "written_keys"]


class UnknownStateKeyError(ValueError):
    """A hook wrote a state key that no state schema of the agent declares."""


def written_keys(result: object) -> list[str]:
    """The state keys a node-hook result or a ``Command`` writes."""
    update = result.update if isinstance(result, Command) else result
    if isinstance(update, Mapping):
        return [str(key) for key in update]
    if isinstance(update, (list, tuple)):
        return [str(pair[0]) for pair in update if isinstance(pair, tuple) and pair]
    return []


def check_keys(keys: Iterable[str], known: frozenset[str] | None, owner: str) -> None:
    """Raise :class:`UnknownStateKeyError` for the first of ``keys`` not in ``known``."""
    if known is None:
        return
    for key in keys:
        if key in known:
            continue
        close = difflib.get_close_matches(key, sorted(known), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise UnknownStateKeyError(
            f"{owner} wrote state key {key!r}, which no state schema of this agent "
            f"declares, so langgraph would drop it.{hint} Declare it in a state_schema "
            "(the middleware's, or create_agent(state_schema=...)). State keys: "
            f"{', '.join(sorted(known))}."
        )
