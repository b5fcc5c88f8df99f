"""Checking the hook methods of an ``AgentMiddleware`` subclass, once per class.

Decorated functions are checked when decorated; a class is checked here, when
:func:`~funcware.hooks.middleware.hook_impls` first reads it (so when the agent is built):
each hook method must be callable with the hook's arguments, ``a``-prefixed twins must be
``async def`` and the others not, and a method whose name is one slip away from a hook's
(``before_modle``) or that carries ``@hook_config`` without being a hook is refused, since
it would never be called. A node hook written as ``(self, state)`` is called without the
runtime, as decorated functions are (see :mod:`.injection`).
"""

from __future__ import annotations

import difflib
import inspect
import weakref
from collections.abc import Callable
from typing import Any

from langgraph._internal._runnable import KWARGS_CONFIG_KEYS

__all__ = ["STATE_ONLY", "check_class"]

STATE_ONLY = "state-only"
"""The arity of a node hook method that takes ``(self, state)``."""

_NODE = ("before_agent", "before_model", "after_model", "after_agent")
_WRAP = ("wrap_model_call", "wrap_tool_call", "wrap_agent_call")
_METHODS = tuple(name for hook in _NODE + _WRAP for name in (hook, "a" + hook))

_INJECTABLE = frozenset(key for key, *_ in KWARGS_CONFIG_KEYS) | {"runtime"}

_checked: weakref.WeakKeyDictionary[type, dict[str, str]] = weakref.WeakKeyDictionary()


def _where(func: object) -> str:
    code = getattr(inspect.unwrap(func), "__code__", None)  # type: ignore[arg-type]
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else "<unknown>"


def _binds(func: Callable[..., Any], count: int) -> bool | None:
    """Whether ``func`` (unbound, with ``self``) takes ``count`` more arguments; None: unknown."""
    try:
        signature = inspect.signature(func, follow_wrapped=False)
        injected = {  # what langgraph passes by name (config, writer, store, ...)
            p.name: None
            for index, p in enumerate(signature.parameters.values())
            if index > count
            and p.default is p.empty
            and (p.kind is p.KEYWORD_ONLY or p.name in _INJECTABLE)
        }
        signature.bind(None, *range(count), **injected)
    except TypeError:
        return False
    except ValueError:
        return None
    return True


def _arity(cls: type, name: str, func: Callable[..., Any]) -> str:
    hook = name[1:] if name.startswith("a") and name[1:] in _NODE + _WRAP else name
    shape = "(self, request, handler)" if hook in _WRAP else "(self, state, runtime)"
    if _binds(func, 2) is not False:
        return "full"
    if hook in _NODE and _binds(func, 1):
        return STATE_ONLY
    try:
        signature = str(inspect.signature(func, follow_wrapped=False))
    except (TypeError, ValueError):  # pragma: no cover - _binds said it is known
        signature = "(unknown)"
    raise TypeError(
        f"{cls.__qualname__}.{name} (defined at {_where(func)}) cannot be called as "
        f"{shape.replace('self, ', '')}: its signature is {signature}. Define it as "
        f"`def {name}{shape}: ...`" + ("" if hook in _WRAP else " (or `(self, state)`).")
    )


def _flavour(cls: type, name: str, func: Callable[..., Any]) -> None:
    is_async_name = name.startswith("a") and name[1:] in _NODE + _WRAP
    plain = inspect.isfunction(func) and not hasattr(func, "__wrapped__")
    if is_async_name and plain and not inspect.iscoroutinefunction(func):
        raise TypeError(
            f"{cls.__qualname__}.{name} (defined at {_where(func)}) is a plain `def`, but "
            f"{name} is the async twin of {name[1:]} and is awaited. Write `async def "
            f"{name}(...)`, or rename it to {name[1:]} for a sync hook."
        )
    if not is_async_name and inspect.iscoroutinefunction(func):
        raise TypeError(
            f"{cls.__qualname__}.{name} (defined at {_where(func)}) is `async def`, but "
            f"{name} is the sync hook and is not awaited. Rename it to a{name} (the async "
            f"twin), or make it a plain `def`."
        )


def _misspelled(cls: type, bases: tuple[type, ...]) -> None:
    for klass in cls.__mro__:
        if klass in bases or klass is object:
            break
        for attr, value in vars(klass).items():
            if attr in _METHODS or attr.startswith("_") or not callable(value):
                continue
            close = difflib.get_close_matches(attr, _METHODS, n=1, cutoff=0.85)
            declared = getattr(value, "__can_jump_to__", None) is not None
            if not close and not declared:
                continue
            if close and abs(len(close[0]) - len(attr)) > 2 and not declared:
                continue
            looks = f"it looks like {close[0]}" if close else "it carries @hook_config"
            fix = f"rename it to {close[0]}" if close else "name it after the hook it implements"
            hooks = "" if close else f" ({', '.join(_METHODS)})"
            raise TypeError(
                f"{cls.__qualname__}.{attr} (defined at {_where(value)}) is not a hook "
                f"method, so funcware would never call it, but {looks}. {fix[0].upper()}"
                f"{fix[1:]}{hooks}; a helper method should start with an underscore."
            )


def check_class(cls: type, bases: tuple[type, ...]) -> dict[str, str]:
    """Check ``cls``'s hook methods (once); map each overridden one to its arity."""
    found = _checked.get(cls)
    if found is not None:
        return found
    _misspelled(cls, bases)
    found = {}
    for name in _METHODS:
        for klass in cls.__mro__:
            if name in vars(klass):
                if klass not in bases:
                    func = vars(klass)[name]
                    if inspect.isfunction(func):
                        _flavour(cls, name, func)
                        found[name] = _arity(cls, name, func)
                break
    _checked[cls] = found
    return found
