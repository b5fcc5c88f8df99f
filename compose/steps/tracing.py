"""What a middleware's hook spans record: LangChain 1.5's trace policy (langgraph's
``TracePolicy``): the middleware's own ``trace_policy``, else the process-wide default
(:func:`configure_trace_policy`), read when a span records."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from langgraph.types import TracePolicy, omit_payload

__all__ = [
    "TracePolicy",
    "configure_trace_policy",
    "hook_trace_policy",
    "omit_payload",
    "resolve_trace_policy",
]

_default_policy: TracePolicy | None = None


def _checked(policy: object, middleware: object | None) -> TracePolicy | None:
    """``policy`` if it is one (or ``None``); else a ``TypeError`` naming its owner."""
    if policy is None or isinstance(policy, TracePolicy):
        return policy
    from funcware.compose.steps.tracing_errors import not_a_policy

    raise not_a_policy(policy, middleware)


def configure_trace_policy(policy: TracePolicy | None) -> None:
    """Set the process-wide default ``TracePolicy`` of middleware hook spans (``None``: clear).

    A middleware's own ``trace_policy`` overrides it whole. Call it once, at startup.
    """
    global _default_policy  # one process-wide default, as in LangChain
    _default_policy = _checked(policy, None)


def resolve_trace_policy(middleware: object) -> TracePolicy | None:
    """The policy ``middleware``'s hook spans follow now: its own, else the default, else
    ``None`` (trace as usual); a ``TypeError`` if its own is no ``TracePolicy``."""
    own = _checked(getattr(middleware, "trace_policy", None), middleware)
    return own if own is not None else _default_policy


def _processor(
    own: TracePolicy | None, field: Literal["process_inputs", "process_outputs"]
) -> Callable[[Any], Any]:
    def process(value: Any) -> Any:
        policy = own if own is not None else _default_policy
        transform = getattr(policy, field) if policy is not None else None
        return transform(value) if transform is not None else value

    return process


def hook_trace_policy(middleware: object) -> TracePolicy:
    """The ``TracePolicy`` of one of ``middleware``'s hook spans: its own policy, read now, else
    the process default, read when the span records (neither: values recorded unchanged)."""
    own = _checked(getattr(middleware, "trace_policy", None), middleware)
    return TracePolicy(
        process_inputs=_processor(own, "process_inputs"),
        process_outputs=_processor(own, "process_outputs"),
    )
