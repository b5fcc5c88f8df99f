"""``@dynamic_prompt``'s hook: a ``wrap_model_call`` that sets the request's system message
from what the user's function returns (loaded when ``dynamic_prompt`` is first used)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from langchain_core.messages import SystemMessage

from funcware.hooks.decorators import _binds
from funcware.hooks.middleware import HookName
from funcware.hooks.types import ModelRequest


def _prompt_message(func: Callable[..., Any], value: object) -> SystemMessage:
    if isinstance(value, SystemMessage):
        return value
    if isinstance(value, str):
        return SystemMessage(content=value)
    from funcware.hooks.refusals import bad_prompt

    raise bad_prompt(func, value)


def prompt_adapter(func: Callable[..., Any], hook: HookName) -> Callable[..., Any]:
    """The ``wrap_model_call`` method for ``func(request) -> str | SystemMessage``."""
    if not _binds(func, 1):
        from funcware.hooks.refusals import bad_signature

        raise bad_signature("dynamic_prompt", func)
    if inspect.iscoroutinefunction(func):

        async def async_prompt(self: Any, request: ModelRequest[Any], handler: Any) -> Any:
            message = _prompt_message(func, await func(request))
            return await handler(request.override(system_message=message))

        return async_prompt

    def sync_prompt(self: Any, request: ModelRequest[Any], handler: Any) -> Any:
        message = _prompt_message(func, func(request))
        return handler(request.override(system_message=message))

    return sync_prompt
