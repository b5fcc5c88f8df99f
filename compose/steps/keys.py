"""Writes to state keys the agent does not have: dropped as langgraph drops them, with one
``UnknownStateKeyWarning`` per hook and key (``effects="strict"``: ``UnknownStateKeyError``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from langgraph.types import Command

__all__ = ["StateKeys", "check_keys", "written_keys"]


class StateKeys(frozenset[str]):
    """The agent's state keys; a write to another raises if ``strict``, else warns once per
    hook and key (a plain ``frozenset`` in its place is strict)."""

    strict: bool
    warned: set[tuple[str, str]]
    """``(owner, key)`` pairs warned about already."""

    def __new__(cls, keys: Iterable[str], *, strict: bool = False) -> StateKeys:
        self = super().__new__(cls, keys)
        self.strict = strict
        self.warned = set()
        return self


def written_keys(result: object) -> list[str]:
    """The state keys a node-hook result or a ``Command`` writes."""
    update = result.update if isinstance(result, Command) else result
    if isinstance(update, Mapping):
        return [str(key) for key in update]
    if isinstance(update, (list, tuple)):
        return [str(pair[0]) for pair in update if isinstance(pair, tuple) and pair]
    return []


def check_keys(keys: Iterable[str], known: frozenset[str] | None, owner: str) -> None:
    """Check that ``owner`` (a hook) wrote only ``known`` keys; ``None``: nothing to check."""
    if known is None:
        return
    for key in keys:
        if key not in known:
            from funcware.compose.steps.key_errors import unknown_key

            unknown_key(key, known, owner)
