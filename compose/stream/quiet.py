"""Keeping model calls out of the user's stream: middleware's own calls, and held turns.

Two tools, both on the runnable config that langchain-core passes implicitly to every
``model.invoke()``:

- :func:`hidden_calls` runs a hook with langgraph's ``nostream`` tag added to the current
  config, so a model the hook calls itself (a summarizer, a grader) stays out of
  ``stream_mode="messages"``, as LangChain's own middleware do. The agent's own model
  call (and a tool's run) is made with :func:`agent_config`, the node's config as it was.
  Given the agent's model, a wrap layer that streams that model itself (eager tool
  calling) streams token by token, as the agent's call would. :func:`visible_layers`
  lets a layer whose middleware sets ``stream_internal_calls=True`` run unhidden.
- :func:`quiet_config` is a config without the streaming callback handlers (messages
  stream, ``astream_events``, v3 events) but with every other handler (tracers), for a
  model call whose tokens a guard holds back.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.constants import TAG_NOSTREAM
from langgraph.pregel._messages import StreamMessagesHandler

try:  # the marker langchain-core gives every handler that streams tokens to a user
    from langchain_core.tracers._streaming import _StreamingCallbackHandler as _Streaming
except ImportError:  # pragma: no cover - older langchain-core
    _Streaming = None  # type: ignore[assignment,misc]

from funcware.hooks.middleware import HookImpl

__all__ = [
    "agent_config",
    "current_config",
    "hidden_calls",
    "quiet_config",
    "runnable_config",
    "under_callbacks",
    "visible_layers",
]

_AGENT_CONFIG: ContextVar[tuple[RunnableConfig, RunnableConfig] | None] = ContextVar(
    "funcware_agent_config", default=None
)
"""``(hidden config, the node's own config)`` while :func:`hidden_calls` is active."""


class _AgentModelStreams(BaseCallbackHandler):
    """Lets the ``messages`` stream see the agent's own model despite the ``nostream`` tag.

    A run is the agent's model when langchain-core reports it with the model's cached
    ``_serialized`` dict (the same object for the model and every binding of it).
    """

    run_inline = True  # before the model's first token, in order, under async runs too

    def __init__(self, serialized: object, streams: Sequence[BaseCallbackHandler]) -> None:
        self.serialized = serialized
        self.streams = streams

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[Any]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Register the agent model's run with each stream handler, untagged."""
        if serialized is not self.serialized:
            return
        visible = [tag for tag in tags or () if tag != TAG_NOSTREAM]
        for stream in self.streams:
            stream.on_chat_model_start(
                serialized,
                messages,
                run_id=run_id,
                parent_run_id=parent_run_id,
                tags=visible,
                metadata=dict(metadata) if metadata is not None else None,
                **kwargs,
            )


def _with_agent_model(config: RunnableConfig, agent_model: object) -> RunnableConfig:
    """``config`` whose callbacks also stream ``agent_model``'s runs (when ``messages`` streams).

    Only langgraph's ``messages`` handlers read the tag; other handlers (events, tools)
    already see every run.
    """
    callbacks: Any = config.get("callbacks")
    serialized = getattr(agent_model, "_serialized", None)
    if serialized is None or not isinstance(callbacks, BaseCallbackManager):
        return config
    streams = [h for h in callbacks.handlers if isinstance(h, StreamMessagesHandler)]
    if not streams:
        return config
    manager = callbacks.copy()
    manager.add_handler(_AgentModelStreams(serialized, streams), inherit=True)
    return {**config, "callbacks": manager}


@contextmanager
def hidden_calls(config: RunnableConfig | None, agent_model: object = None) -> Iterator[None]:
    """Within, model calls that use the current config carry the ``nostream`` tag.

    :func:`agent_config` gives ``config`` itself, for the call the agent makes. Calls to
    ``agent_model`` (if given) still stream.
    """
    if config is None:
        yield
        return
    tags = config.get("tags") or []
    hidden: RunnableConfig = {**config, "tags": [*tags, TAG_NOSTREAM]}
    if agent_model is not None:
        hidden = _with_agent_model(hidden, agent_model)
    own = _AGENT_CONFIG.set((hidden, config))
    token = var_child_runnable_config.set(hidden)
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)
        _AGENT_CONFIG.reset(own)


def _shown(sync: Callable[..., Any]) -> Callable[..., Any]:
    """``sync`` run with the node's config; the handler it gets hides again, for inner layers."""

    @functools.wraps(sync)
    def layer(request: Any, handler: Callable[[Any], Any]) -> Any:
        pair = _AGENT_CONFIG.get()
        if pair is None:
            return sync(request, handler)
        hidden, own = pair

        def inner(req: Any) -> Any:
            with current_config(hidden):
                return handler(req)

        with current_config(own):
            return sync(request, inner)

    return layer


def _ashown(async_: Callable[..., Any]) -> Callable[..., Any]:
    """Async :func:`_shown`."""

    @functools.wraps(async_)
    async def layer(request: Any, handler: Callable[[Any], Any]) -> Any:
        pair = _AGENT_CONFIG.get()
        if pair is None:
            return await async_(request, handler)
        hidden, own = pair

        async def inner(req: Any) -> Any:
            with current_config(hidden):
                return await handler(req)

        with current_config(own):
            return await async_(request, inner)

    return layer


def visible_layers(impls: Sequence[HookImpl]) -> list[HookImpl]:
    """``impls``, each whose middleware sets ``stream_internal_calls=True`` run unhidden.

    Such a layer's own model calls show in the ``messages`` stream; the layers inside it
    stay hidden unless they opt in too. Others are returned as they are (no cost).
    """
    return [
        dataclasses.replace(
            impl,
            sync=_shown(impl.sync) if impl.sync is not None else None,
            async_=_ashown(impl.async_) if impl.async_ is not None else None,
        )
        if getattr(impl.middleware, "stream_internal_calls", False)
        else impl
        for impl in impls
    ]


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


@contextmanager
def runnable_config(config: RunnableConfig | None) -> Iterator[None]:
    """Make a node's ``config`` the current runnable config, on Python 3.10.

    From 3.11 langgraph runs each node in a context that carries its config, so
    ``interrupt()``, ``get_stream_writer()`` and model callbacks find it. On 3.10
    asyncio cannot, and async nodes run without it; funcware's nodes set it here.
    """
    if config is None or sys.version_info >= (3, 11):
        yield
        return
    token = var_child_runnable_config.set(config)
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)
