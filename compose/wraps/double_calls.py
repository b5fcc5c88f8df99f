"""Warning a wrap layer that called its handler again and threw the earlier answer away."""

from __future__ import annotations

import warnings
from typing import Any

from funcware.compose.wraps.layers import Handler, Run
from funcware.errors import DoubleCallWarning

__all__ = ["check_double_call"]


def check_double_call(run: Run, at: int, handler: Handler, response: Any) -> None:
    """Warn, once per layer, if layer ``at`` returned the last of several answers it got
    (a retry throws the earlier answers away) and did not declare ``handler.retry``."""
    if response is not handler.answer or at in run.warned:
        return
    run.warned.add(at)
    impl = run.impls[at]
    if "handler.retry" in (getattr(impl.middleware, "writes", None) or ()):
        return
    paid = "model" if run.hook == "wrap_model_call" else "tool"
    warnings.warn(
        DoubleCallWarning(
            f"{impl.describe()} called its handler again after the handler had returned "
            f"an answer, and returned the later answer: the earlier answer was thrown "
            f"away and the {paid} was paid for {handler.answered} times. If this retry "
            "is meant, declare it with writes=['handler.retry'] (an option of the "
            "decorator, or the middleware class's `writes` attribute); otherwise call "
            "the handler once and reuse its answer."
        ),
        stacklevel=3,
    )
