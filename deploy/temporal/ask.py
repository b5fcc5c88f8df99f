"""Ask deploy/temporal's agent: ``python deploy/temporal/ask.py "QUESTION" [--decision D]``.

Starts ``AgentWorkflow`` on the graph ``assistant``; when the approval asks, prints what
it asks and answers with the decision (``approve`` or ``reject``, default ``approve``)
through the update ``resume``; prints the conversation. Reads the same environment as
``worker.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import uuid

from langchain_core.messages import HumanMessage
from temporalio.client import Client

from funcware.temporal import AgentWorkflow, data_converter


async def main(question: str, decision: str) -> None:
    client = await Client.connect(
        os.environ.get("TEMPORAL_ADDRESS", "127.0.0.1:7233"),
        namespace=os.environ.get("TEMPORAL_NAMESPACE", "default"),
        data_converter=data_converter,
    )
    handle = await client.start_workflow(
        AgentWorkflow.run,
        args=["assistant", {"messages": [HumanMessage(question)]}],
        id=f"ask-{uuid.uuid4().hex[:12]}",
        task_queue=os.environ.get("FUNCWARE_TASK_QUEUE", "funcware-agents"),
    )
    while (pending := await handle.query(AgentWorkflow.pending)) is None:
        if (await handle.describe()).status.name != "RUNNING":
            break
        await asyncio.sleep(0.1)
    if pending is not None:
        print(f"asks: {[p['value'] for p in pending]}")
        await handle.execute_update(AgentWorkflow.resume, {"decisions": [{"type": decision}]})
    state = await handle.result()
    for message in state["messages"]:
        print(f"{type(message).__name__}: {message.content}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("question")
    parser.add_argument("--decision", default="approve", choices=["approve", "reject"])
    arguments = parser.parse_args()
    asyncio.run(main(arguments.question, arguments.decision))
    sys.stdout.flush()
    os._exit(0)  # temporalio/sdk-python#300: the client may crash in interpreter teardown
