"""LangChain interop: LangChain's middleware in funcware stacks, and funcware's in LangChain's.

A feature on the core's adapt seam (:mod:`funcware.hooks.adapters`). Its adapter knows a
LangChain middleware by its class (one deriving from
``langchain.agents.middleware.types.AgentMiddleware``) and a LangChain state schema by
LangChain's omit markers in its fields, so it acts only on LangChain's own objects and
never depends on import order: a LangChain middleware's ``wrap_model_call`` is adapted to
funcware's request and response types (:mod:`funcware.interop.bridge`, loaded only then);
its other hooks run as they are, except ``HumanInTheLoopMiddleware``'s ``after_model``, which
fails closed on a resume it cannot take (:mod:`funcware.interop.hitl`).

``to_langchain(middleware)`` turns funcware middleware into LangChain middleware;
``to_langchain_format(response_format)`` does the same for a structured-output format
(both need the ``langchain`` extra).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, get_args, get_origin

from typing_extensions import NotRequired, Required

if TYPE_CHECKING:
    from funcware.hooks.middleware import HookImpl, HookName
    from funcware.interop.langchain import to_langchain, to_langchain_format

__all__ = ["LangChainAdapter", "langchain_base", "to_langchain", "to_langchain_format"]

TYPES_MODULE = "langchain.agents.middleware.types"


def langchain_base(cls: type) -> type | None:
    """LangChain's ``AgentMiddleware`` if ``cls`` derives from it (read from the class)."""
    for klass in cls.__mro__:
        if klass.__name__ == "AgentMiddleware" and klass.__module__ == TYPES_MODULE:
            return klass
    return None


def _adapt(hook: HookName, method: Callable[..., Any]) -> Callable[..., Any]:
    if hook == "after_model" and _is_hitl(getattr(method, "__self__", None)):
        from funcware.interop.hitl import guard_after_model

        return guard_after_model(method)
    if hook != "wrap_model_call":
        return method
    from funcware.interop.bridge import adapt_model_wrap

    return adapt_model_wrap(method)


def _is_hitl(middleware: object) -> bool:
    """Whether ``middleware`` is LangChain's ``HumanInTheLoopMiddleware`` (read from its class)."""
    return any(
        klass.__name__ == "HumanInTheLoopMiddleware"
        and klass.__module__ == "langchain.agents.middleware.human_in_the_loop"
        for klass in type(middleware).__mro__
    )


def _metadata(annotation: Any) -> tuple[Any, ...]:
    while get_origin(annotation) in (Required, NotRequired):
        annotation = get_args(annotation)[0]
    return tuple(getattr(annotation, "__metadata__", ()))


def _langchain_marked(hints: dict[str, Any]) -> bool:
    """Whether a field's ``Annotated`` metadata holds one of LangChain's omit markers."""
    return any(
        type(item).__name__ == "OmitFromSchema" and type(item).__module__.startswith("langchain.")
        for annotation in hints.values()
        for item in _metadata(annotation)
    )


class LangChainAdapter:
    """Reads LangChain middleware's hooks and LangChain state schemas' fields."""

    name = "langchain"

    def hooks(self, middleware: object) -> dict[HookName, HookImpl] | None:
        """A LangChain middleware's hooks, its model wrap adapted; ``None`` for others."""
        base = langchain_base(type(middleware))
        if base is None:
            return None
        from funcware.hooks.middleware import read_hooks

        return read_hooks(middleware, base, _adapt)

    def fields(self, schema: type, hints: dict[str, Any]) -> dict[str, Any] | None:
        """A LangChain schema's fields in funcware's terms; ``None`` for others."""
        if not _langchain_marked(hints):
            return None
        from funcware.interop.bridge import langchain_fields

        return langchain_fields(hints)


def __getattr__(name: str) -> Any:
    if name in ("to_langchain", "to_langchain_format"):
        from funcware.interop import langchain

        return getattr(langchain, name)
    raise AttributeError(f"module 'funcware.interop' has no attribute {name!r}")
