"""The adapt seam: the core asks the registered adapters, in order, about middleware and
state schemas that are not funcware's; each decides from the object itself, or answers
``None`` (see ``docs/architecture.md``)."""

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

    def fields(self, schema: type, hints: dict[str, Any]) -> dict[str, Any] | None:
        """``schema``'s fields (``hints``) in funcware's terms, or ``None`` if unchanged."""


@dataclass
class Foreign:
    """An adapter (``"module:Class"``), imported and asked only about objects from
    ``modules`` (prefixes): a middleware class or base, or a schema's field marker."""

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
