"""Hiding middleware's own model calls from ``stream_mode="messages"`` (langgraph's ``nostream``
tag, as LangChain's middleware do); the agent's own call uses :func:`agent_config`."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from langchain_core.callbacks import BaseCallbackManager
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.constants import TAG_NOSTREAM
from langgraph.pregel._messages import StreamMessagesHandler

from funcware.hooks.middleware import HookImpl

__all__ = [
    "AGENT_CONFIG",
    "agent_config",
    "current_config",
    "hidden_calls",
    "runnable_config",
    "visible_layers",
]

AGENT_CONFIG: ContextVar[tuple[RunnableConfig, RunnableConfig] | None] = ContextVar(
    "funcware_agent_config", default=None
)
"""``(hidden config, the node's own config)`` while :func:`hidden_calls` is active."""


def _with_agent_model(config: RunnableConfig, agent_model: object) -> RunnableConfig:
    """``config`` whose callbacks also stream ``agent_model``'s runs (when ``messages`` streams)."""
    callbacks: Any = config.get("callbacks")
    serialized = getattr(agent_model, "_serialized", None)
    if serialized is None or not isinstance(callbacks, BaseCallbackManager):
        return config
    streams = [h for h in callbacks.handlers if isinstance(h, StreamMessagesHandler)]
    if not streams:
        return config
    from funcware.compose.stream.quiet import AgentModelStreams

    manager = callbacks.copy()
    manager.add_handler(AgentModelStreams(serialized, streams), inherit=True)
    return {**config, "callbacks": manager}


@contextmanager
def hidden_calls(config: RunnableConfig | None, agent_model: object = None) -> Iterator[None]:
    """Within, model calls that use the current config carry the ``nostream`` tag (calls to
    ``agent_model``, if given, still stream); :func:`agent_config` gives ``config`` itself."""
    if config is None:
        yield
        return
    tags = config.get("tags") or []
    hidden: RunnableConfig = {**config, "tags": [*tags, TAG_NOSTREAM]}
    if agent_model is not None:
        hidden = _with_agent_model(hidden, agent_model)
    own = AGENT_CONFIG.set((hidden, config))
    token = var_child_runnable_config.set(hidden)
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)
        AGENT_CONFIG.reset(own)


def visible_layers(impls: Sequence[HookImpl]) -> list[HookImpl]:
    """``impls``, each whose middleware sets ``stream_internal_calls=True`` run unhidden (the
    layers inside it stay hidden unless they opt in too)."""
    if not any(getattr(impl.middleware, "stream_internal_calls", False) for impl in impls):
        return list(impls)
    from funcware.compose.stream.quiet import shown_layers

    return shown_layers(impls)


def agent_config() -> RunnableConfig | None:
    """The config the agent's own model call runs with (``None``: the current one); only
    inside the :func:`hidden_calls` scope that set it (a nested graph run has its own)."""
    pair = AGENT_CONFIG.get()
    if pair is not None and var_child_runnable_config.get() is pair[0]:
        return pair[1]
    return None


@contextmanager
def current_config(config: RunnableConfig) -> Iterator[None]:
    """Within, ``config`` is the current config, so no runnable merges the outer one back in
    (a bound model merges the current config into the one it is given)."""
    token = var_child_runnable_config.set(config)
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)


@contextmanager
def runnable_config(config: RunnableConfig | None) -> Iterator[None]:
    """Make a node's ``config`` the current runnable config on Python 3.10 (from 3.11 langgraph
    runs each node in a context that carries it)."""
    if config is None or sys.version_info >= (3, 11):
        yield
        return
    with current_config(config):
        yield
