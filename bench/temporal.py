"""The per-step cost of running a funcware agent on Temporal, against a plain in-process run.

Run from the repository root (needs the ``temporal`` extra)::

    pip install -e ".[temporal]"
    python bench/temporal.py              # 20 runs of each
    python bench/temporal.py --runs 50

The agent: one tool call and two model calls on a scripted model, a hook that declares its
effects (in the workflow) and one that does not (an activity): 7 graph steps per run, 5 of
them activities. The same agent runs ``ainvoke`` in process, then as ``AgentWorkflow`` on
the Temporal dev server (started here on a free loopback port) with one worker in this
process. Prints the median and p90 time per run and the difference per step.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from temporalio.client import Client
from temporalio.worker import Worker

from funcware import before_model, create_agent
from funcware.temporal import AgentWorkflow, data_converter, placement, plugin, sandbox
from funcware.testing import ScriptedChatModel


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def respond(messages: list[BaseMessage]) -> AIMessage | str:
    if isinstance(messages[-1], ToolMessage):
        return f"the sum is {messages[-1].content}"
    return AIMessage("", tool_calls=[{"name": "add", "args": {"a": 2, "b": 3}, "id": "c1"}])


@before_model(reads=["messages.history"])
def in_workflow(state: Any) -> None:
    return None


@before_model
def as_activity(state: Any) -> None:
    return None


def build() -> Any:
    model = ScriptedChatModel(respond=respond)
    return create_agent(model, [add], middleware=[in_workflow, as_activity])


def summary(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(0.9 * (len(ordered) - 1))]


async def plain(runs: int) -> list[float]:
    agent = build()
    times = []
    for _ in range(runs + 2):  # two to warm up
        start = time.perf_counter()
        await agent.ainvoke({"messages": [HumanMessage("2 + 3?")]})
        times.append(time.perf_counter() - start)
    return times[2:]


async def on_temporal(address: str, runs: int) -> list[float]:
    client = await Client.connect(address, data_converter=data_converter)
    worker = Worker(
        client,
        task_queue="bench",
        workflows=[AgentWorkflow],
        plugins=[plugin({"bench": build()})],
        workflow_runner=sandbox(),
    )
    times = []
    async with worker:
        for index in range(runs + 2):
            start = time.perf_counter()
            await client.execute_workflow(
                AgentWorkflow.run,
                args=["bench", {"messages": [HumanMessage("2 + 3?")]}],
                id=f"bench-{os.getpid()}-{index}",
                task_queue="bench",
            )
            times.append(time.perf_counter() - start)
    return times[2:]


def start_server(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cli = str(Path(sys.executable).parent / "temporal")
    address = f"127.0.0.1:{port}"
    server = subprocess.Popen(
        [cli, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", str(port),
         "--db-filename", str(folder / "bench.db"), "--log-level", "error"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    for _ in range(300):
        health = subprocess.run(
            [cli, "operator", "cluster", "health", "--address", address],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if "SERVING" in health.stdout:
            return server, address
        time.sleep(0.1)
    server.kill()
    raise SystemExit("the Temporal dev server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    placed = placement(build())
    hooks = [s for s in placed.steps if s.node not in ("model", "tools")]
    loops = 2  # model -> tools -> model: each loop runs the before_model hooks and the model
    steps = loops * (len(hooks) + 1) + 1
    activities = loops * (sum(s.where == "activity" for s in hooks) + 1) + 1
    with tempfile.TemporaryDirectory() as folder:
        server, address = start_server(Path(folder))
        try:
            local = asyncio.run(plain(runs))
            durable = asyncio.run(on_temporal(address, runs))
        finally:
            server.terminate()
            server.wait(timeout=20)
    (local_median, local_p90), (durable_median, durable_p90) = summary(local), summary(durable)
    print(f"{runs} runs each; {steps} graph steps per run, {activities} of them activities")
    print(f"in process   median {local_median * 1000:8.1f} ms   p90 {local_p90 * 1000:8.1f} ms")
    print(f"on Temporal  median {durable_median * 1000:8.1f} ms   p90 {durable_p90 * 1000:8.1f} ms")
    extra = (durable_median - local_median) * 1000
    print(f"Temporal adds {extra:.1f} ms per run: {extra / steps:.1f} ms per graph step")


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    os._exit(0)  # temporalio/sdk-python#300: the client may crash in interpreter teardown
