"""What streams despite :mod:`.hidden`, and model calls kept out of the user's stream.

Loaded only when needed: :class:`AgentModelStreams` lets the ``messages`` stream see the
agent's own model under the ``nostream`` tag; :func:`shown_layers` runs layers that set
``stream_internal_calls=True`` unhidden; :func:`quiet_config` drops the handlers that
stream tokens (a guard's held turn); :func:`under_callbacks` runs a block as a child run.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.constants import TAG_NOSTREAM

try:  # the marker langchain-core gives every handler that streams tokens to a user
    from langchain_core.tracers._streaming import _StreamingCallbackHandler as _Streaming
except ImportError:  # pragma: no cover - older langchain-core
    _Streaming = None  # type: ignore[assignment,misc]

from funcware.compose.stream.hidden import (
    AGENT_CONFIG,
    agent_config,
    current_config,
    hidden_calls,
    runnable_config,
    visible_layers,
)
from funcware.hooks.middleware import HookImpl

__all__ = [  # the features import the hidden.py names from here too
    "AgentModelStreams",
    "agent_config",
    "current_config",
    "hidden_calls",
    "own_config",
    "quiet_config",
    "runnable_config",
    "shown_layers",
    "under_callbacks",
    "visible_layers",
]


class AgentModelStreams(BaseCallbackHandler):
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


def _shown(sync: Callable[..., Any]) -> Callable[..., Any]:
    """``sync`` run with the node's config; the handler it gets hides again, for inner layers."""

    @functools.wraps(sync)
    def layer(request: Any, handler: Callable[[Any], Any]) -> Any:
        pair = AGENT_CONFIG.get()
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
        pair = AGENT_CONFIG.get()
        if pair is None:
            return await async_(request, handler)
        hidden, own = pair

        async def inner(req: Any) -> Any:
            with current_config(hidden):
                return await handler(req)

        with current_config(own):
            return await async_(request, inner)

    return layer


def shown_layers(impls: Sequence[HookImpl]) -> list[HookImpl]:
    """``impls``, each whose middleware sets ``stream_internal_calls=True`` run unhidden."""
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
    pair = AGENT_CONFIG.get()
    hidden: RunnableConfig = {**current, "callbacks": callbacks}
    own = None
    if pair is not None and current is pair[0]:
        own = AGENT_CONFIG.set((hidden, {**pair[1], "callbacks": callbacks}))
    token = var_child_runnable_config.set(hidden)
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)
        if own is not None:
            AGENT_CONFIG.reset(own)


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
