"""The features' options given to a decorator (or left by ``@hook_config``): each checked by
the function its feature registered, and kept on the hook method or the generated class.
Loaded when a decoration has one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from funcware.hooks.options import Context, option, options_for

__all__ = ["apply_options", "stash"]


def stash(target: Any, options: dict[str, Any], context: Context) -> dict[str, Any]:
    """Check ``options``; mark ``target`` with the method ones, and return the class ones
    (attributes of the generated class)."""
    attributes: dict[str, Any] = {}
    for key, value in options.items():
        found = option(key)
        if found is None or found.check is None:
            continue
        if value is found.default or (value == found.default and type(value) is bool):
            continue
        kept = found.check(value, context)
        if found.target == "method":
            setattr(target, found.mark, kept)
        else:
            attributes[key] = kept
    completions = {
        id(o.complete): o.complete for k in attributes if (o := option(k)) and o.complete
    }
    for complete in completions.values():
        complete(attributes, context)
    return attributes


def apply_options(
    method: Callable[..., Any], func: Callable[..., Any], options: dict[str, Any], context: Context
) -> dict[str, Any]:
    """Stash a decorator's ``options`` and the marks ``@hook_config`` left on ``func`` on the
    generated hook ``method``; return the class attributes."""
    attributes = stash(method, options, context)
    for found in options_for("hook_config"):
        if found.target == "method" and hasattr(func, found.mark):
            stash(method, {found.name: getattr(func, found.mark)}, context)
    return attributes
