"""Sync hooks under ``ainvoke``: ``python bench/bridge.py [--runs N] [--sleep MS]``.

``--runs`` agents run at once with ``ainvoke`` (default 200); each has one sync
``before_model`` hook that sleeps ``--sleep`` milliseconds (default 50), as a hook waiting
on a database or an HTTP call does. Sync hooks awaited from async code run on the bridge's
bounded thread pool, so the wall time is about ``runs / threads * sleep``. Each row sets
the bound with ``configure_bridge(max_threads=...)`` and prints the wall time and the runs
per second: the standard library's executor bound (``min(32, cpus + 4)``), funcware's
default (40, as anyio and Starlette) and, for scale, one thread per run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from typing import Any

from langchain_core.messages import HumanMessage

from funcware import before_model, configure_bridge, create_agent
from funcware.compose.threads.pool import DEFAULT_MAX_THREADS
from funcware.testing import ScriptedChatModel


def wall_time(runs: int, sleep_s: float, max_threads: int) -> float:
    """Seconds for ``runs`` concurrent ``ainvoke`` calls with ``max_threads`` bridge threads."""

    @before_model
    def waits_on_io(state: Any) -> None:
        time.sleep(sleep_s)

    agent = create_agent(ScriptedChatModel(responses=["ok"] * runs), middleware=[waits_on_io])
    old = configure_bridge(max_threads=max_threads)
    try:

        async def main() -> None:
            await asyncio.gather(
                *(agent.ainvoke({"messages": [HumanMessage("hi")]}) for _ in range(runs))
            )

        start = time.perf_counter()
        asyncio.run(main())
        return time.perf_counter() - start
    finally:
        configure_bridge(max_threads=old.max_threads)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--sleep", type=float, default=50.0, help="milliseconds per hook")
    args = parser.parse_args()
    sleep_s = args.sleep / 1000
    rows = [
        ("stdlib bound min(32, cpus + 4)", min(32, (os.cpu_count() or 1) + 4)),
        ("funcware default", DEFAULT_MAX_THREADS),
        ("one thread per run", args.runs),
    ]
    print(f"{args.runs} concurrent ainvoke runs, one sync hook sleeping {args.sleep:g} ms each")
    print(f"{'bridge bound':34} {'threads':>7} {'wall s':>8} {'runs/s':>8} {'ideal s':>8}")
    for label, threads in rows:
        seconds = wall_time(args.runs, sleep_s, threads)
        ideal = -(-args.runs // threads) * sleep_s
        print(f"{label:34} {threads:>7} {seconds:>8.2f} {args.runs / seconds:>8.0f} {ideal:>8.2f}")


if __name__ == "__main__":
    main()
