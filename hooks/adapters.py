"""The adapt seam: middleware and state schemas of another library, seen in funcware's terms.

The core knows funcware's ``AgentMiddleware`` and ``AgentState``. A feature that knows
another library (``funcware.interop`` knows LangChain's) registers an :class:`Adapter`;
the core asks the registered adapters, in order, about what it does not know:

- ``hooks(middleware)`` for an object that is no funcware middleware: its hooks, or
  ``None`` when the adapter does not know it;
- ``fields(schema, hints)`` for every state schema the agent merges: its fields in
  funcware's terms (another library's markers and base fields replaced), or ``None``.

An adapter decides from the object itself (its class, its annotations), so what the core
does never depends on which libraries happen to be imported. A :class:`Foreign` adapter is
registered by where it lives and the modules it knows: it is imported, and asked, only
about objects from those modules.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any, Protocol, get_args, get_origin

from typing_extensions import NotRequired, Required

if TYPE_CHECKING:
    from funcware.hooks.middleware import HookImpl, HookName

__all__ = ["Adapter", "Foreign", "adapters", "register_adapter"]


class Adapter(Protocol):
    """Makes another library's middleware and state schemas usable by the core."""

    name: str

    def hooks(self, middleware: object) -> dict[HookName, HookImpl] | None:
        """``middleware``'s hooks, or ``None`` if this adapter does not know it."""
        ...

    def fields(self, schema: type, hints: dict[str, Any]) -> dict[str, Any] | None:
        """``schema``'s fields (``hints``) in funcware's terms, or ``None`` if unchanged."""
        ...


@dataclass
class Foreign:
    """An adapter (``"module:Class"``) for objects defined in ``modules`` (prefixes): a
    middleware whose class or a base comes from there, a schema with a field marker that
    does. Imported the first time such an object is met."""

    name: str
    target: str
    modules: tuple[str, ...]
    _loaded: Adapter | None = None

    def _ours(self, classes: Any) -> bool:
        return any(getattr(c, "__module__", "").startswith(self.modules) for c in classes)

    def _adapter(self) -> Adapter:
        if self._loaded is None:
            module, _, attribute = self.target.partition(":")
            self._loaded = getattr(import_module(module), attribute)()
        return self._loaded

    def hooks(self, middleware: object) -> dict[HookName, HookImpl] | None:
        """The hooks, for a middleware whose class comes from this adapter's modules."""
        if not self._ours(type(middleware).__mro__):
            return None
        return self._adapter().hooks(middleware)

    def fields(self, schema: type, hints: dict[str, Any]) -> dict[str, Any] | None:
        """The fields, for a schema with a field marker from this adapter's modules."""
        markers = (type(m) for hint in hints.values() for m in _metadata(hint))
        if not self._ours(markers):
            return None
        return self._adapter().fields(schema, hints)


def _metadata(annotation: Any) -> tuple[Any, ...]:
    while get_origin(annotation) in (Required, NotRequired):
        annotation = get_args(annotation)[0]
    return tuple(getattr(annotation, "__metadata__", ()))


_ADAPTERS: list[Adapter] = []


def register_adapter(adapter: Adapter) -> Adapter:
    """Add ``adapter`` (once per name: a second one replaces the first)."""
    _ADAPTERS[:] = [a for a in _ADAPTERS if a.name != adapter.name]
    _ADAPTERS.append(adapter)
    return adapter


def adapters() -> tuple[Adapter, ...]:
    """The registered adapters, in registration order."""
    return tuple(_ADAPTERS)
