"""Marking a model call a middleware makes itself as internal: LangChain 1.5's metadata."""

from __future__ import annotations

import secrets
import sys
from typing import Any

__all__ = ["INTERNAL_CALL_METADATA_KEY", "internal_call_metadata"]

INTERNAL_CALL_METADATA_KEY = "lc_internal_call"
"""The model-call metadata key that marks a call as internal to middleware (LangChain's)."""

_INTERNAL_CALL_TOKEN = secrets.token_hex(16)
"""This process's marker value (user metadata cannot guess it to hide a real call)."""

_LC_INTERNAL_CALLS = "langchain.agents.middleware.internal_call_transformer"


def internal_call_metadata() -> dict[str, Any]:
    """Metadata marking a model call as internal to middleware: merge it into the call's
    ``config["metadata"]`` (LangChain's function of the same name).

    funcware already keeps the model calls a hook makes out of the user's message stream
    (unless its middleware sets ``stream_internal_calls``); this marker also lets stream
    transformers, LangChain's ``InternalCallTransformer`` included, recognise the call.
    Call it for each model call: once ``langchain`` is loaded it gives LangChain's marker.
    """
    lc = sys.modules.get(_LC_INTERNAL_CALLS)
    if lc is not None:
        return dict(lc.internal_call_metadata())
    return {INTERNAL_CALL_METADATA_KEY: _INTERNAL_CALL_TOKEN}
