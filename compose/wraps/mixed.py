"""Bridging a run of layers of the other flavour into an onion (built only for mixed onions).

In a sync onion, a run of async-only layers runs on an event loop with an async handler
around the sync rest; in an async onion, a run of sync-only layers runs on a worker thread
with a sync handler that drives the async rest on the caller's loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from funcware.compose.threads.bridge import call_soon_in_loop, run_coroutine_sync, run_in_thread
from funcware.compose.wraps.async_layers import async_chain
from funcware.compose.wraps.layers import (
    AsyncPiece,
    AsyncTail,
    LayerWrap,
    Outcome,
    Piece,
    Tail,
    sync_chain,
)
from funcware.hooks.middleware import HookImpl

if TYPE_CHECKING:
    from funcware.compose.wraps.onion import CallKind

__all__ = ["async_run_in_sync", "sync_run_in_async"]


def _outcome_piece(request: Any, tail: Callable[[Any], Outcome]) -> Outcome:
    """The innermost piece of a bridged run: its tail gives an outcome."""
    return tail(request)


async def _async_outcome_piece(request: Any, tail: Callable[[Any], Awaitable[Outcome]]) -> Outcome:
    """The async :func:`_outcome_piece`."""
    return await tail(request)


def async_run_in_sync(
    impls: Sequence[HookImpl], kind: CallKind, inner: Piece, wrap: LayerWrap | None
) -> Piece:
    """Async-only layers ``impls``, on an event loop, around the sync ``inner``."""
    run = async_chain(impls, kind, _async_outcome_piece, wrap)

    def piece(request: Any, tail: Tail) -> Outcome:
        async def async_tail(req: Any) -> Outcome:
            return inner(req, tail)

        return run_coroutine_sync(run(request, async_tail))  # type: ignore[arg-type]

    return piece


def sync_run_in_async(
    impls: Sequence[HookImpl], kind: CallKind, inner: AsyncPiece, wrap: LayerWrap | None
) -> AsyncPiece:
    """Sync-only layers ``impls``, on a worker thread, around the async ``inner``."""
    run = sync_chain(impls, kind, _outcome_piece, wrap)

    async def piece(request: Any, tail: AsyncTail) -> Outcome:
        loop = asyncio.get_running_loop()

        def sync_tail(req: Any) -> Outcome:
            return call_soon_in_loop(loop, inner(req, tail))  # type: ignore[arg-type]

        return await run_in_thread(run, request, sync_tail)

    return piece
