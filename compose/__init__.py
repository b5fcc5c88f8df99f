"""funcware.compose — putting middleware together: ``compose()`` and ``create_agent()``."""

from .agent import create_agent
from .always import AlwaysRunGraph, run_error
from .chain import ComposedMiddleware, compose
from .explain import Explanation, explain
from .keys import UnknownStateKeyError
from .nodes import InvalidJumpError
from .observe import UndeclaredEffectError
from .ordering import Conflict, MiddlewareOrderError, MiddlewareOrderWarning
from .plan import BrokenStackError, DuplicateMiddlewareError

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
    "compose",
    "create_agent",
    "explain",
    "run_error",
]
