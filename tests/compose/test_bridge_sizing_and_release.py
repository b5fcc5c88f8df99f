"""The sync/async bridge: sized for I/O-bound sync hooks, and leaves nothing behind."""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import time
import warnings
from typing import Any

import pytest
from support import hi

from funcware import (
    before_model,
    create_agent,
)
from funcware.compose.threads.bridge import configure_bridge, run_coroutine_sync
from funcware.compose.threads.pool import default_settings
from funcware.testing import ScriptedChatModel


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_the_default_bound_is_forty_threads_whatever_the_cpu_count() -> None:
    assert default_settings().max_threads == 40


def test_forty_sync_hooks_waiting_on_io_run_at_once_under_ainvoke() -> None:
    @before_model
    def waits_on_io(state: Any) -> None:
        time.sleep(0.2)

    runs = 40
    agent = create_agent(ScriptedChatModel(responses=["ok"] * runs), middleware=[waits_on_io])
    old = configure_bridge(max_threads=40)

    async def main() -> None:
        await asyncio.gather(*(agent.ainvoke(hi()) for _ in range(runs)))

    try:
        start = time.perf_counter()
        asyncio.run(main())
        elapsed = time.perf_counter() - start
    finally:
        configure_bridge(max_threads=old.max_threads)
    # 40 waits of 0.2 s on 40 threads overlap; on 6 threads they would take 7 rounds (1.4 s).
    assert elapsed < 1.0, elapsed


def test_the_bound_stays_configurable() -> None:
    old = configure_bridge(max_threads=3)
    try:
        assert configure_bridge().max_threads == 3
    finally:
        configure_bridge(max_threads=old.max_threads)


def test_fifty_invokes_inside_running_loops_leave_no_thread_or_fd_at_once() -> None:
    @before_model
    async def async_only(state: Any) -> None:  # under invoke() it runs on a bridged loop
        await asyncio.sleep(0)

    agent = create_agent(ScriptedChatModel(responses=["ok"] * 51), middleware=[async_only])
    agent.invoke(hi())  # warm up imports and caches outside the count
    threads_before, fds_before = threading.active_count(), open_fds()

    async def notebook_cell() -> str:
        return str(agent.invoke(hi())["messages"][-1].content)

    answers = [asyncio.run(notebook_cell()) for _ in range(50)]
    assert answers == ["ok"] * 50
    # No waiting for idle threads to time out: each blocking call's thread and loop are gone.
    assert threading.active_count() == threads_before
    assert open_fds() == fds_before


def test_a_failure_in_a_hook_bridged_from_a_running_loop_reaches_the_caller() -> None:
    @before_model
    async def fails(state: Any) -> None:
        raise LookupError("hook failed")

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[fails])

    async def cell() -> None:
        agent.invoke(hi())

    with pytest.raises(LookupError, match="hook failed"):
        asyncio.run(cell())


def test_private_event_loops_of_finished_threads_are_closed() -> None:
    async def answer() -> int:
        return 42

    def work() -> None:
        assert run_coroutine_sync(answer()) == 42

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        threads = [threading.Thread(target=work) for _ in range(5)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]
