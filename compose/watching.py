"""What the core asks of the watcher, the observation feature's object that runs a call
while something observes it (:func:`funcware.compose.observing.watcher`). For type
checkers: the core only calls these methods."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from funcware.hooks.middleware import HookImpl

__all__ = ["Watcher"]

T = TypeVar("T")


class Watcher(Protocol):
    """Runs calls while something observes them (the observation feature's)."""

    def run(self, graph: Any, input: Any, config: Any) -> AbstractContextManager[Any]:
        """Around one agent run (``invoke``, ``stream`` and their async twins)."""

    def node(self, impl: HookImpl, call: Callable[[], T]) -> T:
        """Run one node hook (``call()``), telling the observers how it went."""

    async def anode(self, impl: HookImpl, call: Callable[[], Awaitable[T]]) -> T:
        """Async :meth:`node`."""

    def model(self, request: Any, call: Callable[[Any], T]) -> T:
        """Run the model itself (``call(request)``), innermost in the onion."""

    async def amodel(self, request: Any, call: Callable[[Any], Awaitable[T]]) -> T:
        """Async :meth:`model`."""

    def tool(self, name: str, request: Any, call: Callable[[Any], T]) -> T:
        """Run the tool itself (``call(request)``), innermost in the onion."""

    async def atool(self, name: str, request: Any, call: Callable[[Any], Awaitable[T]]) -> T:
        """Async :meth:`tool`."""

    def layer(self, impl: HookImpl, func: Callable[..., Any], is_async: bool) -> Callable[..., Any]:
        """``func`` (a wrap layer's ``(request, handler) -> result``) told to the observers;
        called once per layer when the observed onion is built."""

    def continued(self, error: BaseException) -> None:
        """The current layer's ``error`` was passed over (``on_error="continue"``)."""
