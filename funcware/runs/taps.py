"""Seeing a run's result in its stream: the last root ``"values"`` and its interrupts.

A ``wrap_agent_call`` layer gets an :class:`~funcware.hooks.types.AgentResponse` for each
attempt, but the caller still reads the stream chunk by chunk. :class:`Tap` asks the graph
for ``"values"`` too when the caller did not, hides those chunks from the caller, and keeps
the last root one; :meth:`Tap.values_chunk` formats a replaced result as the caller's own
``"values"`` chunk (what ``invoke`` returns). The always-run cleanup
(``funcware.policies.always``) follows its runs with a tap too, for their last state.

:func:`tapped` and :func:`atapped` are the chunk loop those two run wraps share: a run's
stream through a tap, as the caller asked for it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

from funcware.compose.steps.run_wrap import ARun, Run

__all__ = ["SKIP", "ARun", "Run", "Tap", "atapped", "tapped"]

SKIP = object()
"""What :meth:`Tap.see` returns for a chunk the caller did not ask for."""

_INTERRUPT = "__interrupt__"


class Tap:
    """Follows one attempt's stream (``kwargs`` are the run's ``stream`` arguments).

    ``tracking=False``: the stream passes through as it is and nothing is kept (the
    always-run cleanup reads the state from the checkpointer instead)."""

    def __init__(self, default_mode: Any, kwargs: dict[str, Any], tracking: bool = True) -> None:
        requested = kwargs.get("stream_mode") or default_mode
        self.single = isinstance(requested, str)
        self.modes: list[str] = [requested] if self.single else list(requested)
        self.tracking = tracking
        self.added = tracking and "values" not in self.modes
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
        if not self.tracking:
            return chunk
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

    def collect(self, chunks: Iterator[Any], into: list[Any]) -> None:
        """Read ``chunks`` to their end into ``into``, as the caller asked for them (a run
        read whole: ``invoke``); ``chunks`` is closed however this ends."""
        see = self.see
        try:
            if self.tracking and not (self.added or self.v2 or self.single or self.subgraphs):
                # What invoke reads: (mode, payload) pairs with "values" among them, shown
                # as they are; only the last root values is kept.
                start = len(into)
                into.extend(chunks)
                for index in range(len(into) - 1, start - 1, -1):
                    if into[index][0] == "values":
                        self._keep(into[index][1], None)
                        break
                return
            for chunk in chunks:
                seen = see(chunk)
                if seen is not SKIP:
                    into.append(seen)
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()

    async def acollect(self, chunks: AsyncIterator[Any], into: list[Any]) -> None:
        """Async :meth:`collect`."""
        see = self.see
        try:
            async for chunk in chunks:
                seen = see(chunk)
                if seen is not SKIP:
                    into.append(seen)
        finally:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()

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


Step = Callable[[], AbstractContextManager[object]]
"""What a run wrap enters around each step of the run's stream (the always-run cleanup: the
run's record of the hooks that started), and leaves before the chunk goes on."""


def tapped(tap: Tap, chunks: Iterator[Any], each_step: Step | None = None) -> Iterator[Any]:
    """``chunks`` as the caller asked for them (``tap`` sees each); ``chunks`` is closed
    when this ends, however it ends."""
    try:
        for chunk in chunks if each_step is None else _stepped(chunks, each_step):
            seen = tap.see(chunk)
            if seen is not SKIP:
                yield seen
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()


def _stepped(chunks: Iterator[Any], each_step: Step) -> Iterator[Any]:
    while True:
        with each_step():
            try:
                chunk = next(chunks)
            except StopIteration:
                return
        yield chunk


async def atapped(
    tap: Tap, chunks: AsyncIterator[Any], each_step: Step | None = None
) -> AsyncGenerator[Any, None]:
    """Async :func:`tapped`."""
    try:
        async for chunk in chunks if each_step is None else _astepped(chunks, each_step):
            seen = tap.see(chunk)
            if seen is not SKIP:
                yield seen
    finally:
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()


async def _astepped(chunks: AsyncIterator[Any], each_step: Step) -> AsyncIterator[Any]:
    while True:
        with each_step():
            try:
                chunk = await anext(chunks)
            except StopAsyncIteration:
                return
        yield chunk
