"""``create_agent``'s model argument: a chat model, or a ``"provider:model"`` name resolved by
LangChain's own ``init_chat_model`` (the ``langchain`` extra, imported only then)."""

from __future__ import annotations

import importlib
from typing import Any

from langchain_core.language_models import BaseChatModel

__all__ = ["resolve_model"]

LANGCHAIN_EXTRA = "pip install -e '.[langchain]' from a funcware checkout, or pip install langchain"


def _init_chat_model(name: str) -> Any:
    try:
        chat_models = importlib.import_module("langchain.chat_models")
    except ImportError as exc:
        raise ImportError(
            f"create_agent(model={name!r}): a model given by name is resolved by LangChain's "
            f"init_chat_model, which needs the langchain extra ({LANGCHAIN_EXTRA}). "
            "Or build the chat model yourself (e.g. ChatOpenAI(model=...)) and pass it."
        ) from exc
    return chat_models.init_chat_model(name)


def resolve_model(model: object) -> BaseChatModel:
    """``model`` as a chat model: a ``BaseChatModel`` as is, a name through ``init_chat_model``."""
    if isinstance(model, str):
        model = _init_chat_model(model)
    if isinstance(model, BaseChatModel):
        return model
    raise TypeError(
        f"create_agent(model=...) got {model!r}; it must be a langchain-core BaseChatModel "
        "or a 'provider:model' string."
    )
