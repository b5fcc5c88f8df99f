"""The handlers of a chain that keep state: one small object per layer boundary.

The handler given to layer ``i`` is the bound ``handler`` method of a link when layer
``i + 1`` is checked (its result may be a command, an ``AIMessage`` or a bad value). A
link's state sits in its slots, and its code is shared by every link, so a call touches
one object of the link's own: in a deep onion that keeps the handlers in the cache, where
a closure per handler would also touch a cell per variable.

A link knows whether an attempt of it is running; an attempt that starts while another
runs (a layer that races its handler) is handed to :attr:`Run.overlapping`, which runs
it on a chain of its own. The writes of what lies inside live in ``chain.last`` (see
:mod:`.chain_state`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from funcware.hooks.middleware import HookImpl

from ..steps.failures import note_passed_through
from .updates import NO_WRITES, Writes

if TYPE_CHECKING:
    from .chain_state import Outcome, Piece, _Chain, _Proofs

__all__ = ["STATELESS", "AsyncInnermost", "AsyncLink", "Innermost", "Link", "Run", "merged"]


def merged(inside: Writes, own: Writes) -> Writes:
    """The writes of a layer's result: what lies inside it, then its own."""
    return inside + own if own else inside


class Run:
    """What every link of one run of layers shares."""

    __slots__ = ("normalize", "overlapping", "plain", "proofs")

    def __init__(
        self,
        normalize: Callable[[object, HookImpl], Outcome],
        plain: type | None,
        proofs: _Proofs,
        overlapping: Callable[[_Chain, int, Any], Any],
    ) -> None:
        self.normalize = normalize
        self.plain = plain
        self.proofs = proofs
        self.overlapping = overlapping
        """Runs an attempt that started while another attempt of the same handler runs."""


class _Stateless:
    """The state of a handler that keeps none: the tail itself, or a proven layer's call."""

    __slots__ = ()
    running = False


STATELESS = _Stateless()


class _Checked:
    """A link around a checked layer: calls it and checks what it returned."""

    __slots__ = (
        "after",
        "chain",
        "func",
        "handler_next",
        "impl",
        "index",
        "plain",
        "run",
        "running",
    )

    def __init__(
        self,
        run: Run,
        chain: _Chain,
        index: int,
        func: Callable[..., Any],
        impl: HookImpl,
        handler_next: Callable[[Any], Any],
    ) -> None:
        self.run = run
        self.chain = chain
        self.index = index
        """The layer this link is given to; it calls layer ``index + 1``."""
        self.after = index + 1
        self.func = func
        self.impl = impl
        self.handler_next = handler_next
        self.plain = run.plain
        self.running = False

    def failed(self, exc: BaseException) -> None:
        """An attempt raised: forget its writes and note the error as its layer's."""
        self.running = False
        chain = self.chain
        chain.last = NO_WRITES
        self.run.proofs.note(exc, chain.handlers, self.after)

    def settle(self, result: Any) -> Any:
        """A result not of the plain type: check it, keep its writes, give the response."""
        try:  # a bad value is noted as this layer's
            response, own = self.run.normalize(result, self.impl)
        except BaseException as exc:
            self.failed(exc)
            raise
        chain = self.chain
        chain.last = merged(chain.last, own)
        return response


class Link(_Checked):
    """A sync link."""

    __slots__ = ()

    def handler(self, req: Any) -> Any:
        if self.running:
            return self.run.overlapping(self.chain, self.index, req)
        self.running = True
        self.chain.last = NO_WRITES
        try:
            result = self.func(req, self.handler_next)
        except BaseException as exc:
            self.failed(exc)
            raise
        self.running = False
        if result.__class__ is self.plain:
            return result
        return self.settle(result)


class AsyncLink(_Checked):
    """An async link: the twin of :class:`Link`, written out (a shared helper is a frame)."""

    __slots__ = ()

    async def handler(self, req: Any) -> Any:
        if self.running:
            return await self.run.overlapping(self.chain, self.index, req)
        self.running = True
        self.chain.last = NO_WRITES
        try:
            result = await self.func(req, self.handler_next)
        except BaseException as exc:
            self.failed(exc)
            raise
        self.running = False
        if result.__class__ is self.plain:
            return result
        return self.settle(result)


class _Inside:
    """The handler given to the last layer when a run is bridged: runs the piece inside."""

    __slots__ = ("chain", "index", "inner", "run", "running")

    def __init__(self, run: Run, chain: _Chain, index: int, inner: Any) -> None:
        self.run = run
        self.chain = chain
        self.index = index
        self.inner = inner
        """The piece inside the run: ``(request, tail) -> (response, writes)``."""
        self.running = False

    def failed(self, exc: BaseException) -> None:
        self.running = False
        self.chain.last = NO_WRITES
        note_passed_through(exc)


class Innermost(_Inside):
    """The sync innermost handler."""

    __slots__ = ()
    inner: Piece

    def handler(self, req: Any) -> Any:
        if self.running:
            return self.run.overlapping(self.chain, self.index, req)
        self.running = True
        chain = self.chain
        try:
            response, writes = self.inner(req, chain.tail)
        except BaseException as exc:
            self.failed(exc)
            raise
        self.running = False
        chain.last = writes
        return response


class AsyncInnermost(_Inside):
    """The async innermost handler."""

    __slots__ = ()

    async def handler(self, req: Any) -> Any:
        if self.running:
            return await self.run.overlapping(self.chain, self.index, req)
        self.running = True
        chain = self.chain
        try:
            response, writes = await self.inner(req, chain.tail)
        except BaseException as exc:
            self.failed(exc)
            raise
        self.running = False
        chain.last = writes
        return response
