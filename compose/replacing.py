"""Replace by name: ``replace(mine)`` in a middleware list takes the place of the member named
``mine.name`` (or ``name=``), nested composites included (applied in :mod:`.replaced`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from funcware.hooks.middleware import AgentMiddleware, origin

__all__ = ["Replacement", "replace"]


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
    """Mark ``middleware`` to replace the member named ``name`` (default: its own name):
    ``create_agent(middleware=[*defaults, replace(MySummarizer())])`` runs ``MySummarizer``
    where the default of the same name was (in ``compose()`` too)."""
    if name is not None and (not isinstance(name, str) or not name):
        raise TypeError(f"replace(name={name!r}) must be a non-empty str.")
    return Replacement(middleware, middleware.name if name is None else name)
