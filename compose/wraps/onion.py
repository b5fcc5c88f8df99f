"""The onion: wrap hooks folded into one call, first hook outermost, built once.

A *piece* takes ``(request, tail)`` and returns an outcome ``(response, writes)``; ``tail``
runs whatever lies inside the onion (the model or the tool) and returns its response; it
writes nothing, and it marks what it raises as passed through
(:func:`~funcware.compose.steps.failures.note_passed_through`), so that no layer gets the
note of an error it only passed on. Each layer's ``handler`` is the rest of the onion; it
returns only the response, and the layer's own command (model calls) is added to the
writes collected from the last attempt of the layers inside it (see :mod:`.layers`).

Layers that have only the other flavour are bridged in runs: in a sync onion, a run of
async-only layers runs on an event loop with an async handler around the sync rest; in an
async onion, a run of sync-only layers runs on a worker thread with a sync handler that
drives the async rest on the caller's loop.

An onion is built once, plain; an observed onion (each layer's function wrapped by an
observer, ``wrap=``) is built beside it the first time something observes a call, and the
caller picks one of the two once per call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from funcware.compose.wraps.layers import (
    AsyncPiece,
    AsyncTail,
    LayerWrap,
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

__all__ = ["CallKind", "Onions", "Outcome", "build_async", "build_sync"]


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

    from funcware.compose.threads.bridge import run_coroutine_sync  # only a mixed onion needs it

    def piece(request: Any, tail: Tail) -> Outcome:
        async def async_tail(req: Any) -> Outcome:
            return inner(req, tail)

        return run_coroutine_sync(run(request, async_tail))  # type: ignore[arg-type]

    return piece


def _sync_run_in_async(run: Piece, inner: AsyncPiece) -> AsyncPiece:
    """A run built around :func:`outcome_piece`, on a worker thread, around ``inner``."""

    from funcware.compose.threads.bridge import call_soon_in_loop, run_in_thread

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


def build_sync(impls: Sequence[HookImpl], kind: CallKind, wrap: LayerWrap | None = None) -> Piece:
    """The sync onion of ``impls`` (first outermost); ``wrap`` wraps each layer's function."""
    piece: Piece = tail_piece
    for native, run in reversed(_runs(impls, lambda i: i.sync is not None)):
        if native:
            piece = sync_chain(run, kind, piece, wrap)
        else:
            piece = _async_run_in_sync(async_chain(run, kind, async_outcome_piece, wrap), piece)
    return piece


def build_async(
    impls: Sequence[HookImpl], kind: CallKind, wrap: LayerWrap | None = None
) -> AsyncPiece:
    """The async onion of ``impls`` (first outermost); ``wrap`` wraps each layer's function."""
    piece: AsyncPiece = async_tail_piece
    for native, run in reversed(_runs(impls, lambda i: i.async_ is not None)):
        if native:
            piece = async_chain(run, kind, piece, wrap)
        else:
            piece = _sync_run_in_async(sync_chain(run, kind, outcome_piece, wrap), piece)
    return piece


class Onions:
    """One onion, built once per flavour when first run, plain and (when something observes
    a call) observed.

    :meth:`sync` and :meth:`async_` take the watcher of the current call
    (:func:`funcware.compose.observing.watcher`): ``None`` gives the plain onion.
    """

    def __init__(self, impls: Sequence[HookImpl], kind: CallKind) -> None:
        self.impls = list(impls)
        self.kind = kind
        self._sync: Piece | None = None
        self._async: AsyncPiece | None = None
        self._observed: tuple[Any, Piece | None, AsyncPiece | None] = (None, None, None)

    def sync(self, observer: Any) -> Piece:
        """The sync onion to run this call with."""
        if observer is None:
            if self._sync is None:
                self._sync = build_sync(self.impls, self.kind)
            return self._sync
        watched, piece, apiece = self._observed
        if watched is not observer or piece is None:
            piece = build_sync(self.impls, self.kind, observer.layer)
            self._observed = (observer, piece, apiece if watched is observer else None)
        return piece

    def async_(self, observer: Any) -> AsyncPiece:
        """The async onion to run this call with."""
        if observer is None:
            if self._async is None:
                self._async = build_async(self.impls, self.kind)
            return self._async
        watched, piece, apiece = self._observed
        if watched is not observer or apiece is None:
            apiece = build_async(self.impls, self.kind, observer.layer)
            self._observed = (observer, piece if watched is observer else None, apiece)
        return apiece
