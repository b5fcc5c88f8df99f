"""LangChain interop: LangChain's middleware in funcware stacks, and funcware's in LangChain's.

``to_langchain(middleware)`` turns funcware middleware into LangChain middleware;
``to_langchain_format(response_format)`` does the same for a structured-output format.
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
