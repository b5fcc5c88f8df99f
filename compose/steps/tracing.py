"""What a middleware's hook spans record: LangChain 1.5's trace policy (langgraph's
``TracePolicy``). A middleware's own ``trace_policy`` replaces the process-wide default
(:func:`configure_trace_policy`) whole, as in LangChain; a span reads the default when it
records, so configuring it after the agent was built still applies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from langgraph.types import TracePolicy, omit_payload

from funcware.hooks.middleware import origin

__all__ = [
    "TracePolicy",
    "configure_trace_policy",
    "hook_trace_policy",
    "omit_payload",
    "resolve_trace_policy",
]

_default_policy: TracePolicy | None = None


def _checked(policy: object, owner: Callable[[], str]) -> TracePolicy | None:
    """``policy`` if it is one (or ``None``); ``owner()`` names it in the error otherwise."""
    if policy is None or isinstance(policy, TracePolicy):
        return policy
    raise TypeError(
        f"{owner()} is {type(policy).__name__} {policy!r}; it must be a "
        "langgraph.types.TracePolicy (e.g. TracePolicy(process_inputs=omit_payload)) or None."
    )


def configure_trace_policy(policy: TracePolicy | None) -> None:
    """Set the process-wide default ``TracePolicy`` of middleware hook spans (``None``: clear).

    A middleware's own ``trace_policy`` overrides it whole. Call it once, at startup.
    """
    global _default_policy  # one process-wide default, as in LangChain
    _default_policy = _checked(policy, lambda: "configure_trace_policy(policy)")


def _own_policy(middleware: object) -> TracePolicy | None:
    def owner() -> str:  # only for the error: finding a class's line reads its source
        name = getattr(middleware, "name", type(middleware).__name__)
        return f"middleware {name!r} ({origin(middleware)}) trace_policy"

    return _checked(getattr(middleware, "trace_policy", None), owner)


def resolve_trace_policy(middleware: object) -> TracePolicy | None:
    """The policy ``middleware``'s hook spans follow now: its own, else the default, else none.

    ``None`` means trace as usual. A ``trace_policy`` that is not a ``TracePolicy`` is a
    ``TypeError`` naming the middleware.
    """
    own = _own_policy(middleware)
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
    """The ``TracePolicy`` to attach to one of ``middleware``'s hook spans.

    The middleware's own policy is read now (when the agent is built); the process default
    when the span records. With neither, values are recorded unchanged.
    """
    own = _own_policy(middleware)
    return TracePolicy(
        process_inputs=_processor(own, "process_inputs"),
        process_outputs=_processor(own, "process_outputs"),
    )
