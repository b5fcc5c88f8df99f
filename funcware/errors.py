"""Every exception (and warning) class funcware raises for a mistake, in one place.

``from funcware.errors import InvalidJumpError`` (or ``from funcware import ...``): the
``funcware.compose`` attribute is the ``compose()`` function, not the subpackage.
"""

from funcware.compose.effects.observe import UndeclaredEffectError
from funcware.compose.effects.ordering import MiddlewareOrderError, MiddlewareOrderWarning
from funcware.compose.graph.plan import BrokenStackError
from funcware.compose.steps.keys import UnknownStateKeyError, UnknownStateKeyWarning
from funcware.compose.steps.nodes import InvalidJumpError, UnknownNodeError
from funcware.compose.steps.pauses import MissingCheckpointerError
from funcware.compose.wraps.double_calls import DoubleCallWarning

__all__ = [
    "BrokenStackError",
    "DoubleCallWarning",
    "InvalidJumpError",
    "MiddlewareOrderError",
    "MiddlewareOrderWarning",
    "MissingCheckpointerError",
    "UndeclaredEffectError",
    "UnknownNodeError",
    "UnknownStateKeyError",
    "UnknownStateKeyWarning",
]
