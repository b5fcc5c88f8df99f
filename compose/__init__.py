"""funcware.compose — putting middleware together: ``compose()`` and ``create_agent()``.

Here: ``agent`` (``create_agent``), ``chain`` (``compose``), ``explain``, ``structured``
(structured output at run time). By job: ``graph`` (the plan, schemas, reducers, edges),
``steps`` (running node hooks and the model and tool nodes), ``wraps`` (the onion),
``stream`` (what an agent streams, and stream guards), ``effects`` (order checks and
``effects="strict"``), ``threads`` (the sync/async bridge).
"""

from funcware.compose.agent import create_agent
from funcware.compose.chain import ComposedMiddleware, compose
from funcware.compose.graph.plan import BrokenStackError, DuplicateMiddlewareError
from funcware.compose.steps.keys import UnknownStateKeyError, UnknownStateKeyWarning
from funcware.compose.steps.nodes import InvalidJumpError
from funcware.effects.hazards import Hazard
from funcware.effects.ordering import Conflict, MiddlewareOrderError, MiddlewareOrderWarning
from funcware.effects.strict import UndeclaredEffectError
from funcware.explain import Explanation, explain
from funcware.policies.always import AlwaysRunGraph, run_error

__all__ = [
    "AlwaysRunGraph",
    "BrokenStackError",
    "ComposedMiddleware",
    "Conflict",
    "DuplicateMiddlewareError",
    "Explanation",
    "Hazard",
    "InvalidJumpError",
    "MiddlewareOrderError",
    "MiddlewareOrderWarning",
    "UndeclaredEffectError",
    "UnknownStateKeyError",
    "UnknownStateKeyWarning",
    "compose",
    "create_agent",
    "explain",
    "run_error",
]
