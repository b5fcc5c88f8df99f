"""``@wrap_agent_call``: a function around each run of the agent, lifted into middleware.

The function is called as ``f(request, handler)`` with an
:class:`~funcware.hooks.types.AgentRequest`; ``handler(request)`` runs the inner layers and
the run and returns an :class:`~funcware.hooks.types.AgentResponse`. An ``async def``
function becomes ``awrap_agent_call``. The generated middleware stays callable as the
function, like every decorated hook.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, Literal, TypeVar, overload

from typing_extensions import ParamSpec

from funcware.hooks.decorators import FunctionMiddleware
from funcware.hooks.middleware import where

__all__ = ["wrap_agent_call"]

P = ParamSpec("P")
R = TypeVar("R")


def _binds_two(func: Callable[..., Any]) -> bool:
    try:
        inspect.signature(func).bind(None, None)
    except TypeError:
        return False
    except ValueError:  # no signature to read (a builtin): let the call tell
        return True
    return True


DIRECT = "__funcware_direct_layer__"
"""Marks the method that only calls the decorated function: the run calls the function."""


def _lift(func: object, name: str | None, per_run: str | None) -> FunctionMiddleware[Any, Any]:
    if not callable(func) or isinstance(func, type):
        raise TypeError(
            f"@wrap_agent_call decorates a function; got {func!r} ({type(func).__name__}). "
            "Write `@wrap_agent_call` above `def my_wrap(request, handler): ...`."
        )
    label = f"{getattr(func, '__qualname__', func)!s} (defined at {where(func)})"
    if not _binds_two(func):
        raise TypeError(
            f"@wrap_agent_call cannot use {label}: a wrap_agent_call hook is called as "
            f"f(request, handler), but its signature is {inspect.signature(func)}. Define it "
            f"as `def {getattr(func, '__name__', 'hook')}(request, handler): ...`."
        )
    if name is not None and (not isinstance(name, str) or not name):
        raise TypeError(f"@wrap_agent_call got name={name!r} for {label}; use a non-empty str.")
    if inspect.iscoroutinefunction(func):

        async def awrap(self: Any, request: Any, handler: Any) -> Any:
            return await func(request, handler)

        method: Callable[..., Any] = awrap
        method_name = "awrap_agent_call"
    else:

        def wrap(self: Any, request: Any, handler: Any) -> Any:
            return func(request, handler)

        method, method_name = wrap, "wrap_agent_call"
    method.__wrapped__ = func  # type: ignore[attr-defined]
    setattr(method, DIRECT, True)
    method.__qualname__ = f"{getattr(func, '__qualname__', 'hook')}.<wrap_agent_call>"
    class_name = name or getattr(func, "__name__", None) or type(func).__name__
    namespace: dict[str, Any] = {
        method_name: method,
        "__module__": getattr(func, "__module__", __name__),
        "__qualname__": getattr(func, "__qualname__", class_name) if name is None else name,
        "__doc__": getattr(func, "__doc__", None),
    }
    if per_run is not None:
        from funcware.runs.per_run import check_mode

        namespace["per_run"] = check_mode(per_run, f"@wrap_agent_call for {label}")
    cls = type(class_name, (FunctionMiddleware,), namespace)
    instance: FunctionMiddleware[Any, Any] = cls()
    functools.update_wrapper(instance, func, updated=())
    return instance


@overload
def wrap_agent_call(func: Callable[P, R], /) -> FunctionMiddleware[P, R]: ...
@overload
def wrap_agent_call(
    func: None = None,
    /,
    *,
    name: str | None = None,
    per_run: Literal["on", "off", "required"] | None = None,
) -> Callable[[Callable[P, R]], FunctionMiddleware[P, R]]: ...
def wrap_agent_call(
    func: Any = None,
    /,
    *,
    name: str | None = None,
    per_run: Literal["on", "off", "required"] | None = None,
) -> Any:
    """Lift ``func(request, handler) -> AgentResponse`` into middleware around each run.

    ``name=`` names the middleware; ``per_run=`` is the option of every decorator (see
    :mod:`funcware.runs.per_run`). Example::

        @wrap_agent_call
        def retry_once(request, handler):
            try:
                return handler(request)
            except ConnectionError:
                return handler(request)  # starts again from the run's first checkpoint
    """
    if func is None:
        return lambda target: _lift(target, name, per_run)
    return _lift(func, name, per_run)
