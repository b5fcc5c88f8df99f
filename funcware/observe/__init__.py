"""Observing runs: ``with funcware.observe.record() as run: agent.invoke(...)``.

``run.layers`` holds one :class:`Layer` per hook execution and wrap-layer call, in order;
``print(run)`` shows them as a timeline with the onion's nesting, and
``explain(agent, run=run)`` puts it beside the plan. Nothing is observed, and nothing is
paid, outside such a block. Other consumers (tracing exporters) implement
:class:`Observer` and are made active with :func:`observing`.
"""

from .observers import OUTCOMES, Layer, Observer, Outcome, observing
from .record import RunRecord, record

__all__ = ["OUTCOMES", "Layer", "Observer", "Outcome", "RunRecord", "observing", "record"]
