"""A run of wrap layers of one flavour as a chain of handlers built once, reused per call.

The handler given to layer ``i`` calls layer ``i + 1`` itself (after the last layer, the
piece inside the run), so a checked layer costs two stack frames and a proven one
(:mod:`.proofs`) one, as in hand-written nested calls. A checked layer's handler is the
bound ``handler`` of a :mod:`link <.links>` object, whose state sits in its slots. What one
call needs besides (its tail, and the writes collected so far) lives in the chain: a call
takes a free chain from the run's pool and gives it back when it returns, so building the
handlers happens once, not on every call.

The tail (the model or the tool) returns its response and writes nothing, so the handler
given to the last layer is the tail itself, looked up per call: no frame of ours stands
between the last layer and the tail (a tail marks what it raises with
:func:`~funcware.compose.steps.failures.note_passed_through`, so no layer is blamed for it).

``chain.last`` holds the writes of what lies inside the handler that returned last: a
handler clears it when it starts (so a retry forgets the attempt before, and a layer that
does not call its handler passes nothing on), the piece inside the run (when it is not the
tail) sets it, and each layer that returns a command adds its own on the way out; a failed
attempt clears it.
Each link knows whether it is running; an attempt that starts while another attempt
of the same handler runs (a layer that races its handler) gets its own chain for what
lies inside, so the two never mix, and the last of them to finish wins.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from funcware.hooks.middleware import HookImpl

from ..steps.failures import is_passed_through, note_raised
from .links import STATELESS, AsyncInnermost, AsyncLink, Innermost, Link, Run, merged
from .proofs import deepest_layer, handler_argument, passes_through
from .updates import NO_WRITES, Writes

if TYPE_CHECKING:
    from .onion import CallKind

__all__ = [
    "AsyncPiece",
    "AsyncTail",
    "Outcome",
    "Piece",
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

KEEP_HANDLERS = 100_000
"""Free chains a run keeps: at most this many handlers in all (and at least 4 chains)."""


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


class _Chain:
    """One set of handlers for a run, and the state of the call using it."""

    __slots__ = ("handlers", "last", "links", "shared", "tail")

    def __init__(self) -> None:
        self.handlers: list[Callable[[Any], Any]] = []
        """Per layer: the handler it is given."""
        self.links: list[Any] = []
        """Per layer: the state of its handler (``.running``: whether an attempt of it is
        running on this chain); :data:`~.links.STATELESS` for one that keeps none."""
        self.last: Writes = NO_WRITES
        self.tail: Any = None
        self.shared = False
        """Set when two attempts overlapped: a late one may still write, so never reuse."""


class _Pool:
    """Free chains of one run (``list.pop``/``append`` are atomic, so threads may share it)."""

    def __init__(self, build: Callable[[], _Chain], count: int) -> None:
        self.build = build
        self.free: list[_Chain] = []
        self.keep = max(4, KEEP_HANDLERS // max(count, 1))

    def take(self, tail: Any) -> _Chain:
        try:
            chain = self.free.pop()
        except IndexError:
            chain = self.build()
        chain.tail = tail
        return chain

    def give(self, chain: _Chain) -> None:
        chain.tail = None
        if not chain.shared and len(self.free) < self.keep:
            self.free.append(chain)


def _call(func: Callable[..., Any], handler_next: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """The handler outside a proven layer: a plain call of it, no frame of ours."""
    return lambda req: func(req, handler_next)


class _Proofs:
    """Which layers of a run are proven (:mod:`.proofs`), and noting a failure's layer.

    ``through[i]`` is the last layer of the proven run right inside layer ``i`` (``i``
    itself when layer ``i + 1`` is checked or ``i`` is the last): an error that comes out
    of layer ``i`` unnoted was raised by one of layers ``i..through[i]``.
    """

    def __init__(
        self,
        impls: Sequence[HookImpl],
        funcs: list[Callable[..., Any]],
        kind: CallKind,
        *,
        is_async: bool,
    ) -> None:
        self.impls = impls
        self.proven = [
            kind.proves and index > 0 and passes_through(func, is_async=is_async)
            for index, func in enumerate(funcs)
        ]
        self.codes: dict[Any, str] = {}
        for func, proven in zip(funcs, self.proven, strict=True):
            argument = handler_argument(func) if proven else None
            if argument is not None:
                self.codes[getattr(func, "__func__", func).__code__] = argument
        self.through = list(range(len(funcs)))
        for index in reversed(range(len(funcs) - 1)):
            if self.proven[index + 1]:
                self.through[index] = self.through[index + 1]

    def note(self, exc: BaseException, handlers: list[Callable[[Any], Any]], at: int) -> None:
        """Note ``exc``, which came out of layer ``at``, as raised by the layer that did."""
        stop = self.through[at]
        if stop > at and not is_passed_through(exc):
            at = deepest_layer(exc, handlers, self.codes, at, stop)
        note_raised(exc, self.impls[at])


def _build(
    run: Run,
    impls: Sequence[HookImpl],
    funcs: list[Callable[..., Any]],
    proven: list[bool],
    inner: Any,
    link_type: type[Link] | type[AsyncLink],
    inside_type: type[Innermost] | type[AsyncInnermost],
) -> _Chain:
    """A new chain of handlers for a run; ``inner`` is None when it is the tail itself."""
    chain = _Chain()
    last = len(funcs) - 1
    handlers: list[Callable[[Any], Any]] = []
    states: list[Any] = []
    if inner is None:
        # The tail itself (in an async onion, its own coroutine): it writes nothing and
        # marks what it raises.
        handlers.append(lambda req: chain.tail(req))
        states.append(STATELESS)
    else:
        inside = inside_type(run, chain, last, inner)
        handlers.append(inside.handler)
        states.append(inside)
    for index in reversed(range(last)):
        after = index + 1
        handler_next = handlers[-1]
        if proven[after]:
            # Its result is its handler's, checked already: call it, nothing else.
            handlers.append(_call(funcs[after], handler_next))
            states.append(STATELESS)
        else:
            link = link_type(run, chain, index, funcs[after], impls[after], handler_next)
            handlers.append(link.handler)
            states.append(link)
    handlers.reverse()
    states.reverse()
    chain.handlers, chain.links = handlers, states
    return chain


def sync_chain(impls: Sequence[HookImpl], kind: CallKind, inner: Piece) -> Piece:
    """Sync layers ``impls`` (first outermost) around ``inner``, as one piece."""
    funcs: list[Callable[..., Any]] = [impl.sync for impl in impls]  # type: ignore[misc]
    assert funcs and all(func is not None for func in funcs)
    normalize, plain = kind.normalize, kind.plain
    proofs = _Proofs(impls, funcs, kind, is_async=False)
    proven = proofs.proven
    direct = inner is tail_piece

    def overlapping(chain: _Chain, index: int, request: Any) -> Any:
        chain.shared = True
        other = pool.take(chain.tail)
        try:
            return other.handlers[index](request)
        finally:
            if not chain.links[index].running:
                chain.last = other.last
            pool.give(other)

    run = Run(normalize, plain, proofs, overlapping)

    def build() -> _Chain:
        return _build(run, impls, funcs, proven, None if direct else inner, Link, Innermost)

    pool = _Pool(build, len(funcs))
    free, keep = pool.free, pool.keep
    first, first_impl = funcs[0], impls[0]

    def piece(request: Any, tail: Tail) -> Outcome:
        try:
            chain = free.pop()
        except IndexError:
            chain = build()
        chain.tail = tail
        chain.last = NO_WRITES
        try:
            try:
                result = first(request, chain.handlers[0])
                if result.__class__ is plain:
                    return result, chain.last
                response, own = normalize(result, first_impl)
                return response, merged(chain.last, own)
            except BaseException as exc:
                proofs.note(exc, chain.handlers, 0)
                raise
        finally:
            chain.tail = None
            if not chain.shared and len(free) < keep:
                free.append(chain)

    return piece


def async_chain(impls: Sequence[HookImpl], kind: CallKind, inner: AsyncPiece) -> AsyncPiece:
    """Async layers ``impls`` (first outermost) around ``inner``, as one piece.

    The twin of :func:`sync_chain`, written out rather than shared: a shared helper
    would cost a stack frame per layer.
    """
    funcs: list[Callable[..., Any]] = [impl.async_ for impl in impls]  # type: ignore[misc]
    assert funcs and all(func is not None for func in funcs)
    normalize, plain = kind.normalize, kind.plain
    proofs = _Proofs(impls, funcs, kind, is_async=True)
    proven = proofs.proven
    direct = inner is async_tail_piece

    async def overlapping(chain: _Chain, index: int, request: Any) -> Any:
        chain.shared = True
        other = pool.take(chain.tail)
        try:
            return await other.handlers[index](request)
        finally:
            if not chain.links[index].running:
                chain.last = other.last
            pool.give(other)

    run = Run(normalize, plain, proofs, overlapping)

    def build() -> _Chain:
        return _build(
            run, impls, funcs, proven, None if direct else inner, AsyncLink, AsyncInnermost
        )

    pool = _Pool(build, len(funcs))
    free, keep = pool.free, pool.keep
    first, first_impl = funcs[0], impls[0]

    async def piece(request: Any, tail: AsyncTail) -> Outcome:
        try:
            chain = free.pop()
        except IndexError:
            chain = build()
        chain.tail = tail
        chain.last = NO_WRITES
        try:
            try:
                result = await first(request, chain.handlers[0])
                if result.__class__ is plain:
                    return result, chain.last
                response, own = normalize(result, first_impl)
                return response, merged(chain.last, own)
            except BaseException as exc:
                proofs.note(exc, chain.handlers, 0)
                raise
        finally:
            chain.tail = None
            if not chain.shared and len(free) < keep:
                free.append(chain)

    return piece
