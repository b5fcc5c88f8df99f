"""A worker process serving the test agents: ``python worker.py ADDRESS QUEUE``.

It serves ``durable_agent.build()`` as graph "agent", the same with a human approval
step as graph "approval" (and as "approval-in-activity", the step placed as an
activity), and an agent whose model always fails, with and without a
``ModelRetry`` layer ("failing-retried", "failing"), on task queue QUEUE. Activities
heartbeat and are retried within 2 s of a lost worker (5 attempts at most), and a dead
worker's sticky workflow task moves to another worker after 1 s. It prints "ready" once it polls.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta

import durable_agent
from temporalio.client import Client
from temporalio.common import RetryPolicy
from temporalio.worker import Worker

from funcware.temporal import AgentWorkflow, data_converter, plugin, sandbox, temporal_graph

OPTIONS = {
    "start_to_close_timeout": timedelta(seconds=60),
    "heartbeat_timeout": timedelta(seconds=2),
    "retry_policy": RetryPolicy(initial_interval=timedelta(milliseconds=200), maximum_attempts=5),
}


async def main(address: str, queue: str) -> None:
    client = await Client.connect(address, data_converter=data_converter)
    in_activity = durable_agent.build(approval=True)
    temporal_graph(in_activity, activity=["approve"])  # declared, but placed as an activity
    agents = {
        "agent": durable_agent.build(),
        "approval": durable_agent.build(approval=True),
        "approval-in-activity": in_activity,
        "failing": durable_agent.build_failing(retried=False),
        "failing-retried": durable_agent.build_failing(retried=True),
    }
    worker = Worker(
        client,
        task_queue=queue,
        workflows=[AgentWorkflow],
        plugins=[plugin(agents, default_activity_options=OPTIONS)],
        workflow_runner=sandbox("durable_agent"),
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=1),
    )
    async with worker:
        print("ready", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
