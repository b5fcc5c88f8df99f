"""Replace by name: ``replace(mine)`` in a middleware list takes the place of the member
named ``mine.name`` (or ``name=``), wherever it sits, nested composites included.

Names stay unique: a second middleware of the same name is still refused unless it is
marked with :func:`replace`. A replacement that finds no member of that name, or two
replacements for one name, are refused with the names the list holds. The checks on the
list (names, declared order, hazards) run on the list as replaced.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from funcware.errors import BrokenStackError
from funcware.hooks.middleware import AgentMiddleware, origin

__all__ = ["Replacement", "apply_replacements", "replace"]


@dataclass(frozen=True)
class Replacement:
    """A middleware marked to take the place of the list's member named :attr:`name`."""

    middleware: AgentMiddleware[Any, Any, Any]
    name: str

    def describe(self) -> str:
        """``replace('mine' (file:line), name='theirs')``, for error messages."""
        shown = f"{self.middleware.name!r} ({origin(self.middleware)})"
        if self.name == self.middleware.name:
            return f"replace({shown})"
        return f"replace({shown}, name={self.name!r})"


def replace(middleware: AgentMiddleware[Any, Any, Any], name: str | None = None) -> Replacement:
    """Mark ``middleware`` to replace the member named ``name`` (default: its own name).

    ``create_agent(middleware=[*defaults, replace(MySummarizer())])`` runs ``MySummarizer``
    where the default of the same name was, in ``compose()`` as in ``create_agent``.
    """
    if name is not None and (not isinstance(name, str) or not name):
        raise TypeError(f"replace(name={name!r}) must be a non-empty str.")
    return Replacement(middleware, middleware.name if name is None else name)


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
