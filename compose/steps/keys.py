"""Writes to state keys the agent does not have: warned about (as LangChain, dropped) or refused.

langgraph drops a write to a key that no state schema declares, without a word, and
LangChain's agents rely on that; published middleware write such keys. funcware keeps the
run going the same way but warns once per middleware, hook and key
(:class:`UnknownStateKeyWarning`); ``effects="strict"`` and ``funcware.testing`` raise
:class:`UnknownStateKeyError` instead.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Iterable, Mapping

from langgraph.types import Command

from funcware.errors import UnknownStateKeyError, UnknownStateKeyWarning

__all__ = [
    "StateKeys",
    "UnknownStateKeyError",
    "UnknownStateKeyWarning",
    "check_keys",
    "written_keys",
]


class StateKeys(frozenset[str]):
    """The agent's state keys, and what a write to any other key does.

    ``strict``: raise :class:`UnknownStateKeyError`. Otherwise warn, once per hook (its
    ``owner`` text names the middleware and hook) and key, and let langgraph drop the
    write. It is a ``frozenset`` so that whatever takes the agent's keys takes it as is; a
    plain ``frozenset`` there is strict.
    """

    strict: bool
    _warned: set[tuple[str, str]]

    def __new__(cls, keys: Iterable[str], *, strict: bool = False) -> StateKeys:
        self = super().__new__(cls, keys)
        self.strict = strict
        self._warned = set()
        return self

    def warn_once(self, key: str, owner: str) -> None:
        """Warn that ``owner`` wrote ``key``, unless that was warned about already."""
        if (owner, key) in self._warned:
            return
        self._warned.add((owner, key))
        warnings.warn(
            _problem(
                key, self, owner, ": the write was dropped and the run goes on, as in LangChain"
            )
            + " (effects='strict' makes this an error.)",
            UnknownStateKeyWarning,
            stacklevel=3,
        )


def written_keys(result: object) -> list[str]:
    """The state keys a node-hook result or a ``Command`` writes."""
    update = result.update if isinstance(result, Command) else result
    if isinstance(update, Mapping):
        return [str(key) for key in update]
    if isinstance(update, (list, tuple)):
        return [str(pair[0]) for pair in update if isinstance(pair, tuple) and pair]
    return []


def _problem(key: str, known: frozenset[str], owner: str, outcome: str) -> str:
    close = difflib.get_close_matches(key, sorted(known), n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return (
        f"{owner} wrote state key {key!r}, which no state schema of this agent declares"
        f"{outcome}.{hint} Declare it in a state_schema (the middleware's "
        "class attribute, a TypedDict deriving from AgentState, or "
        f"create_agent(state_schema=...)). State keys: {', '.join(sorted(known))}."
    )


def check_keys(keys: Iterable[str], known: frozenset[str] | None, owner: str) -> None:
    """Check that ``owner`` (a hook) wrote only ``known`` keys; ``None``: nothing to check.

    A :class:`StateKeys` that is not strict warns for each other key (once per owner and
    key); else the first other key raises :class:`UnknownStateKeyError`.
    """
    if known is None:
        return
    for key in keys:
        if key in known:
            continue
        if isinstance(known, StateKeys) and not known.strict:
            known.warn_once(key, owner)
        else:
            raise UnknownStateKeyError(_problem(key, known, owner, ", so langgraph would drop it"))
