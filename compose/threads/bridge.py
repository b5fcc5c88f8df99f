"""Crossing between sync and async code without blocking an event loop.

Context variables (langgraph's config, callbacks, ``interrupt`` support) are copied
across every crossing, in both directions. Cancelling the task that awaits a worker
thread cancels what that thread has running on the loop, and stops it starting more.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any, TypeVar

from funcware.compose.threads.pool import BridgePool, BridgeSettings, default_settings, thread_loop

__all__ = [
    "BridgeSettings",
    "bridge_threads",
    "call_soon_in_loop",
    "configure_bridge",
    "run_coroutine_sync",
    "run_in_thread",
]

T = TypeVar("T")

_POOL = BridgePool(default_settings())

_HOLDING: contextvars.ContextVar[bool] = contextvars.ContextVar("funcware_holding", default=False)
"""True in code that runs on a bridge thread, or on the loop on behalf of one."""


def configure_bridge(
    *, max_threads: int | None = None, idle_seconds: float | None = None
) -> BridgeSettings:
    """Set the bridge's thread limits; return the settings in force before.

    ``max_threads`` bounds the threads that sync hooks awaited from async code use at
    once (default 40, as anyio and Starlette give sync work in async apps); more
    calls queue without blocking the event loop. Calls nested in a bridged call never
    queue, so they cannot deadlock. A thread idle for ``idle_seconds`` (default 2) ends.
    """
    old = _POOL.settings
    if max_threads is not None and (not isinstance(max_threads, int) or max_threads < 1):
        raise ValueError(f"configure_bridge(max_threads={max_threads!r}): use an int >= 1.")
    if idle_seconds is not None and (
        not isinstance(idle_seconds, (int, float)) or idle_seconds < 0
    ):
        raise ValueError(f"configure_bridge(idle_seconds={idle_seconds!r}): use a number >= 0.")
    _POOL.settings = BridgeSettings(
        max_threads=old.max_threads if max_threads is None else max_threads,
        idle_seconds=old.idle_seconds if idle_seconds is None else float(idle_seconds),
    )
    return old


def bridge_threads() -> int:
    """How many bridge worker threads are alive now."""
    return _POOL.threads


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


async def _with_its_tasks(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro``, then every task it started on this private loop.

    Nothing else runs on a bridge's private loop, so a task left there would never run
    ("Task was destroyed but it is pending"). Once the coroutine is done, its tasks run to
    completion; the first one that failed raises. If the coroutine failed, they are cancelled.
    """
    me = asyncio.current_task()
    try:
        result = await coro
    except BaseException:
        for task in asyncio.all_tasks():
            if task is not me:
                task.cancel()
        raise
    while pending := [task for task in asyncio.all_tasks() if task is not me]:
        await asyncio.wait(pending)
        for task in pending:
            if not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
    return result


def run_coroutine_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from sync code and return its result.

    Uses this thread's private loop; if a loop is already running in this thread, the
    coroutine runs on a worker thread's loop instead (this thread waits, nothing nests).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return thread_loop().run_until_complete(_with_its_tasks(coro))
    context = contextvars.copy_context()
    context.run(_HOLDING.set, True)
    return _on_own_thread(partial(context.run, _run_on_fresh_loop, coro))


def _run_on_fresh_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on a new event loop, closed (with its file descriptors) when it is done."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(_with_its_tasks(coro))
    finally:
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


def _on_own_thread(job: Callable[[], T]) -> T:
    """Run ``job`` on a thread of its own and wait for it; the thread has ended on return.

    For a caller that blocks a running loop (``invoke`` inside a notebook cell): it never
    queues behind the pool's bound, so it cannot deadlock, and it leaves no thread, loop
    or file descriptor behind.
    """
    future: concurrent.futures.Future[T] = concurrent.futures.Future()

    def work() -> None:
        try:
            future.set_result(job())
        except BaseException as exc:
            future.set_exception(exc)

    thread = threading.Thread(target=work, name="funcware-bridge-call", daemon=True)
    thread.start()
    thread.join()
    return future.result()


async def run_in_thread(func: Callable[..., T], *args: Any) -> T:
    """Await ``func(*args)`` run on a worker thread, with this task's context.

    If this await is cancelled, the thread's calls back into the loop
    (:func:`call_soon_in_loop`) are cancelled too: the thread cannot be stopped, but it
    starts nothing more (no model or tool call after the run was cancelled).
    """
    scope = _CancelScope()
    nested = _HOLDING.get()
    context = contextvars.copy_context()
    context.run(_SCOPE.set, scope)
    context.run(_HOLDING.set, True)
    future = _POOL.run(partial(context.run, func, *args), nested=nested)
    try:
        return await asyncio.wrap_future(future)
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
