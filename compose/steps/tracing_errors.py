"""A ``trace_policy`` that is no ``TracePolicy``, in words. Loaded only for that error."""

from __future__ import annotations

from funcware.hooks.middleware import origin

__all__ = ["not_a_policy"]


def not_a_policy(policy: object, middleware: object | None) -> TypeError:
    """The error for ``policy`` given to ``configure_trace_policy`` (``middleware`` is
    ``None``) or set as ``middleware``'s ``trace_policy``."""
    if middleware is None:
        owner = "configure_trace_policy(policy)"
    else:  # finding a class's line reads its source: only for the error
        name = getattr(middleware, "name", type(middleware).__name__)
        owner = f"middleware {name!r} ({origin(middleware)}) trace_policy"
    return TypeError(
        f"{owner} is {type(policy).__name__} {policy!r}; it must be a "
        "langgraph.types.TracePolicy (e.g. TracePolicy(process_inputs=omit_payload)) or None."
    )
