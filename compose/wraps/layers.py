"""A run of wrap layers of one flavour, folded per call: the :class:`Handler` given to layer
``i`` runs what lies inside it, checks the result, notes an error on the layer that raised it
and keeps the writes of its last attempt that returned. A *piece* maps ``(request, tail)`` to
``(response, writes)``; the *tail* (the model, the tool) writes nothing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from funcware.compose.steps.failures import note_passed_through
from funcware.hooks.middleware import HookImpl

if TYPE_CHECKING:
    from funcware.compose.wraps.onion import CallKind

__all__ = [
    "NO_WRITES",
    "AsyncPiece",
    "AsyncTail",
    "Handler",
    "LayerWrap",
    "Outcome",
    "Piece",
    "Run",
    "Tail",
    "Writes",
    "funcs",
    "sync_chain",
    "tail_piece",
]

Writes = tuple[tuple[str, Any], ...]
"""An ordered sequence of state writes ``(key, value)``, inner layers' first."""
NO_WRITES: Writes = ()
Outcome = tuple[Any, Writes]
Tail = Callable[[Any], Any]
"""What lies inside the onion: takes the request, returns the response, writes nothing."""
AsyncTail = Callable[[Any], Awaitable[Any]]
Piece = Callable[[Any, Any], Outcome]
"""Takes ``(request, tail)``; returns the outcome ``(response, writes)``."""
AsyncPiece = Callable[[Any, Any], Awaitable[Outcome]]
LayerWrap = Callable[[HookImpl, Callable[..., Any], bool], Callable[..., Any]]
"""Wraps a layer's function (async when the flag is true) once, at build."""


def tail_piece(request: Any, tail: Tail) -> Outcome:
    """The innermost piece of a sync onion: the tail itself, which writes nothing."""
    return tail(request), NO_WRITES


class Run:
    """What every call of one run of layers shares: the layers and how to check them."""

    __slots__ = ("funcs", "hook", "impls", "inner", "normalize", "plain", "size", "warned")

    def __init__(
        self, impls: Sequence[HookImpl], funcs: list[Any], kind: CallKind, inner: Any
    ) -> None:
        self.impls = impls
        self.funcs = funcs
        self.size = len(funcs)
        self.inner = inner
        """The piece inside the run: ``(request, tail) -> (response, writes)``."""
        self.hook = kind.hook
        self.normalize = kind.normalize
        self.plain = kind.plain
        self.warned: set[int] = set()  # layers warned about for a double call

    def checked(self, at: int, result: Any, inner: Handler) -> Outcome:
        """Layer ``at``'s ``result`` as ``(response, the writes it carries)``."""
        if result.__class__ is self.plain:
            response, writes = result, inner.writes
        else:
            response, own = self.normalize(result, self.impls[at])
            writes = inner.writes + own if own else inner.writes
        if inner.again:
            from funcware.compose.wraps.double_calls import check_double_call

            check_double_call(self, at, inner, response)
        return response, writes


class Handler:
    """The handler given to one call of layer ``at`` (``-1``: the run's own entry)."""

    __slots__ = ("again", "answer", "answered", "at", "calls", "request", "run", "tail", "writes")

    def __init__(self, run: Run, at: int, tail: Any) -> None:
        self.run, self.at, self.tail = run, at, tail
        self.calls = 0  # how many times it was called
        self.answered = 0  # how many of those calls returned
        self.again = False  # whether a call started after an earlier one had returned
        self.answer: Any = None  # the response of the last call that returned
        self.request: Any = None  # the request of the last call
        self.writes: Writes = NO_WRITES  # of the last call that returned; cleared by a failure

    def _started(self, request: Any) -> int:
        self.calls += 1
        self.request = request
        if self.answered:
            self.again = True
        return self.at + 1

    def _failed(self, exc: BaseException, at: int) -> None:
        self.writes = NO_WRITES
        if at == self.run.size:
            note_passed_through(exc)
        else:
            from funcware.compose.steps.error_notes import note_raised

            note_raised(exc, self.run.impls[at])

    def _returned(self, response: Any, writes: Writes) -> Any:
        self.writes = writes
        self.answered += 1
        self.answer = response
        return response

    def call(self, request: Any) -> Any:
        """Run what lies inside layer ``at`` on ``request``; give its checked response."""
        at = self._started(request)
        run = self.run
        try:
            if at == run.size:
                response, writes = run.inner(request, self.tail)
            else:
                inner = Handler(run, at, self.tail)
                response, writes = run.checked(at, run.funcs[at](request, inner.call), inner)
        except BaseException as exc:
            self._failed(exc, at)
            raise
        return self._returned(response, writes)


def funcs(impls: Sequence[HookImpl], attr: str, wrap: LayerWrap | None) -> list[Any]:
    """Each layer's function of flavour ``attr`` (``sync`` or ``async_``), wrapped by ``wrap``."""
    found = [getattr(impl, attr) for impl in impls]
    assert found and all(func is not None for func in found)
    if wrap is None:
        return found
    return [wrap(impl, func, attr == "async_") for impl, func in zip(impls, found, strict=True)]


def sync_chain(
    impls: Sequence[HookImpl], kind: CallKind, inner: Piece, wrap: LayerWrap | None = None
) -> Piece:
    """Sync layers ``impls`` (first outermost) around ``inner``, as one piece; ``wrap``, if
    given, wraps each layer's function (an observer's)."""
    run = Run(impls, funcs(impls, "sync", wrap), kind, inner)

    def piece(request: Any, tail: Tail) -> Outcome:
        entry = Handler(run, -1, tail)
        return entry.call(request), entry.writes

    return piece
