"""Every exception (and warning) class funcware raises for a mistake, in one place.

``from funcware.errors import InvalidJumpError`` (or ``from funcware import ...``): the
``funcware.compose`` attribute is the ``compose()`` function, not the subpackage.
"""

from funcware.compose.graph.plan import BrokenStackError
from funcware.compose.steps.keys import UnknownStateKeyError, UnknownStateKeyWarning
from funcware.compose.steps.nodes import InvalidJumpError, UnknownNodeError
from funcware.compose.steps.pauses import MissingCheckpointerError
from funcware.effects.double_calls import DoubleCallWarning
from funcware.effects.ordering import MiddlewareOrderError, MiddlewareOrderWarning
from funcware.effects.strict import UndeclaredEffectError

__all__ = [
    "BrokenStackError",
    "DoubleCallWarning",
    "FuncwareDeprecationWarning",
    "InvalidJumpError",
    "MiddlewareOrderError",
    "MiddlewareOrderWarning",
    "MissingCheckpointerError",
    "UndeclaredEffectError",
    "UnknownNodeError",
    "UnknownStateKeyError",
    "UnknownStateKeyWarning",
]


class FuncwareDeprecationWarning(DeprecationWarning):
    """Something public is deprecated: the message says since which version, what to use
    instead, and the release that removes it (at least one minor release later).

    A ``DeprecationWarning``, so Python shows it in ``__main__`` and under pytest; turn it
    into an error with ``-W error::funcware.FuncwareDeprecationWarning``.
    """
