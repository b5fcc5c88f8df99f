"""LangChain interop: LangChain's middleware in funcware stacks, and funcware's in LangChain's.

A feature on the core's adapt seam: :class:`~funcware.interop.adapter.LangChainAdapter`
lets the core read a LangChain middleware's hooks (its ``wrap_model_call`` adapted to
funcware's types) and a LangChain state schema's fields. ``to_langchain(middleware)``
turns funcware middleware into LangChain middleware; ``to_langchain_format(response_format)``
does the same for a structured-output format (both need the ``langchain`` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from funcware.interop.langchain import to_langchain, to_langchain_format

__all__ = ["to_langchain", "to_langchain_format"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from funcware.interop import langchain

        return getattr(langchain, name)
    raise AttributeError(f"module 'funcware.interop' has no attribute {name!r}")


def register(**_: Any) -> None:
    """Register the adapter on the core's adapt seam (``funcware/__init__.py`` calls it)."""
    from funcware.hooks.adapters import register_adapter
    from funcware.interop.adapter import LangChainAdapter

    register_adapter(LangChainAdapter())
