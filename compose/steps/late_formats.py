"""A response format that a wrap layer set and the agent was not built with: bound and parsed
by a strategy the ``model_call`` seam makes on first need. Loaded only then."""

from __future__ import annotations

from funcware.compose.seams import _BY_SEAM, _FEATURES, _ON, Build, Plugin, _index
from funcware.compose.steps.model_call import ModelCall

__all__ = ["formats_for", "late_model_call"]


def late_model_call(word: str, call: ModelCall) -> ModelCall:
    """``call`` as the features switched on by ``word`` leave it, loading them: for what a
    run asks that its build did not (a wrap layer giving a request a response format). The
    seams' registry read late, by the one core module that needs it."""
    build = Build("create_agent", {word: None})
    for index, feature in enumerate(_FEATURES):
        if isinstance(feature, Plugin) and word in feature.on:
            _FEATURES[index] = feature.load()
            _index()
    for feature in _BY_SEAM["model_call"]:
        if word in _ON.get(feature.name, ()):
            call = feature.model_call(call, build)
    return call


def formats_for(call: ModelCall) -> ModelCall:
    """``call``'s strategy for response formats it was not built with (kept on ``call``)."""
    if call.formats is None:
        plain = ModelCall()
        plain.formats = plain  # binds what it is given
        call.formats = late_model_call("response_format", plain)
    return call.formats
