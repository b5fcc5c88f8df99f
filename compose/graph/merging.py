"""Merging the state fields that middleware (and ``create_agent``'s ``state_schema``) declare
beyond ``AgentState``'s; loaded only when one does (see :func:`.schema.merge_schemas`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar, get_args

from funcware.compose.graph.schema import declarations
from funcware.hooks.middleware import AgentMiddleware, origin
from funcware.hooks.types import AgentState

__all__ = ["SchemaOwner", "merged_declarations"]


class SchemaOwner:
    """``middleware 'x' (file:line)``, worked out only for a warning (finding a line is slow)."""

    def __init__(self, middleware: AgentMiddleware[Any, Any, Any]) -> None:
        self.middleware = middleware

    def __str__(self) -> str:
        return f"middleware {self.middleware.name!r} ({origin(self.middleware)})"


def _generic(annotation: Any) -> bool:
    """Whether a field's type is a bare type variable (``Annotated`` extras aside)."""
    base = get_args(annotation)[0] if hasattr(annotation, "__metadata__") else annotation
    return isinstance(base, TypeVar)


def _compatible(first: Any, second: Any) -> bool:
    """Same type, or one of them left generic (``class S(AgentState[T])``)."""
    return first == second or _generic(first) or _generic(second)


def merged_declarations(
    owned: Sequence[tuple[object, type]], winner: type | None
) -> tuple[dict[str, tuple[Any, bool]], bool]:
    """Each merged field's type and whether it is required (see ``merge_schemas``); and
    whether two declarations conflicted."""
    merged = declarations(AgentState)
    declared_by: dict[str, object] = dict.fromkeys(merged, "AgentState")
    overridden = declarations(winner) if winner is not None else {}
    conflicted = False
    for owner, schema in owned:
        for key, (annotation, required) in declarations(schema).items():
            if key not in merged:
                merged[key] = (annotation, required)
                declared_by[key] = owner
                continue
            known, known_required = merged[key]
            if _compatible(known, annotation):
                if _generic(known):  # a TypeVar takes the other owner's concrete type
                    known = annotation
                    declared_by[key] = owner
                merged[key] = (known, required and known_required)
                continue
            from funcware.compose.graph.schema_conflicts import warn_conflict, widened

            wider = widened(known, annotation)
            if wider is None:
                if key not in overridden:
                    warn_conflict(key, known, declared_by[key], annotation, owner)
                    conflicted = True
                wider = annotation
                declared_by[key] = owner
            merged[key] = (wider, required and known_required)
    merged.update(overridden)
    return merged, conflicted
