"""Seeing a run's result in its stream: the last root ``"values"`` and its interrupts.

A ``wrap_agent_call`` layer gets an :class:`~funcware.hooks.types.AgentResponse` for each
attempt, but the caller still reads the stream chunk by chunk. :class:`Tap` asks the graph
for ``"values"`` too when the caller did not, hides those chunks from the caller, and keeps
the last root one; :meth:`Tap.values_chunk` formats a replaced result as the caller's own
``"values"`` chunk (what ``invoke`` returns).
"""

from __future__ import annotations

from typing import Any

__all__ = ["SKIP", "Tap"]

SKIP = object()
"""What :meth:`Tap.see` returns for a chunk the caller did not ask for."""

_INTERRUPT = "__interrupt__"


class Tap:
    """Follows one attempt's stream (``kwargs`` are the run's ``stream`` arguments)."""

    def __init__(self, default_mode: Any, kwargs: dict[str, Any]) -> None:
        requested = kwargs.get("stream_mode") or default_mode
        self.single = isinstance(requested, str)
        self.modes: list[str] = [requested] if self.single else list(requested)
        self.added = "values" not in self.modes
        self.v2 = kwargs.get("version", "v1") == "v2"
        self.subgraphs = bool(kwargs.get("subgraphs"))
        self.kwargs = {**kwargs, "stream_mode": [*self.modes, "values"]} if self.added else kwargs
        self.last: Any = None
        self.interrupts: tuple[Any, ...] = ()

    def _keep(self, payload: Any, interrupts: Any) -> None:
        self.last = payload
        if interrupts is None and isinstance(payload, dict):
            interrupts = payload.get(_INTERRUPT)
        self.interrupts = tuple(interrupts or ())

    def see(self, chunk: Any) -> Any:
        """``chunk`` as the caller asked for it, or :data:`SKIP`; keeps the root values."""
        if self.v2:
            if chunk.get("type") == "values":
                if not chunk.get("ns"):
                    self._keep(chunk.get("data"), chunk.get("interrupts", ()))
                if self.added:
                    return SKIP
            return chunk
        if self.single and not self.added:  # only "values" was asked for
            ns, payload = chunk if self.subgraphs else ((), chunk)
            if not ns:
                self._keep(payload, None)
            return chunk
        ns, mode, payload = chunk if self.subgraphs else ((), *chunk)
        if mode == "values":
            if not ns:
                self._keep(payload, None)
            if self.added:
                return SKIP
        if self.added and self.single:
            return (ns, payload) if self.subgraphs else payload
        return chunk

    def values_chunk(self, result: Any, interrupts: tuple[Any, ...]) -> Any:
        """``result`` as a root ``"values"`` chunk in the caller's format; ``SKIP`` if the
        caller did not ask for ``"values"``."""
        if self.added:
            return SKIP
        if self.v2:
            return {"type": "values", "ns": (), "data": result, "interrupts": interrupts}
        if self.single:
            return ((), result) if self.subgraphs else result
        return ((), "values", result) if self.subgraphs else ("values", result)
