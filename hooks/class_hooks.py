"""Checking an ``AgentMiddleware`` subclass's hook methods, once per class: their arguments,
their flavour (``a``-prefixed twins ``async def``), and near-miss names (``before_modle``) or
``@hook_config`` on a non-hook, which would never be called. Worded in :mod:`.class_refusals`.
"""

from __future__ import annotations

import difflib
import inspect
import weakref
from collections.abc import Callable
from typing import Any

from langgraph._internal._runnable import KWARGS_CONFIG_KEYS

__all__ = ["check_class"]

_NODE = ("before_agent", "before_model", "after_model", "after_agent")
_WRAP = ("wrap_model_call", "wrap_tool_call", "wrap_agent_call")
_METHODS = tuple(name for hook in _NODE + _WRAP for name in (hook, "a" + hook))

_INJECTABLE = frozenset(key for key, *_ in KWARGS_CONFIG_KEYS) | {"runtime"}

_checked: weakref.WeakSet[type] = weakref.WeakSet()


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


def _check_arguments(cls: type, name: str, func: Callable[..., Any]) -> None:
    """Refuse a method that takes neither its hook's arguments nor (a node hook) ``state``."""
    hook = name[1:] if name.startswith("a") and name[1:] in _NODE + _WRAP else name
    if _binds(func, 2) is not False or (hook in _NODE and _binds(func, 1)):
        return
    from funcware.hooks.class_refusals import bad_arity

    raise bad_arity(cls, name, func, hook in _WRAP)


def _flavour(cls: type, name: str, func: Callable[..., Any]) -> None:
    is_async_name = name.startswith("a") and name[1:] in _NODE + _WRAP
    plain = inspect.isfunction(func) and not hasattr(func, "__wrapped__")
    if (is_async_name and plain and not inspect.iscoroutinefunction(func)) or (
        not is_async_name and inspect.iscoroutinefunction(func)
    ):
        from funcware.hooks.class_refusals import wrong_flavour

        raise wrong_flavour(cls, name, func, is_async_name)


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
            from funcware.hooks.class_refusals import not_a_hook

            raise not_a_hook(cls, attr, value, close[0] if close else None, _METHODS)


def check_class(cls: type, bases: tuple[type, ...]) -> None:
    """Check ``cls``'s hook methods (once), those it does not inherit from ``bases``."""
    if cls in _checked:
        return
    _misspelled(cls, bases)
    for name in _METHODS:
        for klass in cls.__mro__:
            if name in vars(klass):
                func = vars(klass)[name]
                if klass not in bases and inspect.isfunction(func):
                    _flavour(cls, name, func)
                    _check_arguments(cls, name, func)
                break
    _checked.add(cls)
