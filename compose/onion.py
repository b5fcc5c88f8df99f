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


def _sync_layer(impl: HookImpl, kind: CallKind, inner: Piece) -> Piece:
    func = impl.sync
    assert func is not None
    normalize = kind.normalize

    def piece(request: Any, tail: Tail) -> Outcome:
        last: Writes = NO_WRITES

        def handler(req: Any) -> Any:
            nonlocal last
            last = NO_WRITES
            try:
                response, last = inner(req, tail)
            except BaseException as exc:
                note_passed_through(exc)
                raise
            return response

        try:
            result = func(request, handler)
        except BaseException as exc:
            note_raised(exc, impl)
            raise
        response, own = normalize(result, impl)
        return response, (last + own) if own else last

    return piece


def _async_layer(impl: HookImpl, kind: CallKind, inner: AsyncPiece) -> AsyncPiece:
    func = impl.async_
    assert func is not None
    normalize = kind.normalize

    async def piece(request: Any, tail: AsyncTail) -> Outcome:
        last: Writes = NO_WRITES

        async def handler(req: Any) -> Any:
            nonlocal last
            last = NO_WRITES
            try:
                response, last = await inner(req, tail)
            except BaseException as exc:
                note_passed_through(exc)
                raise
            return response

        try:
            result = await func(request, handler)
        except BaseException as exc:
            note_raised(exc, impl)
            raise
        response, own = normalize(result, impl)
        return response, (last + own) if own else last

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
            for impl in reversed(run):
                piece = _sync_layer(impl, kind, piece)
            continue
        bridged: AsyncPiece = _async_tail_piece
        for impl in reversed(run):
            bridged = _async_layer(impl, kind, bridged)
        piece = _async_run_in_sync(bridged, piece)
    return piece


def build_async(impls: Sequence[HookImpl], kind: CallKind) -> AsyncPiece:
    """The async onion of ``impls`` (first outermost)."""
    piece: AsyncPiece = _async_tail_piece
    for native, run in reversed(_runs(impls, lambda i: i.async_ is not None)):
        if native:
            for impl in reversed(run):
                piece = _async_layer(impl, kind, piece)
            continue
        bridged: Piece = _tail_piece
        for impl in reversed(run):
            bridged = _sync_layer(impl, kind, bridged)
        piece = _sync_run_in_async(bridged, piece)
    return piece
