"""``create_agent``'s model argument: a chat model, or a ``"provider:model"`` name
(:mod:`.model_names`)."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

__all__ = ["resolve_model"]


def resolve_model(model: object) -> BaseChatModel:
    """``model`` as a chat model: a ``BaseChatModel`` as is, a name through ``init_chat_model``."""
    if isinstance(model, str):
        from funcware.compose.graph.model_names import init_chat_model

        model = init_chat_model(model)
    if isinstance(model, BaseChatModel):
        return model
    raise TypeError(
        f"create_agent(model=...) got {model!r}; it must be a langchain-core BaseChatModel "
        "or a 'provider:model' string."
    )
