"""funcware.compose — putting middleware together: ``compose()`` and ``create_agent()``."""

from .agent import create_agent
from .always import AlwaysRunGraph, run_error
from .chain import ComposedMiddleware, compose
from .explain import Explanation, explain
from .keys import UnknownStateKeyError
from .nodes import InvalidJumpError
from .plan import BrokenStackError, DuplicateMiddlewareError

__all__ = [
    "AlwaysRunGraph",
    "BrokenStackError",
    "ComposedMiddleware",
    "DuplicateMiddlewareError",
    "Explanation",
    "InvalidJumpError",
    "UnknownStateKeyError",
    "compose",
    "create_agent",
    "explain",
    "run_error",
]
