"""Filling in what a hook declares for one call (``config``, ``store``, ``error``, ...):
loaded the first time a hook that declares one runs."""

from __future__ import annotations

import inspect
from typing import Any

from langchain_core.runnables.config import ensure_config
from langgraph._internal._constants import CONF, CONFIG_KEY_NODE_ERROR

__all__ = ["injected_values"]

_MISSING = object()


def injected_values(
    extras: tuple[tuple[str, str, Any], ...], runtime: Any, config: Any
) -> dict[str, Any]:
    """The keyword arguments ``extras`` (``(name, runtime attribute, default)``) name."""
    found: dict[str, Any] = {}
    for name, attribute, default in extras:
        value: Any = _MISSING
        if name == "config":
            value = config if config is not None else ensure_config()
        elif name == "runtime":
            value = runtime
        elif name == "error":
            value = (config or {}).get(CONF, {}).get(CONFIG_KEY_NODE_ERROR, _MISSING)
        elif runtime is not None:
            value = getattr(runtime, attribute, _MISSING)
        if value is _MISSING:
            if default is inspect.Parameter.empty:
                raise ValueError(  # langgraph's words first, as for its own nodes
                    f"Missing required config key {attribute!r} for a hook: it declares "
                    f"a {name!r} parameter, but this run has none (e.g. no store given "
                    f"to create_agent). Give the parameter a default (`{name}: ... | "
                    "None = None`) or provide it."
                )
            value = default
        found[name] = value
    return found
