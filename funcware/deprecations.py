"""Public names that moved, and their new homes: read on the first lookup that misses.

Each old import path keeps working with a ``FuncwareDeprecationWarning``
(:func:`funcware.hooks.moved.moved`); the core packages name this table only as a string,
so the core never names the feature packages that hold the names now.
"""

from __future__ import annotations

__all__ = ["COMPOSE", "FUNCWARE", "HOOKS"]

FUNCWARE = {
    "BridgeSettings": "funcware.compose.threads.pool",
    "configure_bridge": "funcware.compose.threads.bridge",
}
"""Names ``funcware`` no longer exports (internals), with where they live now."""

HOOKS = {
    **dict.fromkeys(("EFFECTS", "Declaration", "declarations"), "funcware.effects.declarations"),
    **dict.fromkeys(
        ("HOOKS", "NODE_HOOKS", "WRAP_HOOKS", "HookImpl", "hook_impls"),
        "funcware.hooks.middleware",
    ),
    "HookTimeoutError": "funcware.errors",
    "SlidingWindow": "funcware.guards",
    "StreamPolicy": "funcware.guards",
    **dict.fromkeys(
        (
            "TracePolicy",
            "configure_trace_policy",
            "hook_trace_policy",
            "omit_payload",
            "resolve_trace_policy",
        ),
        "funcware.compose.steps.tracing",
    ),
}
"""Names that moved out of ``funcware.hooks``."""
COMPOSE = {
    **dict.fromkeys(
        (
            "BrokenStackError",
            "DuplicateMiddlewareError",
            "InvalidJumpError",
            "MiddlewareOrderError",
            "MiddlewareOrderWarning",
            "UndeclaredEffectError",
            "UnknownStateKeyError",
            "UnknownStateKeyWarning",
        ),
        "funcware.errors",
    ),
    "AlwaysRunGraph": "funcware.compose.steps.runs",
    "Conflict": "funcware.effects.ordering",
    "Hazard": "funcware.effects.hazards",
    "Explanation": "funcware.explain",
    "explain": "funcware.explain",
    "run_error": "funcware.policies",
}
"""Names that moved out of ``funcware.compose``."""
