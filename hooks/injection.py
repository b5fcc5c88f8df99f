"""What a hook is called with: ``state``, ``runtime`` if it takes it, and the langgraph
node parameters it declares (``config``, ``writer``, ``store``, ...), worked out once per hook
by asking langgraph's own ``RunnableCallable``."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from langgraph._internal._runnable import RunnableCallable

__all__ = ["Injection", "injection_for"]


@dataclass(frozen=True)
class Injection:
    """How to call one hook: ``positional`` 1 (``state``) or 2 (``state, runtime``), and the
    ``extras`` to inject by keyword, each ``(name, runtime attribute, default)``."""

    positional: int = 2
    extras: tuple[tuple[str, str, Any], ...] = ()

    def values(self, runtime: Any, config: Any) -> dict[str, Any]:
        """The keyword arguments for one call (empty when the hook declares none)."""
        from funcware.hooks.injected import injected_values

        return injected_values(self.extras, runtime, config)


PLAIN = Injection()
"""``hook(state, runtime)`` with nothing injected: most hooks."""


def _takes_runtime(parameters: list[inspect.Parameter], injected: dict[str, Any]) -> bool:
    """Whether ``runtime`` goes second: a positional second parameter not otherwise injected."""
    for parameter in parameters[1:2]:
        if parameter.kind is parameter.VAR_POSITIONAL:
            return True
        if parameter.kind not in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            return False
        return parameter.name == "runtime" or parameter.name not in injected
    return bool(parameters) and parameters[0].kind is inspect.Parameter.VAR_POSITIONAL


_OF_FUNCTIONS: WeakKeyDictionary[Callable[..., Any], Injection] = WeakKeyDictionary()
_OF_METHODS: WeakKeyDictionary[Callable[..., Any], Injection] = WeakKeyDictionary()
"""Read once per function, and per method's ``__func__`` (its signature minus ``self``)."""


def injection_for(func: Callable[..., Any]) -> Injection:
    """How to call ``func`` as a node hook: ``runtime`` goes second when ``func`` has a second
    positional parameter (whatever its name); langgraph injects what else it declares."""
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
