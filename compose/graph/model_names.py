"""A model given to ``create_agent`` by name (``"provider:model"``), resolved by LangChain's
own ``init_chat_model`` (the ``langchain`` extra); loaded only for a name."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["LANGCHAIN_EXTRA", "init_chat_model"]

LANGCHAIN_EXTRA = "pip install -e '.[langchain]' from a funcware checkout, or pip install langchain"


def init_chat_model(name: str) -> Any:
    """LangChain's ``init_chat_model(name)``; an ``ImportError`` saying what to install."""
    try:
        chat_models = importlib.import_module("langchain.chat_models")
    except ImportError as exc:
        raise ImportError(
            f"create_agent(model={name!r}): a model given by name is resolved by LangChain's "
            f"init_chat_model, which needs the langchain extra ({LANGCHAIN_EXTRA}). "
            "Or build the chat model yourself (e.g. ChatOpenAI(model=...)) and pass it."
        ) from exc
    return chat_models.init_chat_model(name)
