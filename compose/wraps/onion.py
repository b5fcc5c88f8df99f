"""The onion: wrap hooks folded into one call, first hook outermost, built once (and once
more, each layer wrapped, for an observer). Runs of layers of the other flavour only are
bridged (:mod:`.mixed`); pieces and tails are described in :mod:`.layers`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from funcware.compose.wraps.layers import (
    AsyncPiece,
    LayerWrap,
    Outcome,
    Piece,
    sync_chain,
    tail_piece,
)
from funcware.hooks.middleware import HookImpl

__all__ = ["CallKind", "Onions", "Outcome", "build_async", "build_sync"]


@dataclass(frozen=True)
class CallKind:
    """What differs between model and tool onions: how a layer's result is checked."""

    hook: str
    normalize: Callable[[object, HookImpl], Outcome]  # a result -> (response, its own writes)
    plain: type | None = None  # results of exactly this type pass unchecked, with no writes


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
            from funcware.compose.wraps.mixed import async_run_in_sync

            piece = async_run_in_sync(run, kind, piece, wrap)
    return piece


def build_async(
    impls: Sequence[HookImpl], kind: CallKind, wrap: LayerWrap | None = None
) -> AsyncPiece:
    """The async onion of ``impls`` (first outermost); ``wrap`` wraps each layer's function."""
    from funcware.compose.wraps.async_layers import async_chain, async_tail_piece

    piece: AsyncPiece = async_tail_piece
    for native, run in reversed(_runs(impls, lambda i: i.async_ is not None)):
        if native:
            piece = async_chain(run, kind, piece, wrap)
        else:
            from funcware.compose.wraps.mixed import sync_run_in_async

            piece = sync_run_in_async(run, kind, piece, wrap)
    return piece


class Onions:
    """One onion, built once per flavour when first run: plain, and observed for the watcher
    of the current call when there is one."""

    def __init__(self, impls: Sequence[HookImpl], kind: CallKind) -> None:
        self.impls = list(impls)
        self.kind = kind
        self._plain: list[Any] = [None, None]  # sync, async
        self._observed: tuple[Any, list[Any]] = (None, [None, None])  # the watcher's

    def sync(self, observer: Any) -> Piece:
        """The sync onion to run this call with."""
        return self._onion(observer, 0, build_sync)  # type: ignore[no-any-return]

    def async_(self, observer: Any) -> AsyncPiece:
        """The async onion to run this call with."""
        return self._onion(observer, 1, build_async)  # type: ignore[no-any-return]

    def _onion(self, observer: Any, flavour: int, build: Callable[..., Any]) -> Any:
        built = self._plain
        if observer is not None:
            watched, built = self._observed
            if watched is not observer:
                built = [None, None]
                self._observed = (observer, built)
        if built[flavour] is None:
            layer = None if observer is None else observer.layer
            built[flavour] = build(self.impls, self.kind, layer)
        return built[flavour]
