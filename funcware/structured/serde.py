"""What an agent stores in checkpoints, registered with langgraph's deserialization allowlist.

With ``LANGGRAPH_STRICT_MSGPACK=true`` langgraph loads from a checkpoint only the types it
found in the graph's schemas. ``structured_response`` holds whatever ``response_format``
parses into, which no schema names, so the agent adds those classes (and the types their
fields use). In langgraph's default, permissive mode every type loads and an unlisted one
is logged once ("Deserializing unregistered type ..."); an allowlist cannot be merged
into that mode, so strict mode is the fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph._internal._serde import collect_allowlist_from_schemas
from langgraph.graph.state import CompiledStateGraph

__all__ = ["allow_in_checkpoints"]


def allow_in_checkpoints(
    compiled: CompiledStateGraph[Any, Any, Any, Any], types: Sequence[type[Any]]
) -> None:
    """Let ``compiled`` load ``types`` from its checkpoints in strict mode (no-op otherwise)."""
    allowlist: set[tuple[str, ...]] | None = getattr(compiled, "_serde_allowlist", None)
    if allowlist is None or not types:
        return
    allowlist |= collect_allowlist_from_schemas(schemas=list(types))
