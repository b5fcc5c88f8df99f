"""What an agent streams beyond its nodes, as LangChain's ``create_agent``: the tool-call and
sub-agent projections, the middleware's then ``create_agent``'s ``transformers``, metadata."""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from langgraph.prebuilt import ToolCallTransformer

from funcware.hooks.middleware import TransformerFactory

if TYPE_CHECKING:
    from langgraph.stream import StreamTransformer

__all__ = ["agent_metadata", "agent_transformers", "member_transformers"]

INTEGRATION = "langchain_create_agent"
"""The ``ls_integration`` LangChain's agents report; funcware's agents build the same graph."""


def _check(factory: object, owner: str) -> TransformerFactory:
    if callable(factory):
        return factory
    raise TypeError(
        f"{owner} has the transformer {factory!r} ({type(factory).__name__}), which is not "
        "callable; a transformer is a StreamTransformer class or a factory called as "
        "factory(scope), e.g. functools.partial(MyTransformer, option=...)."
    )


def _unique(factories: Iterable[TransformerFactory]) -> list[TransformerFactory]:
    """Each factory once (by identity: factories need not be hashable), first place kept."""
    return list({id(factory): factory for factory in factories}.values())


def member_transformers(middleware: Sequence[Any]) -> list[TransformerFactory]:
    """Every middleware's ``transformers``, in order, each factory once."""
    return _unique(
        _check(factory, f"middleware {getattr(m, 'name', m)!r}")
        for m in middleware
        for factory in getattr(m, "transformers", ()) or ()
    )


_LC_SUBAGENTS = "langchain.agents._subagent_transformer"


@functools.cache
def langchain_module(name: str) -> ModuleType | None:
    """LangChain's module ``name`` if the ``langchain`` distribution is installed (whatever has
    been imported) and it imports, else ``None``; asked once per process."""
    try:
        importlib.metadata.distribution("langchain")
    except importlib.metadata.PackageNotFoundError:
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _langchain_subagents() -> TransformerFactory | None:
    """LangChain's sub-agent transformer, when LangChain is installed."""
    found = getattr(langchain_module(_LC_SUBAGENTS), "SubagentTransformer", None)
    return found if callable(found) else None


def funcware_subagents(scope: tuple[str, ...]) -> StreamTransformer:
    """funcware's sub-agent projection for ``scope``; :mod:`.subagents` loads with the first
    v3 stream (langgraph only ever calls a factory with a scope)."""
    from funcware.compose.stream.subagents import SubagentTransformer

    return SubagentTransformer(scope)


def subagent_transformer() -> TransformerFactory:
    """The sub-agent projection: LangChain's transformer when LangChain is installed (code
    written for it checks for its handle class), else funcware's, with the same handles."""
    return _langchain_subagents() or funcware_subagents


def agent_transformers(
    middleware: Sequence[Any], given: Sequence[TransformerFactory] | None
) -> list[TransformerFactory]:
    """The transformer factories to compile the agent with, in LangChain's order."""
    extra = [_check(factory, "create_agent(transformers=...)") for factory in given or ()]
    return _unique(
        [
            ToolCallTransformer,
            subagent_transformer(),
            *member_transformers(middleware),
            *extra,
        ]
    )


def agent_metadata(name: str | None) -> dict[str, Any]:
    """The metadata every run of the agent carries."""
    metadata: dict[str, Any] = {"ls_integration": INTEGRATION}
    if name:
        metadata["lc_agent_name"] = name
    return metadata
