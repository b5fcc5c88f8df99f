"""A client process: ``python client.py ADDRESS`` reads commands, one JSON list a line, and
answers each with one JSON line (``{"ok": value}`` or ``{"error": message}``). Commands:

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


async def serve(address: str) -> None:
    client = await Client.connect(address, data_converter=data_converter)
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        try:
            answer = {"ok": await run(client, *json.loads(line))}
        except Exception as exc:  # the test reads it, with its causes
            causes, cause = [], exc
            while cause is not None:
                causes.append(f"{type(cause).__name__}: {cause}")
                cause = cause.__cause__
            answer = {"error": " <- ".join(causes)}
        print(json.dumps(answer), flush=True)


async def run(client: Client, command: str, *args: str) -> Any:
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
    asyncio.run(serve(sys.argv[1]))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
