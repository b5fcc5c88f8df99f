"""A client process: ``python client.py ADDRESS COMMAND ARGS...``; prints one JSON value.

- ``start QUEUE GRAPH ID TEXT``: start ``AgentWorkflow`` on the graph with one question;
- ``result ID``: wait for the run's end; its messages as ``[type, content]`` pairs;
- ``pending ID``: wait until an interrupt is open; what it asks;
- ``resume ID DECISION``: answer it with the update ``resume``;
- ``activities ID``: the activities the run scheduled, with each one's attempts.

It leaves with ``os._exit`` (temporalio/sdk-python#300: a client process may crash while
the interpreter tears down).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import timedelta
from typing import Any

from langchain_core.messages import HumanMessage
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from funcware.temporal import AgentWorkflow, data_converter


async def main(address: str, command: str, *args: str) -> Any:
    client = await Client.connect(address, data_converter=data_converter)
    if command == "start":
        queue, graph, run_id, text = args
        await client.start_workflow(
            AgentWorkflow.run,
            args=[graph, {"messages": [HumanMessage(text)]}],
            id=run_id,
            task_queue=queue,
            execution_timeout=timedelta(minutes=3),
        )
        return run_id
    handle = client.get_workflow_handle(args[0])
    if command == "result":
        state = await handle.result()
        return [[type(m).__name__, m.content] for m in state["messages"]]
    if command == "pending":
        while (pending := await handle.query(AgentWorkflow.pending)) is None:
            await asyncio.sleep(0.1)
        return [p["value"] for p in pending]
    if command == "resume":
        return await handle.execute_update(AgentWorkflow.resume, args[1])
    if command == "activities":
        attempts: dict[int, list[Any]] = {}
        async for event in handle.fetch_history_events():
            if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
                name = event.activity_task_scheduled_event_attributes.activity_type.name
                attempts[event.event_id] = [name, 0]
            elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
                started = event.activity_task_started_event_attributes
                attempts[started.scheduled_event_id][1] = started.attempt
        return list(attempts.values())
    raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:]))), flush=True)
    sys.stderr.flush()
    os._exit(0)
