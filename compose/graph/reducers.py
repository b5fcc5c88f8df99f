"""The reducers of a state: from a schema's annotations, or from the graph a node runs in.

A composite that runs as one node (``to_langchain(compose(...))`` in LangChain's agent, or
alone in a test) folds its members' writes itself. It must fold them as the agent would:
with the agent's reducers, which may come from a schema it never saw (``create_agent(
state_schema=...)``). Inside a running graph they are read off the graph's channels;
elsewhere the members' schemas are all there is.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from langgraph._internal._constants import CONFIG_KEY_READ
from langgraph.channels.base import BaseChannel
from langgraph.channels.binop import BinaryOperatorAggregate
from langgraph.channels.delta import DeltaChannel
from langgraph.channels.topic import Topic
from langgraph.config import get_config
from langgraph.graph.message import add_messages

from funcware.compose.graph.schema import field_metadata, native_fields

__all__ = ["Reducer", "current_reducers", "fold", "graph_reducers", "schema_reducers"]

Reducer = Callable[[Any, Any], Any]
"""``reducer(current, write) -> new value``."""


def _topic(current: Any, value: Any) -> list[Any]:
    return [*(current or ()), *(value if isinstance(value, list) else [value])]


def _channel_reducer(channel: object) -> Reducer | None:
    if isinstance(channel, BinaryOperatorAggregate):
        return channel.operator
    if isinstance(channel, DeltaChannel):  # its reducer folds a batch of writes
        batch: Callable[[Any, list[Any]], Any] = channel.reducer
        return lambda current, value: batch(current, [value])
    if isinstance(channel, Topic):
        return _topic
    return None


def _is_reducer(item: object) -> bool:
    if not callable(item) or inspect.isclass(item):
        return False
    try:
        params = inspect.signature(item).parameters.values()
    except (TypeError, ValueError):
        return False
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params) == 2


def schema_reducers(schema: type) -> dict[str, Reducer]:
    """Each reducer key of ``schema`` with its reducer (``messages`` always has one)."""
    found: dict[str, Reducer] = {"messages": add_messages}
    for key, annotation in native_fields(schema).items():
        for item in field_metadata(annotation):
            reducer = (_channel_reducer(item) if isinstance(item, BaseChannel) else None) or (
                item if _is_reducer(item) else None
            )
            if reducer is not None:
                found[key] = reducer
    return found


def graph_reducers() -> dict[str, Reducer | None] | None:
    """Each state key of the graph the current node runs in, with its reducer or ``None``.

    ``None`` outside a graph. langgraph gives each task a state reader bound to the graph's
    channels; the channels say which keys fold their writes, and how.
    """
    try:
        config = get_config()
    except RuntimeError:
        return None
    read = (config.get("configurable") or {}).get(CONFIG_KEY_READ)
    channels = read.args[1] if isinstance(read, partial) and len(read.args) > 1 else None
    if not isinstance(channels, Mapping):
        return None
    return {str(key): _channel_reducer(channel) for key, channel in channels.items()}


def current_reducers(own: Mapping[str, Reducer]) -> dict[str, Reducer]:
    """``own`` (from schemas) overruled by the running graph's channels, where there is one."""
    graph = graph_reducers()
    if graph is None:
        return dict(own)
    merged: dict[str, Reducer | None] = {**own, **graph}
    return {key: reducer for key, reducer in merged.items() if reducer is not None}


def fold(state: dict[str, Any], key: str, value: Any, reducers: Mapping[str, Reducer]) -> None:
    """Apply one write to ``state`` in place, through ``key``'s reducer if it has one."""
    reducer = reducers.get(key)
    if reducer is None:
        state[key] = value
    elif key in state:
        state[key] = reducer(state[key], value)
    else:  # an empty channel: messages still normalise (ids), other values start as written
        state[key] = reducer([], value) if key == "messages" else value
