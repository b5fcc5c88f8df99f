"""Every exception class funcware raises for a mistake, in one place.

``from funcware.errors import InvalidJumpError`` (or ``from funcware import ...``): the
``funcware.compose`` attribute is the ``compose()`` function, not the subpackage.
"""

from funcware.compose.keys import UnknownStateKeyError
from funcware.compose.nodes import InvalidJumpError, UnknownNodeError
from funcware.compose.observe import UndeclaredEffectError
from funcware.compose.ordering import MiddlewareOrderError, MiddlewareOrderWarning
from funcware.compose.pauses import MissingCheckpointerError
from funcware.compose.plan import BrokenStackError

__all__ = [
    "BrokenStackError",
    "InvalidJumpError",
    "MiddlewareOrderError",
    "MiddlewareOrderWarning",
    "MissingCheckpointerError",
    "UndeclaredEffectError",
    "UnknownNodeError",
    "UnknownStateKeyError",
]
