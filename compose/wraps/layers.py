"""A run of wrap layers of one flavour, folded per call: one small handler per layer call.

The handler given to layer ``i`` is the bound ``call`` of a :class:`Handler` made when
layer ``i`` is called. Each call of it runs layer ``i + 1`` with a handler of its own (or,
after the last layer, the piece inside the run: the tail or a bridged run), checks what
that layer returned (:attr:`Run.normalize`; a result of exactly the ``plain`` type passes
as is), and notes an error on the layer that raised it. So a layer costs two stack frames
(its handler's ``call`` and its own function), as nested calls do, and each attempt of a
handler (a retry, or attempts that overlap) has its own handlers inside it, so attempts
never mix.

A handler keeps the writes (commands) of what lies inside its last attempt that returned;
a layer's result carries those, then its own. A failed attempt clears them, and a layer
that never calls its handler passes none on. A handler also counts its calls and answers,
so a layer that throws an answer away is warned about (:mod:`.double_calls`) and an
observer is told how the layer ended (:mod:`.observed`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from funcware.compose.steps.failures import note_passed_through, note_raised
from funcware.compose.wraps.updates import NO_WRITES, Writes
from funcware.effects.double_calls import check_double_call
from funcware.hooks.middleware import HookImpl
from funcware.observe.langsmith import langchain_runs
from funcware.observe.layers import aobserved_layer, observed_layer
from funcware.observe.observers import Observer, active

if TYPE_CHECKING:
    from funcware.compose.wraps.onion import CallKind

__all__ = [
    "AsyncHandler",
    "AsyncPiece",
    "AsyncTail",
    "Handler",
    "Outcome",
    "Piece",
    "Run",
    "Tail",
    "async_chain",
    "async_outcome_piece",
    "async_tail_piece",
    "outcome_piece",
    "sync_chain",
    "tail_piece",
]

Outcome = tuple[Any, Writes]
Tail = Callable[[Any], Any]
"""What lies inside the onion: takes the request, returns the response, writes nothing."""
AsyncTail = Callable[[Any], Awaitable[Any]]
Piece = Callable[[Any, Any], Outcome]
"""Takes ``(request, tail)``; returns the outcome ``(response, writes)``."""
AsyncPiece = Callable[[Any, Any], Awaitable[Outcome]]


def tail_piece(request: Any, tail: Tail) -> Outcome:
    """The innermost piece of a sync onion: the tail itself, which writes nothing."""
    return tail(request), NO_WRITES


async def async_tail_piece(request: Any, tail: AsyncTail) -> Outcome:
    """The innermost piece of an async onion."""
    return await tail(request), NO_WRITES


def outcome_piece(request: Any, tail: Callable[[Any], Outcome]) -> Outcome:
    """The innermost piece of a run bridged into an onion: its tail gives an outcome."""
    return tail(request)


async def async_outcome_piece(request: Any, tail: Callable[[Any], Awaitable[Outcome]]) -> Outcome:
    """The async :func:`outcome_piece`."""
    return await tail(request)


class Run:
    """What every call of one run of layers shares: the layers and how to check them."""

    __slots__ = ("funcs", "hook", "impls", "inner", "normalize", "plain", "size", "warned", "who")

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
        self.warned: set[int] = set()
        """Layers already warned about for a double call."""
        self.who: list[tuple[str, str]] | None = None
        """Per layer: its middleware's name and where it is defined (made when observed)."""


_new = object.__new__


