"""Declaring a middleware you did not write: a stand-in that carries a declaration.

:func:`declared` returns a middleware that is the given one (same class, same hooks,
same name, the same attributes: it shares them, so what one records the other sees)
and declares what it was given, over what the middleware declared itself (or what
funcware's table of LangChain's built-ins says). The original is left as it is.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, TypeVar

from funcware.effects.declarations import _CACHE_ATTR, Declaration, declarations, parse

__all__ = ["declared"]

M = TypeVar("M")


def declared(middleware: M, keywords: dict[str, Any]) -> M:
    """A stand-in for ``middleware`` that declares ``keywords`` (the ones given replace
    its own; the others are kept)."""
    name = getattr(middleware, "name", type(middleware).__name__)
    source = f"funcware.effects.declare({name!r})"
    if isinstance(middleware, type):
        raise TypeError(
            f"{source}: takes a middleware instance, got the class {middleware.__qualname__}; "
            f"write declare({middleware.__qualname__}(...), ...)."
        )
    from funcware.compose.chain import ComposedMiddleware

    if isinstance(middleware, ComposedMiddleware):  # flattened by create_agent: it would be lost
        members = ", ".join(m.name for m in middleware.members)
        raise TypeError(
            f"{source}: a compose() is flattened into its members ({members}) when the agent "
            "is built, so a declaration on it would be lost; declare the member it is about: "
            "compose(..., funcware.effects.declare(member, ...), ...)."
        )
    given = parse(source, **keywords) or Declaration()
    base = declarations(middleware) or Declaration()
    changes: dict[str, Any] = {}
    for key, value in keywords.items():
        if value is None:
            continue
        changes[key] = getattr(given, key)
        if key in ("reads", "writes"):
            changes[f"hook_{key}"] = getattr(given, f"hook_{key}")
    decl = replace(base, **changes, why=base.why)
    klass = type(middleware)
    stand_in = type(
        klass.__name__,
        (klass,),
        {"__module__": klass.__module__, "__qualname__": klass.__qualname__, _CACHE_ATTR: decl},
    )
    instance: M = object.__new__(stand_in)
    instance.__dict__ = middleware.__dict__  # the same attributes, not a copy of them
    return instance
