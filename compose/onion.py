"""The onion: wrap hooks folded into one call, first hook outermost, built once.

A *piece* takes ``(request, tail)`` and returns an outcome ``(response, writes)``; ``tail``
runs whatever lies inside the onion (the model or the tool). Each layer's ``handler`` is
the rest of the onion; it returns only the response, and the layer's own command (model
calls) is added to the writes collected from the last attempt of the layers inside it.

Layers that have only the other flavour are bridged in runs: in a sync onion, a run of
async-only layers runs on an event loop with an async handler around the sync rest; in an
async onion, a run of sync-only layers runs on a worker thread with a sync handler that
drives the async rest on the caller's loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from funcware.hooks.middleware import HookImpl

from .bridge import call_soon_in_loop, run_coroutine_sync, run_in_thread
from .failures import note_passed_through, note_raised
from .updates import NO_WRITES, Writes

__all__ = ["CallKind", "Outcome", "build_async", "build_sync"]

Outcome = tuple[Any, Writes]
Tail = Callable[[Any], Outcome]
AsyncTail = Callable[[Any], Awaitable[Outcome]]
Piece = Callable[[Any, Tail], Outcome]
AsyncPiece = Callable[[Any, AsyncTail], Awaitable[Outcome]]


@dataclass(frozen=True)
class CallKind:
    """What differs between model and tool onions: how a layer's result is checked."""

    hook: str
    normalize: Callable[[object, HookImpl], Outcome]
    """Check a layer's return value; give its response and its own writes."""


def _tail_piece(request: Any, tail: Tail) -> Outcome:
    return tail(request)


async def _async_tail_piece(request: Any, tail: AsyncTail) -> Outcome:
    return await tail(request)


def _sync_run(impls: Sequence[HookImpl], kind: CallKind, inner: Piece) -> Piece:
    """Sync layers ``impls`` (first outermost) around ``inner``, as one piece.

    Each layer's handler calls the next layer's function itself, so a layer costs two
    stack frames (its function and its handler): deep onions stay far from the limit.
    That is why the call of the next layer is written out inline, in both the sync and
    the async twin, rather than shared through a helper (one more frame per layer).
    """
    funcs = [impl.sync for impl in impls]
    assert all(func is not None for func in funcs)
    normalize = kind.normalize
    count = len(impls)

    def piece(request: Any, tail: Tail) -> Outcome:
        def handler_of(index: int, box: list[Writes]) -> Callable[[Any], Any]:
            def handler(req: Any) -> Any:
                box[0] = NO_WRITES
                after = index + 1
                if after == count:
                    try:
                        response, writes = inner(req, tail)
                    except BaseException as exc:
                        note_passed_through(exc)
                        raise
                else:
                    next_box = [NO_WRITES]
                    try:
                        result = funcs[after](req, handler_of(after, next_box))  # type: ignore[misc]
                    except BaseException as exc:
                        note_raised(exc, impls[after])
                        raise
                    response, own = normalize(result, impls[after])
                    writes = next_box[0] + own if own else next_box[0]
                box[0] = writes
                return response

            return handler

        box = [NO_WRITES]
        try:
            result = funcs[0](request, handler_of(0, box))  # type: ignore[misc]
        except BaseException as exc:
            note_raised(exc, impls[0])
            raise
        response, own = normalize(result, impls[0])
        return response, (box[0] + own if own else box[0])

    return piece


def _async_run(impls: Sequence[HookImpl], kind: CallKind, inner: AsyncPiece) -> AsyncPiece:
    """Async layers ``impls`` (first outermost) around ``inner``, as one piece."""
    funcs = [impl.async_ for impl in impls]
    assert all(func is not None for func in funcs)
    normalize = kind.normalize
    count = len(impls)

    async def piece(request: Any, tail: AsyncTail) -> Outcome:
        def handler_of(index: int, box: list[Writes]) -> Callable[[Any], Awaitable[Any]]:
            async def handler(req: Any) -> Any:
                box[0] = NO_WRITES
                after = index + 1
                if after == count:
                    try:
                        response, writes = await inner(req, tail)
                    except BaseException as exc:
                        note_passed_through(exc)
                        raise
                else:
                    next_box = [NO_WRITES]
                    try:
                        result = await funcs[after](req, handler_of(after, next_box))  # type: ignore[misc]
                    except BaseException as exc:
                        note_raised(exc, impls[after])
                        raise
                    response, own = normalize(result, impls[after])
                    writes = next_box[0] + own if own else next_box[0]
                box[0] = writes
                return response

            return handler

        box = [NO_WRITES]
        try:
            result = await funcs[0](request, handler_of(0, box))  # type: ignore[misc]
        except BaseException as exc:
            note_raised(exc, impls[0])
            raise
        response, own = normalize(result, impls[0])
        return response, (box[0] + own if own else box[0])

    return piece


def _async_run_in_sync(run: AsyncPiece, inner: Piece) -> Piece:
    def piece(request: Any, tail: Tail) -> Outcome:
        async def async_tail(req: Any) -> Outcome:
            return inner(req, tail)

        return run_coroutine_sync(run(request, async_tail))  # type: ignore[arg-type]

    return piece


def _sync_run_in_async(run: Piece, inner: AsyncPiece) -> AsyncPiece:
    async def piece(request: Any, tail: AsyncTail) -> Outcome:
        loop = asyncio.get_running_loop()

        def sync_tail(req: Any) -> Outcome:
            return call_soon_in_loop(loop, inner(req, tail))  # type: ignore[arg-type]

        return await run_in_thread(run, request, sync_tail)

    return piece


def _runs(
    impls: Sequence[HookImpl], native: Callable[[HookImpl], bool]
) -> list[tuple[bool, list[HookImpl]]]:
    """``impls`` cut into runs of layers that do / do not have the onion's own flavour."""
    return [(key, list(group)) for key, group in groupby(impls, key=native)]


def build_sync(impls: Sequence[HookImpl], kind: CallKind) -> Piece:
    """The sync onion of ``impls`` (first outermost)."""
    piece: Piece = _tail_piece
    for native, run in reversed(_runs(impls, lambda i: i.sync is not None)):
        if native:
            piece = _sync_run(run, kind, piece)
        else:
            piece = _async_run_in_sync(_async_run(run, kind, _async_tail_piece), piece)
    return piece


def build_async(impls: Sequence[HookImpl], kind: CallKind) -> AsyncPiece:
    """The async onion of ``impls`` (first outermost)."""
    piece: AsyncPiece = _async_tail_piece
    for native, run in reversed(_runs(impls, lambda i: i.async_ is not None)):
        if native:
            piece = _async_run(run, kind, piece)
        else:
            piece = _sync_run_in_async(_sync_run(run, kind, _tail_piece), piece)
    return piece
