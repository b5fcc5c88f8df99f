"""Graphs the scale-out tests serve on Aegra beside the deploy example (``assistant``).

Each has one side-effecting tool, ``transfer``, whose every step is written to a ledger in
the server's own database (``DATABASE_URL``, as the instances have it; the tables are
``scale_out_support.LEDGER_TABLES``):

- ``ledger_steps``: one row per step — ``started``, ``finished`` — with the process id of
  the instance that ran it;
- ``ledger_effects``: one row per time the side effect happened (the money moved).

The user's message is a JSON object of ``transfer``'s arguments; the model (a rule, like
the deploy example's) calls ``transfer`` once with them, then reports the answer. A
``hold`` argument names a file in ``$FUNCWARE_SCALE_OUT_SIGNALS``: while it exists the
tool waits there, ``before`` or ``after`` its effect (``hold_at``), so a test can kill the
instance at that point. The tool is async, so cancelling a run stops it where it waits.

- ``ledger``: the tool alone;
- ``ledger_once``: the tool behind the cookbook's ``OncePerToolCall`` (ledger in the same
  database);
- ``ledger_approval``: the tool behind the cookbook's ``ApproveToolCalls``;
- ``ledger_once_fresh_ids``: ``ledger_once`` with a model that, like a real one, gives every
  tool call a new random id, so asking it again for the same step makes a different call.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import psycopg
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import InjectedToolCallId, tool

from funcware import create_agent
from funcware.cookbook.human_approval import ApproveToolCalls
from funcware.cookbook.once_per_call import CallLedger, OncePerToolCall
from funcware.testing import ScriptedChatModel


def _url() -> str:
    return os.environ["DATABASE_URL"]


async def _record(sql: str, *params: object) -> None:
    async with await psycopg.AsyncConnection.connect(_url(), autocommit=True) as connection:
        await connection.execute(sql, params)


async def _wait_while(hold: str) -> None:
    signal = Path(os.environ["FUNCWARE_SCALE_OUT_SIGNALS"]) / hold
    while signal.exists():
        await asyncio.sleep(0.05)


@tool
async def transfer(
    to: str,
    amount: int,
    config: RunnableConfig,
    tool_call_id: Annotated[str, InjectedToolCallId],
    seconds: float = 0.0,
    hold: str = "",
    hold_at: str = "before",
) -> str:
    """Move ``amount`` to ``to`` (a side effect), after ``seconds`` of work."""
    thread_id = str(config.get("configurable", {}).get("thread_id"))
    step = "INSERT INTO ledger_steps (thread_id, tool_call_id, step, pid) VALUES (%s, %s, %s, %s)"
    await _record(step, thread_id, tool_call_id, "started", os.getpid())
    await asyncio.sleep(seconds)
    if hold and hold_at == "before":
        await _wait_while(hold)
    await _record(
        "INSERT INTO ledger_effects (thread_id, tool_call_id, pid) VALUES (%s, %s, %s)",
        thread_id,
        tool_call_id,
        os.getpid(),
    )
    if hold and hold_at == "after":
        await _wait_while(hold)
    await _record(step, thread_id, tool_call_id, "finished", os.getpid())
    return f"Sent {amount} to {to}."


def reply(messages: list[BaseMessage]) -> AIMessage:
    """Call ``transfer`` with the JSON the user sent; after its answer, report it."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return AIMessage(f"Done. {last.text}")
    if isinstance(last, HumanMessage) and last.text.startswith("{"):
        args = json.loads(last.text)
        call = {"name": "transfer", "args": args, "id": f"call-{len(messages)}"}
        return AIMessage("", tool_calls=[call])
    return AIMessage(f"You said: {last.text}")


def reply_with_fresh_ids(messages: list[BaseMessage]) -> AIMessage:
    """``reply``, with a new random id for every tool call (as a real model's)."""
    answer = reply(messages)
    for call in answer.tool_calls:
        call["id"] = f"call_{uuid.uuid4().hex}"
    return answer


def _agent(
    name: str, *middleware: object, respond: Callable[[list[BaseMessage]], AIMessage] = reply
) -> object:
    model = ScriptedChatModel(respond=respond)
    return create_agent(model, [transfer], middleware=list(middleware), name=name)  # type: ignore[arg-type]


ledger = _agent("ledger")
ledger_once = _agent(
    "ledger_once", OncePerToolCall(CallLedger.postgres(_url()).setup(), tools={"transfer"})
)
ledger_approval = _agent("ledger_approval", ApproveToolCalls(needs_approval={"transfer"}))
ledger_once_fresh_ids = _agent(
    "ledger_once_fresh_ids",
    OncePerToolCall(CallLedger.postgres(_url()).setup(), tools={"transfer"}),
    respond=reply_with_fresh_ids,
)
