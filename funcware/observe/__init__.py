"""Observing runs: ``with funcware.observe.record() as run: agent.invoke(...)``.

``run.layers`` holds one :class:`Layer` per hook execution and wrap-layer call, in order;
``print(run)`` shows them as a timeline with the onion's nesting, and
``explain(agent, run=run)`` puts it beside the plan. Nothing is observed, and nothing is
paid, outside such a block. Other consumers (tracing exporters) implement
:class:`Observer` and are made active with :func:`observing`.

:func:`instrument` (the ``otel`` extra) emits OpenTelemetry spans for every agent run in
the process until :func:`uninstrument`; see :mod:`funcware.observe.otel`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from funcware.observe.observers import OUTCOMES, Layer, Observer, Outcome, observing
from funcware.observe.record import RunRecord, record

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

    from funcware.observe.otel import Instrumentation

__all__ = [
    "OUTCOMES",
    "Layer",
    "Observer",
    "Outcome",
    "RunRecord",
    "instrument",
    "observing",
    "record",
    "uninstrument",
]

_OTEL = "funcware.observe.otel"


def instrument(
    tracer_provider: TracerProvider | None = None, *, capture_content: bool = False
) -> Instrumentation:
    """Emit OpenTelemetry GenAI spans (agent, model, tool, and one per hook and wrap layer)
    for every funcware agent run in this process; see :func:`funcware.observe.otel.instrument`.

    Needs the ``otel`` extra (``pip install -e ".[otel]"`` from a checkout).
    """
    try:
        from funcware.observe import otel
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("opentelemetry"):
            raise
        raise ImportError(
            "funcware.observe.instrument() needs OpenTelemetry, which is not installed: "
            'pip install -e ".[otel]" from a checkout (and an SDK, e.g. opentelemetry-sdk, '
            "to export the spans)."
        ) from exc
    return otel.instrument(tracer_provider, capture_content=capture_content)


def uninstrument() -> None:
    """Stop the spans :func:`instrument` started (nothing instrumented: a no-op)."""
    otel = sys.modules.get(_OTEL)
    if otel is not None:
        otel.uninstrument()
