"""The async flavour of :mod:`.layers` (built on an agent's first async call).

The same steps as :class:`~funcware.compose.wraps.layers.Handler`, around awaited calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from funcware.compose.wraps.layers import (
    AsyncPiece,
    AsyncTail,
    Handler,
    LayerWrap,
    Outcome,
    Run,
    funcs,
)
from funcware.compose.wraps.updates import NO_WRITES
from funcware.hooks.middleware import HookImpl

if TYPE_CHECKING:
    from funcware.compose.wraps.onion import CallKind

__all__ = ["AsyncHandler", "async_chain", "async_tail_piece"]


async def async_tail_piece(request: Any, tail: AsyncTail) -> Outcome:
    """The innermost piece of an async onion."""
    return await tail(request), NO_WRITES


class AsyncHandler(Handler):
    """The async :class:`Handler`: the same steps around an awaited call."""

    __slots__ = ()

    async def call(self, request: Any) -> Any:
        at = self._started(request)
        run = self.run
        try:
            if at == run.size:
                response, writes = await run.inner(request, self.tail)
            else:
                inner = AsyncHandler(run, at, self.tail)
                result = await run.funcs[at](request, inner.call)
                response, writes = run.checked(at, result, inner)
        except BaseException as exc:
            self._failed(exc, at)
            raise
        return self._returned(response, writes)


def async_chain(
    impls: Sequence[HookImpl], kind: CallKind, inner: AsyncPiece, wrap: LayerWrap | None = None
) -> AsyncPiece:
    """Async layers ``impls`` (first outermost) around ``inner``, as one piece."""
    run = Run(impls, funcs(impls, "async_", wrap), kind, inner)

    async def piece(request: Any, tail: AsyncTail) -> Outcome:
        entry = AsyncHandler(run, -1, tail)
        return await entry.call(request), entry.writes

    return piece
