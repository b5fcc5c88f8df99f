"""Whether a run's ``context=`` fits the agent's ``context_schema``. Loaded only when a run is
given a context and the agent has a schema."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from typing import Any

from pydantic import BaseModel
from typing_extensions import is_typeddict

__all__ = ["check_context"]


def _field_names(schema: type[Any]) -> list[str] | None:
    """The fields of a dataclass or pydantic model; None for other classes."""
    if is_dataclass(schema):
        return [f.name for f in fields(schema)]
    if issubclass(schema, BaseModel):
        return list(schema.model_fields)
    return None


def _context_problem(schema: type[Any], context: Any) -> str | None:
    """Why ``context`` cannot serve as ``context_schema``; None if it can (or cannot be told).

    Lenient as duck typing is: an object with every field of a dataclass or model passes.
    """
    if is_typeddict(schema):
        return None if isinstance(context, Mapping) else "a dict of its keys"
    if not isinstance(schema, type):
        return None
    try:
        names = _field_names(schema)
        if names is None:
            scalar = isinstance(context, (str, bytes, int, float))
            wrong = scalar and not isinstance(context, schema)
            return f"{schema.__name__}(...)" if wrong else None
        if isinstance(context, (schema, Mapping)) or all(hasattr(context, n) for n in names):
            return None
    except TypeError:  # a Protocol or generic alias: isinstance cannot tell
        return None
    return f"{schema.__name__}(...) or a dict of its fields"


def check_context(graph: Any, context: Any) -> None:
    """Refuse a ``context`` that cannot serve as ``graph``'s ``context_schema``."""
    schema = graph.context_schema
    fix = _context_problem(schema, context)
    if fix is not None:
        from funcware.compose.steps.run_errors import context_error

        raise context_error(graph, context, schema, fix)
