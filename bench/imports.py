"""What ``import funcware`` costs against ``import langgraph.prebuilt``, paired.

Each run starts a fresh interpreter for each of the three commands in turn (``pass``,
``import langgraph.prebuilt``, ``import funcware``), with bytecode caches written first, and
reads the child's CPU time (user + sys) from the OS. The ratio is taken run by run, so
load on a shared machine hits both sides alike; the median is the figure to quote
(goal: at most 1.1). The import-only ratio subtracts the bare interpreter's start-up.

    python bench/imports.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys

COMMANDS = {
    "python": "pass",
    "langgraph.prebuilt": "import langgraph.prebuilt",
    "funcware": "import funcware",
}


def cpu_seconds(code: str, env: dict[str, str]) -> float:
    """User + sys seconds of a fresh interpreter running ``code``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for code in COMMANDS.values():  # warm-up: bytecode caches written, files in the page cache
        cpu_seconds(code, env)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(runs):
        for name, code in COMMANDS.items():
            times[name].append(cpu_seconds(code, env))
    ours, theirs = times["funcware"], times["langgraph.prebuilt"]
    whole = [f / p for f, p in zip(times["funcware"], times["langgraph.prebuilt"], strict=True)]
    only = [(f - b) / (p - b) for f, p, b in zip(ours, theirs, times["python"], strict=True)]
    for name, samples in times.items():
        print(f"{name:20} median {statistics.median(samples) * 1000:7.1f} ms CPU ({runs} runs)")
    label = "import funcware / import langgraph.prebuilt"
    print(f"{label}, whole process: {statistics.median(whole):.3f}x")
    print(f"{label}, import only:   {statistics.median(only):.3f}x")


if __name__ == "__main__":
    main()
