"""funcware.compose — putting middleware together: ``compose()`` and ``create_agent()``.

Here: ``agent`` (``create_agent``), ``chain`` (``compose``), ``explain``, ``structured``
(structured output at run time). By job: ``graph`` (the plan, schemas, reducers, edges),
``steps`` (running node hooks and the model and tool nodes), ``wraps`` (the onion),
``stream`` (what an agent streams, and stream guards), ``effects`` (order checks and
``effects="strict"``), ``threads`` (the sync/async bridge).
"""

from .agent import create_agent
from .chain import ComposedMiddleware, compose
from .effects.observe import UndeclaredEffectError
from .effects.ordering import Conflict, MiddlewareOrderError, MiddlewareOrderWarning
from .explain import Explanation, explain
from .graph.plan import BrokenStackError, DuplicateMiddlewareError
from .steps.always import AlwaysRunGraph, run_error
from .steps.keys import UnknownStateKeyError, UnknownStateKeyWarning
from .steps.nodes import InvalidJumpError

__all__ = [
    "AlwaysRunGraph",
    "BrokenStackError",
    "ComposedMiddleware",
    "Conflict",
    "DuplicateMiddlewareError",
    "Explanation",
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
