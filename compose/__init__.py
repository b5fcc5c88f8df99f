"""funcware.compose — putting middleware together: ``compose()`` and ``create_agent()``."""

from .agent import create_agent
from .chain import ComposedMiddleware, compose
from .explain import Explanation, explain
from .keys import UnknownStateKeyError
from .nodes import InvalidJumpError
from .plan import BrokenStackError

__all__ = [
    "BrokenStackError",
    "ComposedMiddleware",
    "Explanation",
    "InvalidJumpError",
    "UnknownStateKeyError",
    "compose",
    "create_agent",
    "explain",
]
