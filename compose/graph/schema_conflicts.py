"""Two declarations of one state field with different types: widened into one where one
type holds the other (``str`` beside ``str | None``), else a warning (loaded only then).

LangChain builds such an agent without a word, the later declaration winning; funcware
builds it the same way and says so with a :class:`StateSchemaConflictWarning`.
"""

from __future__ import annotations

import warnings
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from funcware.errors import StateSchemaConflictWarning

__all__ = ["warn_conflict", "widened"]


def _split(annotation: Any) -> tuple[Any, tuple[Any, ...]]:
    """A field's type without its ``Annotated`` extras, and the extras."""
    extras = tuple(getattr(annotation, "__metadata__", ()))
    return (get_args(annotation)[0] if extras else annotation), extras


def _members(annotation: Any) -> set[Any]:
    """The types a union admits (``str | None``: ``str`` and ``None``); a type itself."""
    if get_origin(annotation) in (Union, UnionType):
        return set(get_args(annotation))
    return {annotation}


def widened(first: Any, second: Any) -> Any | None:
    """One declaration admitting both, where one type holds the other and their extras
    agree (or one has none); ``None`` when they conflict.

    LangChain keeps the last declaration; a wider one serves the code of both owners.
    """
    (base_a, extras_a), (base_b, extras_b) = _split(first), _split(second)
    if extras_a and extras_b and extras_a != extras_b:
        return None
    if _members(base_a) <= _members(base_b):
        wider = base_b
    elif _members(base_b) <= _members(base_a):
        wider = base_a
    else:
        return None
    extras = extras_a or extras_b
    if not extras:
        return wider
    params = (wider, *extras)
    return Annotated[params]


def warn_conflict(key: str, first: Any, first_owner: object, second: Any, owner: object) -> None:
    """Warn that ``owner`` declares ``key`` as ``second`` where ``first_owner`` said ``first``."""
    warnings.warn(
        f"State field {key!r} is declared as {first!r} by {first_owner} and as {second!r} "
        f"by {owner}; the agent is built with the later declaration ({second!r}), as "
        "LangChain builds it, so the other middleware's code may read a value of a type it "
        "does not expect. Give the fields different names or declare them with the same type.",
        StateSchemaConflictWarning,
        stacklevel=2,
    )
