"""Crossing between sync and async code without blocking an event loop.

Context variables (langgraph's config, callbacks, ``interrupt`` support) are copied
across every crossing, in both directions.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["call_soon_in_loop", "run_coroutine_sync", "run_in_thread"]

T = TypeVar("T")

# Bridged calls may nest (a sync layer whose handler drives async layers that hold a
# thread for a sync layer again), so the pool is generous: each nesting level holds one.
_POOL = ThreadPoolExecutor(max_workers=64, thread_name_prefix="funcware-bridge")
_LOCAL = threading.local()


def _thread_loop() -> asyncio.AbstractEventLoop:
    loop: asyncio.AbstractEventLoop | None = getattr(_LOCAL, "loop", None)
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        _LOCAL.loop = loop
    return loop


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
    """Await ``func(*args)`` run on a worker thread, with this task's context."""
    context = contextvars.copy_context()
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_POOL, lambda: context.run(func, *args))


def call_soon_in_loop(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T]) -> T:
    """From a worker thread, run ``coro`` on ``loop`` and wait for its result."""
    return asyncio.run_coroutine_threadsafe(coro, loop).result()
