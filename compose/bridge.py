"""Crossing between sync and async code without blocking an event loop.

Context variables (langgraph's config, callbacks, ``interrupt`` support) are copied
across every crossing, in both directions. Cancelling the task that awaits a worker
thread cancels what that thread has running on the loop, and stops it starting more.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config

__all__ = ["call_soon_in_loop", "run_coroutine_sync", "run_in_thread", "runnable_config"]

T = TypeVar("T")

# Bridged calls may nest (a sync layer whose handler drives async layers that hold a
# thread for a sync layer again), and every blocked bridge holds a thread until the
# code it waits for finishes. A bounded pool can therefore deadlock under load; this one
# starts a thread whenever none is idle (ThreadPoolExecutor reuses idle ones first).
_POOL = ThreadPoolExecutor(max_workers=1_000_000, thread_name_prefix="funcware-bridge")
_LOCAL = threading.local()


class _CancelScope:
    """A worker thread's calls back into the loop, cancelled with the task awaiting it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._pending: set[concurrent.futures.Future[Any]] = set()

    def cancel(self) -> None:
        """Cancel the calls in flight and refuse later ones (called on the loop)."""
        with self._lock:
            self._cancelled = True
            pending = list(self._pending)
        for future in pending:
            future.cancel()

    async def _guarded(self, coro: Coroutine[Any, Any, T]) -> T:
        # Checked on the loop, where cancel() runs: a call that lost the race never starts.
        if self._cancelled:
            coro.close()
            raise asyncio.CancelledError
        return await coro

    def call(self, loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on ``loop`` from the worker thread; wait for it unless cancelled."""
        future = asyncio.run_coroutine_threadsafe(self._guarded(coro), loop)
        with self._lock:
            cancelled = self._cancelled
            if not cancelled:
                self._pending.add(future)
        if cancelled:
            future.cancel()
        try:
            return future.result()
        finally:
            with self._lock:
                self._pending.discard(future)


_SCOPE: contextvars.ContextVar[_CancelScope | None] = contextvars.ContextVar(
    "funcware_cancel_scope", default=None
)


class _OwnLoop:
    """A thread's private event loop, closed when the thread ends."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def __del__(self) -> None:
        if not self.loop.is_closed():
            self.loop.close()


def _thread_loop() -> asyncio.AbstractEventLoop:
    own: _OwnLoop | None = getattr(_LOCAL, "own", None)
    if own is None or own.loop.is_closed():
        own = _LOCAL.own = _OwnLoop()
    return own.loop


def run_coroutine_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from sync code and return its result.

    Uses this thread's private loop; if a loop is already running in this thread, the
    coroutine runs on a worker thread's loop instead (this thread waits, nothing nests).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _thread_loop().run_until_complete(coro)
    context = contextvars.copy_context()
    return _POOL.submit(context.run, lambda: _thread_loop().run_until_complete(coro)).result()


async def run_in_thread(func: Callable[..., T], *args: Any) -> T:
    """Await ``func(*args)`` run on a worker thread, with this task's context.

    If this await is cancelled, the thread's calls back into the loop
    (:func:`call_soon_in_loop`) are cancelled too: the thread cannot be stopped, but it
    starts nothing more (no model or tool call after the run was cancelled).
    """
    scope = _CancelScope()
    context = contextvars.copy_context()
    context.run(_SCOPE.set, scope)
    loop = asyncio.get_running_loop()
    try:
        return await loop.run_in_executor(_POOL, lambda: context.run(func, *args))
    except asyncio.CancelledError:
        scope.cancel()
        raise


def call_soon_in_loop(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T]) -> T:
    """From a worker thread, run ``coro`` on ``loop`` and wait for its result.

    Raises ``asyncio.CancelledError`` (which ``except Exception`` does not catch) if the
    task awaiting this thread was cancelled, before or while ``coro`` runs.
    """
    scope = _SCOPE.get()
    try:
        if scope is None:
            return asyncio.run_coroutine_threadsafe(coro, loop).result()
        return scope.call(loop, coro)
    except concurrent.futures.CancelledError:
        raise asyncio.CancelledError from None


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
