"""A worker serving deploy/temporal's agent: ``python deploy/temporal/worker.py``.

Settings from the environment: ``TEMPORAL_ADDRESS`` (default ``127.0.0.1:7233``),
``TEMPORAL_NAMESPACE`` (``default``), ``FUNCWARE_TASK_QUEUE`` (``funcware-agents``).
Every worker serves the agent under the graph name ``assistant``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from temporalio.client import Client
from temporalio.worker import Worker

sys.path.insert(0, str(Path(__file__).resolve().parent))
import agent

from funcware.temporal import AgentWorkflow, data_converter, plugin, sandbox


async def main() -> None:
    client = await Client.connect(
        os.environ.get("TEMPORAL_ADDRESS", "127.0.0.1:7233"),
        namespace=os.environ.get("TEMPORAL_NAMESPACE", "default"),
        data_converter=data_converter,
    )
    worker = Worker(
        client,
        task_queue=os.environ.get("FUNCWARE_TASK_QUEUE", "funcware-agents"),
        workflows=[AgentWorkflow],
        plugins=[plugin({"assistant": agent.build()})],
        workflow_runner=sandbox("agent"),
    )
    async with worker:
        print(f"worker {os.getpid()} ready", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main())
