"""Checking what is handed to ``create_agent``, ``compose`` and ``explain``, item by item;
the wording of a failed check is in :mod:`.argument_errors`, loaded only then."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from funcware.hooks.middleware import is_middleware

__all__ = ["check_choice", "check_list", "check_schema", "member_problem"]


def member_problem(item: object, place: str) -> str | None:
    """Why ``item`` (found at ``place``, e.g. ``middleware[1]``) is not a middleware; or None."""
    if is_middleware(item):
        return None
    from funcware.compose.graph import argument_errors

    return argument_errors.member_problem(item, place)


def check_list(value: object, call: str, argument: str, noun: str) -> Sequence[Any]:
    """``value`` if it is a list or tuple; else a ``TypeError`` saying to wrap it in a list."""
    if isinstance(value, (list, tuple)):
        return value
    from funcware.compose.graph.argument_errors import not_a_list

    raise not_a_list(value, call, argument, noun)


def check_schema(value: object, argument: str) -> None:
    """A ``state_schema``/``context_schema`` must be a class (or None)."""
    if value is not None and not inspect.isclass(value):
        from funcware.compose.graph.argument_errors import not_a_class

        raise not_a_class(value, argument)


def check_choice(value: object, name: str, allowed: tuple[str, ...], source: str) -> None:
    """A ``ValueError`` unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise ValueError(
            f"{source} got {name}={value!r}; use one of {', '.join(repr(a) for a in allowed)}."
        )
