"""Which middleware wrap the whole run: their ``wrap_agent_call``/``awrap_agent_call``.

Read once per build from the flat middleware list (the core never looks): a member has a
layer when its class overrides either method of ``AgentMiddleware``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from funcware.hooks.class_hooks import check_class
from funcware.hooks.middleware import AgentMiddleware, where
from funcware.runs.agent_call import AgentLayer
from funcware.runs.decorator import DIRECT

__all__ = ["agent_layers"]


def _overrides(cls: type, attr: str) -> bool:
    for klass in cls.__mro__:
        if attr in vars(klass):
            return klass is not AgentMiddleware
    return False


def _direct(method: Any) -> Any:
    """The user's function behind a method ``@wrap_agent_call`` made, else ``method``."""
    func = getattr(method, "__wrapped__", None)
    return func if func is not None and getattr(method, DIRECT, False) else method


def agent_layers(members: Sequence[Any]) -> tuple[AgentLayer, ...]:
    """The ``wrap_agent_call`` layers of ``members``, first outermost."""
    found: list[AgentLayer] = []
    for member in members:
        if not isinstance(member, AgentMiddleware):
            continue  # LangChain's middleware (interop) has no run wrap
        cls = type(member)
        sync = member.wrap_agent_call if _overrides(cls, "wrap_agent_call") else None
        async_ = member.awrap_agent_call if _overrides(cls, "awrap_agent_call") else None
        if sync is None and async_ is None:
            continue
        check_class(cls, (AgentMiddleware,))
        at = where(sync or async_)
        # A decorated function is called as it is (one frame less around every run).
        sync, async_ = _direct(sync), _direct(async_)
        found.append(AgentLayer(member, sync, async_, at))
    return tuple(found)
