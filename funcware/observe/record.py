"""The run record: every hook execution and wrap-layer call of the runs inside a block.

``with record() as run: agent.invoke(...)`` (or ``async with``) makes a :class:`RunRecord`
active for the block: it collects one :class:`~funcware.observe.observers.Layer` per hook
execution and per wrap-layer call, in the order they started, in this context only (other
threads and tasks that did not start inside the block are not recorded).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager
from types import TracebackType

from funcware.observe.observers import Layer, observing

__all__ = ["Recording", "RunRecord", "beside_plan", "record", "timeline_line"]


class RunRecord:
    """The layers of the runs recorded so far, in the order they started."""

    def __init__(self) -> None:
        self.layers: list[Layer] = []
        self._lock = threading.Lock()

    def start_layer(self, layer: Layer) -> None:
        with self._lock:
            self.layers.append(layer)

    def end_layer(self, layer: Layer) -> None:
        return None

    def __iter__(self) -> Iterator[Layer]:
        return iter(list(self.layers))

    def __len__(self) -> int:
        return len(self.layers)

    def outcomes(self) -> list[tuple[str, str]]:
        """``(f"{middleware}.{hook}", outcome)`` per layer, in order (handy in tests)."""
        return [(f"{layer.middleware}.{layer.hook}", str(layer.outcome)) for layer in self]

    def lines(self, *, timings: bool = True) -> list[str]:
        """The timeline: one line per layer, indented by its nesting in the onion."""
        return [timeline_line(layer, timings=timings) for layer in self]

    def __str__(self) -> str:
        if not self.layers:
            return "run: nothing recorded"
        return "\n".join(["run:", *("  " + line for line in self.lines())])

    def __repr__(self) -> str:
        return f"<RunRecord of {len(self.layers)} layers>"


def timeline_line(layer: Layer, *, timings: bool = True) -> str:
    """One layer as a line of the timeline (with its duration unless ``timings=False``)."""
    parts = [f"{'  ' * layer.depth}{layer.middleware}.{layer.hook}", str(layer.outcome)]
    if layer.handler_calls > 1:
        parts.append(f"handler x{layer.handler_calls}")
    if layer.changed:
        parts.append(f"changed {', '.join(layer.changed)}")
    if layer.wrote:
        parts.append(f"wrote {', '.join(layer.wrote)}")
    if layer.jump_to:
        parts.append(f"jump_to={layer.jump_to}")
    if layer.error is not None and layer.outcome != "interrupted":
        parts.append(f"{type(layer.error).__name__}: {layer.error}".splitlines()[0][:80])
    if timings:
        parts.append(f"{layer.duration_s * 1000:.2f} ms")
    return " · ".join(parts)


def beside_plan(labels: list[str], run: RunRecord) -> list[str]:
    """``explain``'s run section: per hook of the plan (``labels``, in plan order) what its
    executions ended as on ``run``, then the run's timeline."""
    outcomes: dict[str, dict[str, int]] = {label: {} for label in labels}
    for layer in run:
        counts = outcomes.setdefault(f"{layer.middleware}.{layer.hook}", {})
        counts[str(layer.outcome)] = counts.get(str(layer.outcome), 0) + 1
    width = max((len(label) for label in outcomes), default=0)
    out = [f"  {'this run':<13} {len(run)} layers recorded"]
    for label, counts in outcomes.items():
        seen = ", ".join(f"{outcome} x{count}" for outcome, count in counts.items())
        out.append(f"    {label:<{width}}  {seen or 'did not run'}")
    out.append(f"  {'timeline':<13}")
    out.extend("    " + line for line in run.lines())
    return out


class Recording:
    """The context manager :func:`record` returns (``with`` or ``async with``)."""

    def __init__(self) -> None:
        self.run = RunRecord()
        self._active: list[AbstractContextManager[object]] = []

    def __enter__(self) -> RunRecord:
        manager = observing(self.run)
        manager.__enter__()
        self._active.append(manager)
        return self.run

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._active.pop().__exit__(kind, exc, traceback)

    async def __aenter__(self) -> RunRecord:
        return self.__enter__()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.__exit__(kind, exc, traceback)


def record() -> Recording:
    """Record the layers of every run inside the block: ``with record() as run:``.

    Usable as ``with`` and ``async with``. Records nest: an inner block's layers are in
    the outer record too. While recording, a wrap layer costs one stack frame more, so a
    sync onion runs about 320 layers deep at the default recursion limit (480 when not
    recording); async onions are not limited.
    """
    return Recording()
