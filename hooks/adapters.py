"""The adapt seam: middleware and state schemas of another library, seen in funcware's terms.

The core knows funcware's ``AgentMiddleware`` and ``AgentState``. A feature that knows
another library (``funcware.interop`` knows LangChain's) registers an :class:`Adapter`;
the core asks the registered adapters, in order, about what it does not know:

- ``hooks(middleware)`` for an object that is no funcware middleware: its hooks, or
  ``None`` when the adapter does not know it;
- ``fields(schema, hints)`` for every state schema the agent merges: its fields in
  funcware's terms (another library's markers and base fields replaced), or ``None``.

An adapter decides from the object itself (its class, its annotations), so what the core
does never depends on which libraries happen to be imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from funcware.hooks.middleware import HookImpl, HookName

__all__ = ["Adapter", "adapters", "register_adapter"]


class Adapter(Protocol):
    """Makes another library's middleware and state schemas usable by the core."""

    name: str

    def hooks(self, middleware: object) -> dict[HookName, HookImpl] | None:
        """``middleware``'s hooks, or ``None`` if this adapter does not know it."""
        ...

    def fields(self, schema: type, hints: dict[str, Any]) -> dict[str, Any] | None:
        """``schema``'s fields (``hints``) in funcware's terms, or ``None`` if unchanged."""
        ...


_ADAPTERS: list[Adapter] = []


def register_adapter(adapter: Adapter) -> Adapter:
    """Add ``adapter`` (once per name: a second one replaces the first)."""
    _ADAPTERS[:] = [a for a in _ADAPTERS if a.name != adapter.name]
    _ADAPTERS.append(adapter)
    return adapter


def adapters() -> tuple[Adapter, ...]:
    """The registered adapters, in registration order."""
    return tuple(_ADAPTERS)
