"""Keeping model calls out of the user's stream: middleware's own calls, and held turns.

Two tools, both on the runnable config that langchain-core passes implicitly to every
``model.invoke()``:

- :func:`hidden_calls` runs a hook with langgraph's ``nostream`` tag added to the current
  config, so a model the hook calls itself (a summarizer, a grader) stays out of
  ``stream_mode="messages"``, as LangChain's own middleware do. The agent's own model
  call is made with :func:`agent_config`, the node's config as it was.
- :func:`quiet_config` is a config without the streaming callback handlers (messages
  stream, ``astream_events``, v3 events) but with every other handler (tracers), for a
  model call whose tokens a guard holds back.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from langchain_core.callbacks import BaseCallbackManager
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.constants import TAG_NOSTREAM

try:  # the marker langchain-core gives every handler that streams tokens to a user
    from langchain_core.tracers._streaming import _StreamingCallbackHandler as _Streaming
except ImportError:  # pragma: no cover - older langchain-core
    _Streaming = None  # type: ignore[assignment,misc]

__all__ = ["agent_config", "current_config", "hidden_calls", "quiet_config", "under_callbacks"]

_AGENT_CONFIG: ContextVar[tuple[RunnableConfig, RunnableConfig] | None] = ContextVar(
    "funcware_agent_config", default=None
)
"""``(hidden config, the node's own config)`` while :func:`hidden_calls` is active."""


@contextmanager
def hidden_calls(config: RunnableConfig | None) -> Iterator[None]:
    """Within, model calls that use the current config carry the ``nostream`` tag.

    :func:`agent_config` gives ``config`` itself, for the call the agent makes.
    """
    if config is None:
        yield
        return
    tags = config.get("tags") or []
    hidden: RunnableConfig = {**config, "tags": [*tags, TAG_NOSTREAM]}
    own = _AGENT_CONFIG.set((hidden, config))
    token = var_child_runnable_config.set(hidden)
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)
        _AGENT_CONFIG.reset(own)


def agent_config() -> RunnableConfig | None:
    """The config the agent's own model call runs with (``None``: the current one).

    Only inside the :func:`hidden_calls` scope that set it: a graph run nested in a hook
    has a config of its own, and its calls use that.
    """
    pair = _AGENT_CONFIG.get()
    if pair is not None and var_child_runnable_config.get() is pair[0]:
        return pair[1]
    return None


def own_config() -> RunnableConfig | None:
    """The config a run opened now should start from: the agent's own (without the
    ``nostream`` tag) inside :func:`hidden_calls`, else the current one."""
    return agent_config() or var_child_runnable_config.get()


@contextmanager
def under_callbacks(callbacks: Any) -> Iterator[None]:
    """Within, the current config uses ``callbacks`` (a run's child callbacks), and so does
    the agent's own config if :func:`hidden_calls` set one: what runs inside (middleware's
    own calls, the agent's model call) is a child of that run and streams as before."""
    current = var_child_runnable_config.get() or {}
    pair = _AGENT_CONFIG.get()
    hidden: RunnableConfig = {**current, "callbacks": callbacks}
    own = None
    if pair is not None and current is pair[0]:
        own = _AGENT_CONFIG.set((hidden, {**pair[1], "callbacks": callbacks}))
    token = var_child_runnable_config.set(hidden)
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)
        if own is not None:
            _AGENT_CONFIG.reset(own)


def _is_streaming(handler: object) -> bool:
    return _Streaming is not None and isinstance(handler, _Streaming)


def quiet_config(config: RunnableConfig | None) -> RunnableConfig:
    """``config`` whose callbacks no longer include the handlers that stream tokens."""
    base: RunnableConfig = config if config is not None else {}
    callbacks: Any = base.get("callbacks")
    if isinstance(callbacks, BaseCallbackManager):
        manager = callbacks.copy()
        for handler in [*manager.handlers, *manager.inheritable_handlers]:
            if _is_streaming(handler):
                manager.remove_handler(handler)
        return {**base, "callbacks": manager}
    if isinstance(callbacks, list):
        return {**base, "callbacks": [h for h in callbacks if not _is_streaming(h)]}
    return base


@contextmanager
def current_config(config: RunnableConfig) -> Iterator[None]:
    """Within, ``config`` is the current config, so no runnable merges the outer one back in.

    (A bound model merges the current config into the one it is given: passing a quiet
    config alone would bring the streaming handlers back.)
    """
    token = var_child_runnable_config.set(config)
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)
