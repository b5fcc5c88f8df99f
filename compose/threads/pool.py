"""The bridge's worker threads: bounded, given back when idle, and free of deadlocks.

A sync hook awaited from async code waits for a thread; at most ``max_threads`` such
top-level calls run at once and the rest queue (their event loop is not blocked while they
wait). A call made by code that already holds a thread or blocks one (a sync layer whose
handler drives async layers that bridge again, or ``invoke`` from inside a running loop)
never queues behind the bound: it gets an idle thread or a new one, so nested and
re-entrant bridges cannot deadlock. A thread idle for ``idle_seconds`` ends, closing its
private event loop.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["BridgePool", "BridgeSettings", "close_thread_loop", "thread_loop"]

T = TypeVar("T")

_LOCAL = threading.local()


class _OwnLoop:
    """A thread's private event loop, closed when the thread ends."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def __del__(self) -> None:
        if not self.loop.is_closed():
            self.loop.close()


def thread_loop() -> asyncio.AbstractEventLoop:
    """This thread's private event loop (made on first use)."""
    own: _OwnLoop | None = getattr(_LOCAL, "own", None)
    if own is None or own.loop.is_closed():
        own = _LOCAL.own = _OwnLoop()
    return own.loop


def close_thread_loop() -> None:
    """Close this thread's private event loop, if it has one."""
    own: _OwnLoop | None = getattr(_LOCAL, "own", None)
    if own is not None:
        _LOCAL.own = None
        if not own.loop.is_closed():
            own.loop.close()


@dataclass(frozen=True)
class BridgeSettings:
    """How many worker threads top-level bridged calls may use, and how long idle ones stay."""

    max_threads: int
    idle_seconds: float


DEFAULT_MAX_THREADS = 40
"""anyio's (and so Starlette's) default for sync work awaited from async code.

Sync hooks mostly wait on I/O, so the bound is set by how many may wait at once, not by
the CPU count (``min(32, cpus + 4)`` would give 6 threads on a 2-core machine)."""


def default_settings() -> BridgeSettings:
    """40 threads, as anyio and Starlette give sync work in async apps; idle ones end after 2 s."""
    return BridgeSettings(max_threads=DEFAULT_MAX_THREADS, idle_seconds=2.0)


_Job = tuple["Future[Any]", Callable[[], Any]]


class BridgePool(Executor):
    """Worker threads for the sync/async bridge (see the module docstring)."""

    def __init__(self, settings: BridgeSettings, name: str = "funcware-bridge") -> None:
        self.settings = settings
        self._name = name
        self._cond = threading.Condition()
        self._jobs: deque[_Job] = deque()
        self._threads = 0
        self._idle = 0
        self._count = 0

    @property
    def threads(self) -> int:
        """Worker threads alive now."""
        return self._threads

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """A top-level call: it waits for a thread once ``max_threads`` are busy."""
        return self.run(lambda: fn(*args, **kwargs), nested=False)

    def run(self, job: Callable[[], T], *, nested: bool) -> Future[T]:
        """Run ``job`` on a worker; a ``nested`` job never waits behind the bound."""
        future: Future[T] = Future()
        with self._cond:
            if nested:
                self._jobs.appendleft((future, job))
            else:
                self._jobs.append((future, job))
            waiting = len(self._jobs)
            if waiting > self._idle and (nested or self._threads < self.settings.max_threads):
                self._start()
            self._cond.notify()
        return future

    def _start(self) -> None:
        self._threads += 1
        self._count += 1
        thread = threading.Thread(
            target=self._work, name=f"{self._name}-{self._count}", daemon=True
        )
        thread.start()

    def _next_job(self) -> _Job | None:
        with self._cond:
            self._idle += 1
            deadline = time.monotonic() + self.settings.idle_seconds
            while not self._jobs:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._idle -= 1
                    self._threads -= 1
                    return None
                self._cond.wait(remaining)
            self._idle -= 1
            return self._jobs.popleft()

    def _work(self) -> None:
        try:
            while (item := self._next_job()) is not None:
                future, job = item
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    result = job()
                except BaseException as exc:
                    future.set_exception(exc)
                else:
                    future.set_result(result)
                del item, future, job
        finally:
            close_thread_loop()
