"""Applying ``@hook_config``: its marks on a function, or on a generated middleware's hook
methods (loaded when ``hook_config`` is first used)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from funcware.hooks.decorators import FunctionMiddleware, _check_function, _label
from funcware.hooks.jumps import in_order, normalise_jumps
from funcware.hooks.middleware import JUMP_ATTR, NODE_HOOKS, hook_impls, where
from funcware.hooks.option_values import stash
from funcware.hooks.options import Context
from funcware.hooks.types import JumpTo

F = TypeVar("F", bound=Callable[..., Any])


def configure(
    can_jump_to: Sequence[JumpTo] | None, timeout: float | None, always: bool
) -> Callable[[F], F]:
    """The decorator ``@hook_config(can_jump_to=..., timeout=..., always=...)`` returns."""
    given = {"timeout": timeout, "always": always}
    marked = {key: value for key, value in given.items() if value not in (None, False)}

    def decorator(target: F) -> F:
        if isinstance(target, FunctionMiddleware):
            if can_jump_to is not None or not marked:
                _add_jumps_to_generated(target, can_jump_to)
            for impl in hook_impls(target).values():
                name = impl.hook if impl.sync is not None else "a" + impl.hook
                context = Context("hook_config", impl.hook, _label(target.__wrapped__))
                stash(type(target).__dict__[name], marked, context)
            return target
        if inspect.isclass(target):
            from funcware.hooks.refusals import hook_config_on_a_class

            raise hook_config_on_a_class(target, where(target))
        func = _check_function(target, "hook_config")
        stash(func, marked, Context("hook_config", "", _label(func)))
        jumps = normalise_jumps(can_jump_to, func, "@hook_config")
        old: tuple[JumpTo, ...] = tuple(getattr(func, JUMP_ATTR, ()) or ())
        setattr(func, JUMP_ATTR, list(in_order(old, jumps)))
        return target

    return decorator


def _add_jumps_to_generated(
    middleware: FunctionMiddleware[Any, Any], can_jump_to: Sequence[JumpTo] | None
) -> None:
    impls = hook_impls(middleware)
    node_hooks = [impl for hook, impl in impls.items() if hook in NODE_HOOKS]
    if not node_hooks:
        from funcware.hooks.refusals import jumps_without_node_hooks

        raise jumps_without_node_hooks(middleware, list(impls))
    jumps = normalise_jumps(can_jump_to, middleware.__wrapped__, "@hook_config")
    for impl in node_hooks:
        name = impl.hook if impl.sync is not None else "a" + impl.hook
        adapter = type(middleware).__dict__[name]
        old: tuple[JumpTo, ...] = tuple(getattr(adapter, JUMP_ATTR, ()) or ())
        setattr(adapter, JUMP_ATTR, list(in_order(old, jumps)))
