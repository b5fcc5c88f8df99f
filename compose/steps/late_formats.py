"""A response format that a wrap layer set and the agent was not built with: bound and parsed
by a strategy the ``model_call`` seam makes on first need. Loaded only then."""

from __future__ import annotations

from funcware.compose.seams import late_model_call
from funcware.compose.steps.model_call import ModelCall

__all__ = ["formats_for"]


def formats_for(call: ModelCall) -> ModelCall:
    """``call``'s strategy for response formats it was not built with (kept on ``call``)."""
    if call.formats is None:
        plain = ModelCall()
        plain.formats = plain  # binds what it is given
        call.formats = late_model_call("response_format", plain)
    return call.formats
