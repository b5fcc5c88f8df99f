"""The onion: wrap hooks folded into one call, first hook outermost, built once.

A *piece* takes ``(request, tail)`` and returns an outcome ``(response, writes)``; ``tail``
runs whatever lies inside the onion (the model or the tool) and returns its response; it
writes nothing, and it marks what it raises as passed through
(:func:`~funcware.compose.steps.failures.note_passed_through`), so that no layer gets the
note of an error it only passed on. Each layer's ``handler`` is
the rest of the onion; it returns only the response, and the layer's own command (model
calls) is added to the writes collected from the last attempt of the layers inside it.

A run of layers is folded per call (see :mod:`.layers`): each layer is called with a
small handler object of its own, so a layer costs two stack frames, as nested calls do,
and every layer's result gets the same check. An async run longer than the stack has room
for continues on a fresh task (a fresh stack) every :func:`stack_layers` layers, so its
depth is not bounded by the recursion limit; a shorter one never pays for a new task.

Layers that have only the other flavour are bridged in runs: in a sync onion, a run of
async-only layers runs on an event loop with an async handler around the sync rest; in an
async onion, a run of sync-only layers runs on a worker thread with a sync handler that
drives the async rest on the caller's loop.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from funcware.compose.threads.bridge import call_soon_in_loop, run_coroutine_sync, run_in_thread
from funcware.compose.wraps.layers import (
    AsyncPiece,
    AsyncTail,
    Outcome,
    Piece,
    Tail,
    async_chain,
    async_outcome_piece,
    async_tail_piece,
    outcome_piece,
    sync_chain,
    tail_piece,
)
from funcware.hooks.middleware import HookImpl

__all__ = [
    "FRAMES_PER_LAYER",
    "FRESH_STACK_EVERY",
    "CallKind",
    "Outcome",
    "build_async",
    "build_sync",
    "stack_layers",
]

FRESH_STACK_EVERY = 250
"""Async layers per stack at the default recursion limit, and the step between the places
where a longer onion may continue on a new task."""

FRAMES_PER_LAYER = 4
"""Stack frames budgeted per async layer: the onion's two and two of the user's own."""


def stack_layers() -> int:
    """Async layers one stack holds at the current recursion limit (a multiple of 250).

    Read when a call reaches a possible new stack, so a limit raised after the agent was
    built is used too; 1000 (the default) gives 250.
    """
    room = sys.getrecursionlimit() // FRAMES_PER_LAYER
    return max(FRESH_STACK_EVERY, room - room % FRESH_STACK_EVERY)


@dataclass(frozen=True)
class CallKind:
    """What differs between model and tool onions: how a layer's result is checked."""

    hook: str
    normalize: Callable[[object, HookImpl], Outcome]
    """Check a layer's return value; give its response and its own writes."""
    plain: type | None = None
    """Results of exactly this type pass unchecked, with no writes (the fast path)."""


def _async_run_in_sync(run: AsyncPiece, inner: Piece) -> Piece:
    """A run built around :func:`async_outcome_piece`, on an event loop, around ``inner``."""

    def piece(request: Any, tail: Tail) -> Outcome:
        async def async_tail(req: Any) -> Outcome:
            return inner(req, tail)

        return run_coroutine_sync(run(request, async_tail))  # type: ignore[arg-type]

    return piece


def _sync_run_in_async(run: Piece, inner: AsyncPiece) -> AsyncPiece:
    """A run built around :func:`outcome_piece`, on a worker thread, around ``inner``."""

    async def piece(request: Any, tail: AsyncTail) -> Outcome:
        loop = asyncio.get_running_loop()

        def sync_tail(req: Any) -> Outcome:
            return call_soon_in_loop(loop, inner(req, tail))  # type: ignore[arg-type]

        return await run_in_thread(run, request, sync_tail)

    return piece


def _on_fresh_stack(inner: AsyncPiece, start: int) -> AsyncPiece:
    """``inner`` (layers from ``start`` of its run on) as its own task when the stack is full.

    The new task starts on an empty stack and is cancelled with ours. Where the recursion
    limit leaves room for more layers, ``inner`` runs on the caller's stack: a new task
    costs a turn of the event loop and suspending every layer above it.
    """

    async def piece(request: Any, tail: AsyncTail) -> Outcome:
        if start % stack_layers():
            return await inner(request, tail)
        return await asyncio.ensure_future(inner(request, tail))

    return piece


def _async_runs(impls: Sequence[HookImpl], kind: CallKind, inner: AsyncPiece) -> AsyncPiece:
    """Async layers ``impls`` around ``inner``, in chains of FRESH_STACK_EVERY layers."""
    piece = inner
    starts = range(0, len(impls), FRESH_STACK_EVERY)
    for start in reversed(starts):
        if start + FRESH_STACK_EVERY < len(impls):
            piece = _on_fresh_stack(piece, start + FRESH_STACK_EVERY)
        piece = async_chain(impls[start : start + FRESH_STACK_EVERY], kind, piece)
    return piece


def _runs(
    impls: Sequence[HookImpl], native: Callable[[HookImpl], bool]
) -> list[tuple[bool, list[HookImpl]]]:
    """``impls`` cut into runs of layers that do / do not have the onion's own flavour."""
    return [(key, list(group)) for key, group in groupby(impls, key=native)]


def build_sync(impls: Sequence[HookImpl], kind: CallKind) -> Piece:
    """The sync onion of ``impls`` (first outermost)."""
    piece: Piece = tail_piece
    for native, run in reversed(_runs(impls, lambda i: i.sync is not None)):
        if native:
            piece = sync_chain(run, kind, piece)
        else:
            piece = _async_run_in_sync(_async_runs(run, kind, async_outcome_piece), piece)
    return piece


def build_async(impls: Sequence[HookImpl], kind: CallKind) -> AsyncPiece:
    """The async onion of ``impls`` (first outermost)."""
    piece: AsyncPiece = async_tail_piece
    for native, run in reversed(_runs(impls, lambda i: i.async_ is not None)):
        if native:
            piece = _async_runs(run, kind, piece)
        else:
            piece = _sync_run_in_async(sync_chain(run, kind, outcome_piece), piece)
    return piece
