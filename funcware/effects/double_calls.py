"""Warning about a wrap layer that calls its handler again after it answered.

A layer that calls its handler a second time after the first call *returned* (not
raised), and returns the second answer, throws the first answer away and pays for the
model (or the tool) twice. That is a retry when it is meant, and a bug when it is not, so
it is warned about once per layer unless the middleware declared
``writes=["handler.retry"]``.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from funcware.effects.declarations import declarations

if TYPE_CHECKING:
    from funcware.compose.wraps.layers import Handler, Run

__all__ = ["DoubleCallWarning", "check_double_call"]


class DoubleCallWarning(UserWarning):
    """A wrap layer called its handler again after it answered and kept the second answer."""


def _declares_retry(middleware: Any) -> bool:
    try:
        declared = declarations(middleware)
    except (TypeError, ValueError):  # a broken declaration is reported where it is built
        return False
    return declared is not None and "handler.retry" in declared.writes


def check_double_call(run: Run, at: int, handler: Handler, response: Any) -> None:
    """Warn (once per layer) if layer ``at`` returned the last of several answers it got."""
    if response is not handler.answer or at in run.warned:
        return
    impl = run.impls[at]
    if _declares_retry(impl.middleware):
        run.warned.add(at)
        return
    run.warned.add(at)
    paid = "model" if run.hook == "wrap_model_call" else "tool"
    warnings.warn(
        DoubleCallWarning(
            f"{impl.describe()} called its handler again after the handler had returned an "
            f"answer, and returned the later answer: the earlier answer was thrown away and "
            f"the {paid} was paid for {handler.answered} times. If this retry is meant, "
            "declare it with writes=['handler.retry'] (an option of the decorator, or the "
            "middleware class's `writes` attribute); otherwise call the handler once and "
            "reuse its answer."
        ),
        stacklevel=2,
    )
