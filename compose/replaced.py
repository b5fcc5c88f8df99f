"""Putting each :func:`~funcware.compose.replacing.replace` in the place of the member it names.

Names stay unique: a second middleware of the same name is still refused unless marked with
``replace()``. A replacement that finds no member of that name, or two replacements for one
name, are refused with the names the list holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from funcware.compose.graph.argument_errors import member_problem
from funcware.compose.replacing import Replacement
from funcware.errors import BrokenStackError
from funcware.hooks.middleware import AgentMiddleware

__all__ = ["apply_replacements", "check_replacement"]


def check_replacement(replacement: Replacement, place: str) -> None:
    """A ``TypeError`` unless ``replacement`` (at ``place``) holds one middleware."""
    from funcware.compose.chain import ComposedMiddleware

    problem = member_problem(replacement.middleware, f"{place}'s replacement")
    if problem is None and isinstance(replacement.middleware, ComposedMiddleware):
        problem = (
            f"{place} replaces with a compose() of {len(replacement.middleware.members)} "
            "middleware; replace() takes one middleware: replace each member by its name."
        )
    if problem is not None:
        raise TypeError(problem)


def apply_replacements(
    flat: list[AgentMiddleware[Any, Any, Any]],
    replacements: Sequence[tuple[int, Replacement]],
    place: str,
) -> list[AgentMiddleware[Any, Any, Any]]:
    """``flat`` with each replacement in the place of the member it names.

    ``replacements`` holds ``(index in the given list, replacement)``; ``place`` names an
    item in errors (``{}`` is its index).
    """
    done: dict[str, str] = {}
    for index, replacement in replacements:
        where = f"{place.format(index)}, {replacement.describe()},"
        if replacement.name in done:
            raise BrokenStackError(
                f"{where} asks to replace middleware {replacement.name!r}, which "
                f"{done[replacement.name]} already replaces. Keep one of them."
            )
        at = [i for i, m in enumerate(flat) if m.name == replacement.name]
        if not at:
            names = ", ".join(repr(m.name) for m in flat) or "none"
            raise BrokenStackError(
                f"{where} asks to replace middleware {replacement.name!r}, but no middleware "
                f"in the list has that name (its middleware: {names}). Pass the name to "
                "replace as replace(middleware, name='...'), or add the middleware without "
                "replace()."
            )
        if len(at) > 1:
            raise BrokenStackError(
                f"{where} asks to replace middleware {replacement.name!r}, but "
                f"{len(at)} middleware have that name (positions "
                f"{', '.join(map(str, at))} of the flattened list). Give them distinct names."
            )
        flat[at[0]] = replacement.middleware
        done[replacement.name] = replacement.describe()
    return flat
