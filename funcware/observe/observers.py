"""The observer interface: what the onion and the node runner tell whoever observes a run.

Nothing observes by default: :func:`active` is an empty tuple and the runners skip every
call below, so a run costs what it cost before. An observer (the run record, and later
OpenTelemetry spans or LangSmith runs) is made active for a block with :func:`observing`;
the runners then call :func:`start` before each hook execution and wrap-layer call and
:func:`end` after it, and every active observer gets ``start_layer(layer)`` and
``end_layer(layer)`` with the same :class:`Layer`.

The active observers and the layer being run live in context variables, so runs in other
threads and concurrent asyncio tasks are kept apart, and a layer started inside another
(a wrap layer inside an outer one, a sub-agent's hook inside a tool call) names it as its
``parent``.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, get_args

from funcware.compose.observing import OBSERVERS

__all__ = [
    "OUTCOMES",
    "Layer",
    "Observer",
    "Outcome",
    "active",
    "end",
    "note_continued",
    "observing",
    "start",
]

Outcome = Literal[
    "passed",
    "modified",
    "short_circuited",
    "jumped",
    "retried",
    "interrupted",
    "failed",
    "timed_out",
    "continued",
]
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
"""Every outcome, in the order above."""


@dataclass(eq=False)
class Layer:
    """One hook execution or wrap-layer call. Observers read it; only the runners write it.

    ``outcome`` and the fields after it are set when the layer ends (``outcome`` is
    ``None`` until then).
    """

    middleware: str
    hook: str
    where: str
    """Where the middleware's function for ``hook`` is defined (``file:line``)."""
    parent: Layer | None
    depth: int
    started: float
    """``time.perf_counter()`` when it started."""
    outcome: Outcome | None = None
    handler_calls: int = 0
    """Wrap layers: how many times it called its handler (node hooks: 0)."""
    duration_s: float = 0.0
    wrote: tuple[str, ...] = ()
    """State keys it wrote (a node hook's update, a wrap layer's command)."""
    changed: tuple[str, ...] = ()
    """Request fields it changed before passing the request to its handler."""
    jump_to: str | None = None
    error: BaseException | None = None
    """What it raised (or, for ``continued``, what it raised and the policy passed over)."""
    data: dict[str, Any] = field(default_factory=dict)
    """Scratch space for observers (a span, a run id), keyed by the observer's own name."""


class Observer(Protocol):
    """Told when each layer starts and ends, in the thread or task that runs it."""

    def start_layer(self, layer: Layer) -> None: ...

    def end_layer(self, layer: Layer) -> None: ...


_OBSERVERS = OBSERVERS  # the core's: it checks, at each call's entry, whether anyone observes
_CURRENT: contextvars.ContextVar[Layer | None] = contextvars.ContextVar(
    "funcware_layer", default=None
)


CURRENT_LAYER = _CURRENT
"""The layer running now, which a new layer nests under (a run wrap that runs the graph
outside its layer's context sets it there: ``funcware.runs``)."""


def active() -> tuple[Observer, ...]:
    """The observers active in this context (empty: nothing observes)."""
    return _OBSERVERS.get()


@contextmanager
def observing(observer: Observer) -> Iterator[Observer]:
    """Make ``observer`` active (beside any already active) for the block."""
    token = _OBSERVERS.set((*_OBSERVERS.get(), observer))
    try:
        yield observer
    finally:
        _OBSERVERS.reset(token)


Started = tuple[Layer, "contextvars.Token[Layer | None]"]


def start(observers: tuple[Observer, ...], middleware: str, hook: str, where: str) -> Started:
    """A new layer, started inside the current one and made current; observers told."""
    parent = _CURRENT.get()
    layer = Layer(
        middleware,
        hook,
        where,
        parent,
        0 if parent is None else parent.depth + 1,
        time.perf_counter(),
    )
    for observer in observers:
        observer.start_layer(layer)
    return layer, _CURRENT.set(layer)


def end(
    observers: tuple[Observer, ...],
    started: Started,
    outcome: Outcome,
    *,
    handler_calls: int = 0,
    wrote: tuple[str, ...] = (),
    changed: tuple[str, ...] = (),
    jump_to: str | None = None,
    error: BaseException | None = None,
) -> None:
    """End a layer from :func:`start` with what it did; its parent is current again.

    An outcome set while it ran (``continued``, by :func:`note_continued`) is kept.
    """
    layer, token = started
    layer.duration_s = time.perf_counter() - layer.started
    with contextlib.suppress(ValueError):  # ended in another context: leave that one be
        _CURRENT.reset(token)
    if layer.outcome is None:
        layer.outcome = outcome
        layer.error = error
    layer.handler_calls = handler_calls
    layer.wrote = wrote
    layer.changed = changed
    layer.jump_to = jump_to
    for observer in observers:
        observer.end_layer(layer)


def note_continued(error: BaseException) -> None:
    """The current layer's error was passed over (``on_error="continue"``)."""
    layer = _CURRENT.get()
    if layer is not None:
        layer.outcome = "continued"
        layer.error = error
