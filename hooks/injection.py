"""langgraph's injectable node parameters (``config``, ``writer``, ``store``, ...) for hooks.

A hook that declares ``config``, ``writer``, ``store``, ``runtime``, ``previous`` or ``error``
gets it, as a langgraph node (and a LangChain hook) does: what to inject is decided once per
hook by asking langgraph's own ``RunnableCallable``; each call only fills in the values.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from langchain_core.runnables.config import ensure_config
from langgraph._internal._constants import CONF, CONFIG_KEY_NODE_ERROR
from langgraph._internal._runnable import RunnableCallable

__all__ = ["Injection", "injection_for"]

_MISSING = object()


@dataclass(frozen=True)
class Injection:
    """How to call one hook: how many leading positional arguments, and what to inject.

    ``positional`` is 1 (``state``) or 2 (``state, runtime``); ``extras`` are the keyword
    parameters langgraph would inject, each ``(name, runtime attribute, default)``.
    """

    positional: int = 2
    extras: tuple[tuple[str, str, Any], ...] = ()

    def values(self, runtime: Any, config: Any) -> dict[str, Any]:
        """The keyword arguments for one call (empty when the hook declares none)."""
        found: dict[str, Any] = {}
        for name, attribute, default in self.extras:
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


PLAIN = Injection()
"""``hook(state, runtime)`` with nothing injected: most hooks."""


def _takes_runtime(parameters: list[inspect.Parameter], injected: dict[str, Any]) -> bool:
    """Whether ``runtime`` goes second, positionally: when the second parameter is positional
    and not another injectable one (``def hook(state, config)`` gets ``config``), or ``*args``."""
    for parameter in parameters[1:2]:
        if parameter.kind is parameter.VAR_POSITIONAL:
            return True
        if parameter.kind not in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            return False
        return parameter.name == "runtime" or parameter.name not in injected
    return bool(parameters) and parameters[0].kind is inspect.Parameter.VAR_POSITIONAL


_OF_FUNCTIONS: WeakKeyDictionary[Callable[..., Any], Injection] = WeakKeyDictionary()
_OF_METHODS: WeakKeyDictionary[Callable[..., Any], Injection] = WeakKeyDictionary()
"""Each plain function's injection, read once (a bound method's is kept under its
``__func__``, whose signature it shares minus ``self``)."""


def injection_for(func: Callable[..., Any]) -> Injection:
    """What langgraph would inject into ``func`` as a node (beyond ``state`` and ``runtime``).

    ``runtime`` goes positionally when ``func`` has a second positional parameter (whatever
    its name); a keyword-only ``runtime`` is injected. Worked out once per plain function or
    method (other callables are read every time).
    """
    method = inspect.ismethod(func)
    key = func.__func__ if method else func  # type: ignore[attr-defined]
    if not inspect.isfunction(key):
        return _injection(func)
    cache = _OF_METHODS if method else _OF_FUNCTIONS
    found = cache.get(key)
    if found is None:
        found = cache[key] = _injection(func)
    return found


def _injection(func: Callable[..., Any]) -> Injection:
    try:
        parameters = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return PLAIN
    accepts = RunnableCallable(func, trace=False).func_accepts
    positional = 2 if _takes_runtime(parameters, accepts) else 1
    taken = {p.name for p in parameters[:positional]}
    extras = tuple(
        (name, attribute, default)
        for name, (attribute, default) in accepts.items()
        if name not in taken
    )
    if positional == 2 and not extras:
        return PLAIN
    return Injection(positional, extras)
