"""The sync/async bridge runs what a hook starts and gives back what it took.

Tasks an async hook starts on the bridged loop run to completion (a failing one raises);
threads and file descriptors come back after a thousand bridged runs; nested bridges and
sync hooks that invoke async-only agents do not deadlock; the bridge's limits are checked.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from support import hi

from funcware import (
    before_model,
    create_agent,
    wrap_model_call,
)
from funcware.compose.threads.bridge import bridge_threads, configure_bridge
from funcware.testing import ScriptedChatModel


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def wait_for_idle_threads(limit: float = 10.0) -> None:
    deadline = time.monotonic() + limit
    while bridge_threads() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert bridge_threads() == 0


@pytest.fixture
def quick_idle() -> Iterator[None]:
    """Bridge threads idle for 50 ms end (so a test can see them go)."""
    old = configure_bridge(idle_seconds=0.05)
    wait_for_idle_threads()
    try:
        yield
    finally:
        configure_bridge(max_threads=old.max_threads, idle_seconds=old.idle_seconds)


# -- tasks started on the bridged loop run ----------------------------------------


def test_a_task_started_by_an_async_hook_under_invoke_runs_to_completion() -> None:
    seen: list[str] = []

    @before_model
    async def starts_a_task(state: Any) -> None:
        async def later() -> None:
            await asyncio.sleep(0.01)
            seen.append("ran")

        asyncio.get_running_loop().create_task(later())

    create_agent(ScriptedChatModel(responses=["ok"]), middleware=[starts_a_task]).invoke(hi())
    assert seen == ["ran"]


def test_a_failing_task_started_by_an_async_hook_raises_instead_of_being_lost() -> None:
    @before_model
    async def starts_a_failing_task(state: Any) -> None:
        async def later() -> None:
            raise LookupError("the background work failed")

        asyncio.get_running_loop().create_task(later())

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[starts_a_failing_task])
    with pytest.raises(LookupError, match="the background work failed") as caught:
        agent.invoke(hi())
    assert "starts_a_failing_task" in "\n".join(getattr(caught.value, "__notes__", []))


# -- the bridge's threads and file descriptors ------------------------------------


def test_a_thousand_concurrent_bridged_runs_give_back_every_thread_and_fd(
    quick_idle: None,
) -> None:
    @before_model
    def sleepy(state: Any) -> None:  # sync: each ainvoke runs it on a bridge thread
        time.sleep(0.002)

    runs = 1_000
    agent = create_agent(ScriptedChatModel(responses=["ok"] * runs), middleware=[sleepy])
    threads_before, fds_before = threading.active_count(), open_fds()
    peak = 0

    async def main() -> None:
        nonlocal peak
        done = asyncio.Event()

        async def watch() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, threading.active_count())
                await asyncio.sleep(0.005)

        watcher = asyncio.ensure_future(watch())
        results = await asyncio.gather(*(agent.ainvoke(hi()) for _ in range(runs)))
        done.set()
        await watcher
        assert all(r["messages"][-1].content == "ok" for r in results)

    asyncio.run(main())
    wait_for_idle_threads()
    assert peak - threads_before <= configure_bridge().max_threads + 2
    assert threading.active_count() <= threads_before
    assert open_fds() <= fds_before


def test_fifty_invokes_from_inside_running_loops_give_back_every_thread_and_fd(
    quick_idle: None,
) -> None:
    @before_model
    async def async_only(state: Any) -> None:  # under invoke() it runs on a bridged loop
        await asyncio.sleep(0)

    agent = create_agent(ScriptedChatModel(responses=["ok"] * 50), middleware=[async_only])
    threads_before, fds_before = threading.active_count(), open_fds()

    async def notebook_cell() -> str:
        return str(agent.invoke(hi())["messages"][-1].content)  # invoke inside a running loop

    answers = [asyncio.run(notebook_cell()) for _ in range(50)]
    assert answers == ["ok"] * 50
    wait_for_idle_threads()
    assert threading.active_count() <= threads_before
    assert open_fds() <= fds_before


def test_nested_bridges_do_not_deadlock_with_a_single_thread_allowed(quick_idle: None) -> None:
    configure_bridge(max_threads=1)

    @wrap_model_call
    def sync_outer(request: Any, handler: Any) -> Any:
        return handler(request)

    @wrap_model_call
    async def async_middle(request: Any, handler: Any) -> Any:
        return await handler(request)

    @wrap_model_call
    def sync_inner(request: Any, handler: Any) -> Any:
        return handler(request)

    @before_model
    def sync_node(state: Any) -> None:
        return None

    layers = [sync_node, sync_outer, async_middle, sync_inner]
    agent = create_agent(ScriptedChatModel(responses=["ok"] * 40), middleware=layers)

    async def main() -> list[Any]:
        return await asyncio.wait_for(
            asyncio.gather(*(agent.ainvoke(hi()) for _ in range(40))), timeout=60
        )

    results = asyncio.run(main())
    assert [r["messages"][-1].content for r in results] == ["ok"] * 40


def test_a_sync_hook_may_invoke_another_agent_whose_hook_is_async_only(
    quick_idle: None,
) -> None:
    configure_bridge(max_threads=1)

    @before_model
    async def inner_async(state: Any) -> None:
        await asyncio.sleep(0)

    inner = create_agent(ScriptedChatModel(responses=["inner"] * 10), middleware=[inner_async])

    @before_model
    def calls_inner(state: Any) -> dict[str, Any]:
        answer = inner.invoke(hi())["messages"][-1].content
        return {"messages": [HumanMessage(f"inner said {answer}")]}

    outer = create_agent(ScriptedChatModel(responses=["outer"] * 10), middleware=[calls_inner])

    async def main() -> list[Any]:
        return await asyncio.wait_for(
            asyncio.gather(*(outer.ainvoke(hi()) for _ in range(5))), timeout=60
        )

    for result in asyncio.run(main()):
        assert [m.content for m in result["messages"]][-2:] == ["inner said inner", "outer"]


def test_the_bridge_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="max_threads=0"):
        configure_bridge(max_threads=0)
    with pytest.raises(ValueError, match="idle_seconds=-1"):
        configure_bridge(idle_seconds=-1)
