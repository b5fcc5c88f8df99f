"""Why a middleware class or object is refused: the errors of :mod:`.class_hooks` and
:func:`~funcware.hooks.middleware.hook_impls`. Loads only when something is wrong."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any


def _where(func: object) -> str:
    code = getattr(inspect.unwrap(func), "__code__", None)  # type: ignore[arg-type]
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else "<unknown>"


def bad_arity(cls: type, name: str, func: Callable[..., Any], wrap: bool) -> TypeError:
    """``cls.name`` cannot take its hook's arguments (``wrap``: a wrap hook's)."""
    shape = "(self, request, handler)" if wrap else "(self, state, runtime)"
    try:
        signature = str(inspect.signature(func, follow_wrapped=False))
    except (TypeError, ValueError):  # pragma: no cover - the check read it
        signature = "(unknown)"
    return TypeError(
        f"{cls.__qualname__}.{name} (defined at {_where(func)}) cannot be called as "
        f"{shape.replace('self, ', '')}: its signature is {signature}. Define it as "
        f"`def {name}{shape}: ...`" + ("" if wrap else " (or `(self, state)`).")
    )


def wrong_flavour(cls: type, name: str, func: Callable[..., Any], is_async_name: bool) -> TypeError:
    """``cls.name`` is sync where its name asks for async, or the other way round."""
    if is_async_name:
        return TypeError(
            f"{cls.__qualname__}.{name} (defined at {_where(func)}) is a plain `def`, but "
            f"{name} is the async twin of {name[1:]} and is awaited. Write `async def "
            f"{name}(...)`, or rename it to {name[1:]} for a sync hook."
        )
    return TypeError(
        f"{cls.__qualname__}.{name} (defined at {_where(func)}) is `async def`, but "
        f"{name} is the sync hook and is not awaited. Rename it to a{name} (the async "
        f"twin), or make it a plain `def`."
    )


def not_a_hook(
    cls: type, attr: str, value: object, close: str | None, methods: Sequence[str]
) -> TypeError:
    """``cls.attr`` looks like a hook method (``close``) or carries ``@hook_config``."""
    looks = f"it looks like {close}" if close else "it carries @hook_config"
    fix = f"Rename it to {close}" if close else "Name it after the hook it implements"
    hooks = "" if close else f" ({', '.join(methods)})"
    return TypeError(
        f"{cls.__qualname__}.{attr} (defined at {_where(value)}) is not a hook "
        f"method, so funcware would never call it, but {looks}. {fix}"
        f"{hooks}; a helper method should start with an underscore."
    )


def jumps_on_a_wrap(cls: type, hook: str, jumps: Sequence[str], where: str) -> TypeError:
    """A wrap hook method carries ``can_jump_to``."""
    return TypeError(
        f"{cls.__qualname__}.{hook} (defined at {where}) declares "
        f"can_jump_to={list(jumps)}, but only before_agent, before_model, after_model "
        "and after_agent hooks can jump; remove @hook_config from it."
    )


def not_a_middleware(obj: object) -> TypeError:
    """``obj`` is no middleware funcware or a registered adapter knows."""
    return TypeError(
        f"{obj!r} is not a middleware: subclass funcware.AgentMiddleware or "
        "decorate a function with @before_model, @wrap_model_call, ..."
    )