class Handler:
    """The handler given to one call of layer ``at`` (``-1``: the run's own entry)."""

    __slots__ = (
        "again",
        "answer",
        "answered",
        "at",
        "calls",
        "observers",
        "request",
        "run",
        "tail",
        "writes",
    )

    run: Run
    at: int
    tail: Any
    observers: tuple[Observer, ...]
    calls: int
    """How many times it was called."""
    answered: int
    """How many of those calls returned."""
    again: bool
    """Whether a call started after an earlier one had returned."""
    answer: Any
    """The response of the last call that returned (set once ``answered`` > 0)."""
    request: Any
    """The request of the last call (set once ``calls`` > 0)."""
    writes: Writes
    """The writes of what lies inside the last call that returned (cleared by a failure)."""

    def __init__(self, run: Run, at: int, tail: Any, observers: tuple[Observer, ...]) -> None:
        self.run, self.at, self.tail, self.observers = run, at, tail, observers
        self.calls, self.answered, self.again, self.writes = 0, 0, False, NO_WRITES

    def call(self, request: Any) -> Any:
        """Run what lies inside layer ``at`` on ``request``; give its checked response."""
        self.calls += 1
        self.request = request
        if self.answered:
            self.again = True
        run = self.run
        at = self.at + 1
        try:
            if at == run.size:
                response, writes = run.inner(request, self.tail)
            else:
                inner = _new(Handler)  # no __init__ frame: set every slot read before a call
                inner.run, inner.at, inner.tail = run, at, self.tail
                inner.observers, inner.calls, inner.answered = self.observers, 0, 0
                inner.again, inner.writes = False, NO_WRITES
                if self.observers:
                    result = observed_layer(run, at, request, inner)
                else:
                    result = run.funcs[at](request, inner.call)
                if result.__class__ is run.plain:
                    response, writes = result, inner.writes
                else:
                    response, own = run.normalize(result, run.impls[at])
                    writes = inner.writes + own if own else inner.writes
                if inner.again:
                    check_double_call(run, at, inner, response)
        except BaseException as exc:
            self.writes = NO_WRITES
            if at == run.size:
                note_passed_through(exc)
            else:
                note_raised(exc, run.impls[at])
            raise
        self.writes = writes
        self.answered += 1
        self.answer = response
        return response


class AsyncHandler(Handler):
    """The async :class:`Handler`, its ``call`` written out (a shared helper is a frame)."""

    __slots__ = ()

    async def call(self, request: Any) -> Any:
        self.calls += 1
        self.request = request
        if self.answered:
            self.again = True
        run = self.run
        at = self.at + 1
        try:
            if at == run.size:
                response, writes = await run.inner(request, self.tail)
            else:
                inner = _new(AsyncHandler)  # no __init__ frame: set every slot read before a call
                inner.run, inner.at, inner.tail = run, at, self.tail
                inner.observers, inner.calls, inner.answered = self.observers, 0, 0
                inner.again, inner.writes = False, NO_WRITES
                if self.observers:
                    result = await aobserved_layer(run, at, request, inner)
                else:
                    result = await run.funcs[at](request, inner.call)
                if result.__class__ is run.plain:
                    response, writes = result, inner.writes
                else:
                    response, own = run.normalize(result, run.impls[at])
                    writes = inner.writes + own if own else inner.writes
                if inner.again:
                    check_double_call(run, at, inner, response)
        except BaseException as exc:
            self.writes = NO_WRITES
            if at == run.size:
                note_passed_through(exc)
            else:
                note_raised(exc, run.impls[at])
            raise
        self.writes = writes
        self.answered += 1
        self.answer = response
        return response


def sync_chain(impls: Sequence[HookImpl], kind: CallKind, inner: Piece) -> Piece:
    """Sync layers ``impls`` (first outermost) around ``inner``, as one piece."""
    funcs = [impl.sync for impl in impls]
    assert funcs and all(func is not None for func in funcs)
    run = Run(impls, funcs, kind, inner)

    def piece(request: Any, tail: Tail) -> Outcome:
        entry = Handler(run, -1, tail, active() + langchain_runs())
        return entry.call(request), entry.writes

    return piece


def async_chain(impls: Sequence[HookImpl], kind: CallKind, inner: AsyncPiece) -> AsyncPiece:
    """Async layers ``impls`` (first outermost) around ``inner``, as one piece."""
    funcs = [impl.async_ for impl in impls]
    assert funcs and all(func is not None for func in funcs)
    run = Run(impls, funcs, kind, inner)

    async def piece(request: Any, tail: AsyncTail) -> Outcome:
        entry = AsyncHandler(run, -1, tail, active() + langchain_runs())
        return await entry.call(request), entry.writes

    return piece
