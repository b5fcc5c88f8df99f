"""State updates as ordered ``(key, value)`` writes (inner first, outer last), merged so
every write to a reducer key is kept and the outermost write to a plain key wins.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from funcware.compose.wraps.layers import NO_WRITES, Writes

__all__ = ["NO_WRITES", "Writes", "as_update", "merge_writes", "update_writes"]


def update_writes(update: object, owner: str) -> Writes:
    """The writes of a ``Command.update`` or dict update (a dict, or ``(key, value)`` pairs)."""
    if update is None:
        return NO_WRITES
    if isinstance(update, Mapping):
        return tuple((str(key), value) for key, value in update.items())
    if isinstance(update, (list, tuple)) and all(
        isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str) for item in update
    ):
        return tuple(update)
    raise TypeError(
        f"{owner} returned a Command whose update is {type(update).__name__}; "
        "use a dict of state keys to values (or a list of (key, value) pairs)."
    )


def merge_writes(writes: Iterable[tuple[str, Any]], reducer_keys: frozenset[str]) -> Writes:
    """Keep every write to a reducer key; of the writes to a plain key keep only the last."""
    ordered = tuple(writes)
    last_index: dict[str, int] = {}
    for index, (key, _) in enumerate(ordered):
        if key not in reducer_keys:
            last_index[key] = index
    return tuple(
        (key, value)
        for index, (key, value) in enumerate(ordered)
        if key in reducer_keys or last_index[key] == index
    )


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, Sequence) and not isinstance(value, str) else [value]


def as_update(writes: Writes) -> dict[str, Any] | list[tuple[str, Any]]:
    """Writes as a ``Command.update``: a dict when every key is written once (``messages``
    writes joined into one list); else ``(key, value)`` pairs, so a reducer sees each."""
    joined: list[tuple[str, Any]] = []
    messages_at: int | None = None
    for key, value in writes:
        if key == "messages" and messages_at is not None:
            earlier = joined[messages_at][1]
            joined[messages_at] = ("messages", [*_as_list(earlier), *_as_list(value)])
            continue
        if key == "messages":
            messages_at = len(joined)
        joined.append((key, value))
    keys = [key for key, _ in joined]
    if len(keys) == len(set(keys)):
        return dict(joined)
    return joined
