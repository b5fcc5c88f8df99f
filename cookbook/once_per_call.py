"""Once per call: a side-effecting tool runs at most once per tool call, across failovers.

When to use: an agent served by several instances (Aegra, LangGraph Server) runs each
step at least once — a worker that dies mid-step is replaced and the step runs again. For
a tool that pays a refund or sends an e-mail, "again" means twice. This wrapper makes a
repeat see what the first attempt did instead of doing it again.

``OncePerToolCall`` is a ``wrap_tool_call`` middleware keyed by the thread id and the tool
call id (the model's call, which the checkpoint keeps, so a re-run of the same step sees
the same key). It writes to a ``CallLedger`` — a table in the same database as the
checkpoints — *before* calling the tool (the call started) and *after* (its answer).
On a repeat it finds one of the two:

- the answer: it is returned as it was, and the tool is not called;
- only the start (the worker died inside the tool, so nobody knows whether the effect
  happened): with ``unfinished="report"`` (the default) the call is answered with an
  error ``ToolMessage`` saying so and the tool is not called, so the model or a person
  can check; with ``unfinished="retry"`` the tool runs again, for tools whose effect
  is idempotent on :func:`call_key` (an API's idempotency key, a unique row), which a
  tool computes from its ``ToolRuntime``: ``call_key(thread_id, runtime.tool_call_id)``.

Guarantee: for a given ledger, the tool of a call (thread id, tool call id) starts at most
once unless ``unfinished="retry"``, and a repeat of a recorded call gets its recorded answer;
across a worker's death this covers the model's decision (the run that takes over repeats
the call under the same id) only when the run's durability is ``"sync"`` or the model gives
a repeated call the same id (``stable_ids=True``), and on any other run the recipe warns
with a ``DurabilityWarning``.

Why the durability: LangGraph's default, ``"async"``, writes a step's checkpoint while the
next step already runs, so the tools can start before the checkpoint holding the model's
tool call is saved. A worker killed then loses the model's answer; the run that takes over
asks the model again, and a real model mints a new tool call id, which is a new key here,
so the tool runs a second time (``"exit"`` saves nothing until the run ends: the same).
Under ``"sync"`` every checkpoint is saved before the next step starts, so a tool only ever
runs for a tool call that is already in the checkpoint. Set it where runs are started:
``"checkpointer": {"durability": "sync"}`` in ``aegra.json`` (as ``deploy/aegra`` ships),
``AEGRA_CHECKPOINT_DURABILITY=sync``, or ``agent.invoke(..., durability="sync")``. The
recipe reads the durability the run was started with from the run's config, where LangGraph
keeps it (none there means LangGraph's default, ``"async"``).

What it does not do: make an effect and its record atomic. An effect written in the same
database can be, if the tool writes it in the transaction that records it; an outside
effect cannot, which is why an unfinished call is reported, not guessed. Tools that
return a ``Command`` instead of a ``ToolMessage`` are refused (a ``Command`` cannot be
replayed faithfully); tools outside ``tools`` pass through untouched. A call without an
id, or a ``tools`` that is not a collection of names, is refused rather than guessed.

How to adapt: ``CallLedger.postgres(url).setup()`` for the server's database (the
checkpointer's), ``CallLedger.sqlite(path)`` for tests and single machines; list only
the tools with side effects in ``tools``; prune old rows by ``updated_at`` when threads
expire; ``stable_ids=True`` only for a model whose repeated calls keep their ids (a scripted
model, a cassette), which needs no particular durability.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import warnings
from collections.abc import Callable, Collection, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from funcware import AgentMiddleware, AgentState, ToolCallRequest, create_agent
from funcware.testing import ScriptedChatModel

TABLE = "funcware_tool_calls"
"""The ledger's table (made by ``CallLedger.setup()``): one row per (thread id, tool call id)."""

DURABILITY_KEY = "__pregel_durability"
"""Where LangGraph keeps, in a run's ``configurable``, the durability the run was started with."""


class DurabilityWarning(UserWarning):
    """A run's durability lets a worker's death lose a tool call whose tool already ran."""


def run_durability(config: RunnableConfig) -> str:
    """The durability a run was started with: ``"sync"``, ``"async"`` or ``"exit"``.

    LangGraph puts it in the run's config when the run is given one (by the caller or by the
    server); a run given none has LangGraph's default, ``"async"``.
    """
    return str(config.get("configurable", {}).get(DURABILITY_KEY, "async"))


class _Cursor(Protocol):
    def execute(self, sql: str, params: tuple[Any, ...] = ..., /) -> Any: ...
    def fetchone(self) -> Any: ...
    def fetchall(self) -> Any: ...


class _Connection(Protocol):
    def cursor(self) -> Any: ...
    def commit(self) -> None: ...
    def close(self) -> None: ...


def call_key(thread_id: str, tool_call_id: str) -> str:
    """The idempotency key of one tool call: the same on every attempt of that call."""
    return f"{thread_id}:{tool_call_id}"


@dataclass(frozen=True)
class Recorded:
    """What the ledger holds for a call: started only (``answer is None``) or answered."""

    answer: dict[str, Any] | None


class CallLedger:
    """A table of tool calls: ``start`` claims a call, ``finish`` records its answer.

    Each method commits before it returns, so what it wrote survives the process.
    """

    def __init__(
        self,
        connect: Callable[[], _Connection],
        *,
        placeholder: str,
        close: bool = True,
        setup_lock: str | None = None,
    ) -> None:
        self._connect = connect
        self._p = placeholder
        self._close = close
        self._setup_lock = setup_lock
        # A connection shared by threads (SQLite in memory) is used by one at a time.
        self._lock: AbstractContextManager[Any] = threading.Lock() if not close else nullcontext()

    @classmethod
    def postgres(cls, url: str) -> CallLedger:
        """A ledger in a PostgreSQL database (psycopg 3); call ``setup()`` once to create it."""
        import psycopg

        return cls(
            lambda: psycopg.connect(url),
            placeholder="%s",
            # Concurrent CREATE TABLE IF NOT EXISTS can collide in PostgreSQL's catalog.
            setup_lock=f"SELECT pg_advisory_xact_lock(hashtext('{TABLE}'))",
        )

    @classmethod
    def sqlite(cls, path: str = ":memory:") -> CallLedger:
        """A ledger in an SQLite file (or in memory: one connection shared by all threads)."""
        if path == ":memory:":
            shared = sqlite3.connect(path, check_same_thread=False)
            ledger = cls(lambda: shared, placeholder="?", close=False)
        else:
            ledger = cls(lambda: sqlite3.connect(path), placeholder="?")
        return ledger.setup()

    def setup(self) -> CallLedger:
        """Create the table if it does not exist (safe to call from every instance)."""
        with self._cursor() as cursor:
            if self._setup_lock is not None:
                cursor.execute(self._setup_lock)
            cursor.execute(
                f"CREATE TABLE IF NOT EXISTS {TABLE} (thread_id TEXT NOT NULL, "
                "tool_call_id TEXT NOT NULL, answer TEXT, "
                "updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, "
                "PRIMARY KEY (thread_id, tool_call_id))"
            )
        return self

    @contextmanager
    def _cursor(self) -> Iterator[_Cursor]:
        with self._lock:
            connection = self._connect()
            try:
                cursor = connection.cursor()
                yield cursor
                connection.commit()
            finally:
                if self._close:
                    connection.close()

    def start(self, thread_id: str, tool_call_id: str) -> Recorded | None:
        """Record that the call starts; ``None`` if it is new, else what an earlier attempt left."""
        p = self._p
        with self._cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {TABLE} (thread_id, tool_call_id) VALUES ({p}, {p}) "
                "ON CONFLICT (thread_id, tool_call_id) DO NOTHING",
                (thread_id, tool_call_id),
            )
            if getattr(cursor, "rowcount", 0) == 1:
                return None
            cursor.execute(
                f"SELECT answer FROM {TABLE} WHERE thread_id = {p} AND tool_call_id = {p}",
                (thread_id, tool_call_id),
            )
            (answer,) = cursor.fetchone()
        return Recorded(None if answer is None else json.loads(answer))

    def finish(self, thread_id: str, tool_call_id: str, answer: dict[str, Any]) -> None:
        """Record the call's answer (a ``ToolMessage``'s fields)."""
        p = self._p
        with self._cursor() as cursor:
            cursor.execute(
                f"UPDATE {TABLE} SET answer = {p}, updated_at = CURRENT_TIMESTAMP "
                f"WHERE thread_id = {p} AND tool_call_id = {p}",
                (json.dumps(answer), thread_id, tool_call_id),
            )

    def answers(self) -> dict[tuple[str, str], dict[str, Any] | None]:
        """Every recorded call and its answer (``None`` while unfinished)."""
        with self._cursor() as cursor:
            cursor.execute(f"SELECT thread_id, tool_call_id, answer FROM {TABLE}")
            rows = cursor.fetchall()
        return {(t, c): None if a is None else json.loads(a) for t, c, a in rows}


class OncePerToolCall(AgentMiddleware[AgentState[Any], Any]):
    """Runs each tool call's tool at most once per ledger; repeats get the recorded answer.

    A call it guards on a run whose durability is not ``"sync"`` issues a
    ``DurabilityWarning`` (shown once per tool and durability by Python's default filter),
    unless ``stable_ids=True`` says the model's ids do not change.
    """

    # a call whose earlier attempt failed is answered (reported) instead of run again
    writes = ("handler.skip", "tool.error.recover")

    def __init__(
        self,
        ledger: CallLedger,
        *,
        tools: Collection[str] | None = None,
        unfinished: Literal["report", "retry"] = "report",
        stable_ids: bool = False,
    ) -> None:
        if unfinished not in ("report", "retry"):
            raise ValueError(
                f"OncePerToolCall(unfinished={unfinished!r}): use 'report' (answer with an "
                "error, never run twice) or 'retry' (run again; the tool must be idempotent)"
            )
        if not isinstance(stable_ids, bool):
            raise TypeError(
                f"OncePerToolCall(stable_ids={stable_ids!r}): pass True only for a model that "
                "gives a repeated call the same id, else False"
            )
        if tools is not None and (
            isinstance(tools, str) or not all(isinstance(name, str) for name in tools)
        ):
            raise TypeError(
                f"OncePerToolCall(tools={tools!r}): give a collection of tool names, e.g. "
                "{'refund'} (a bare string would be read as its letters, and the tool would "
                "pass through unguarded)."
            )
        self.ledger = ledger
        self.only = None if tools is None else frozenset(tools)
        self.unfinished = unfinished
        self.stable_ids = stable_ids

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        call = request.tool_call
        name = call["name"]
        if self.only is not None and name not in self.only:
            return handler(request)
        config: RunnableConfig = request.runtime.config if request.runtime is not None else {}
        thread_id = _thread_id(config, name)
        if not self.stable_ids:
            _check_durability(config, name)
        call_id = call["id"]
        if not call_id:
            raise ValueError(
                f"OncePerToolCall.wrap_tool_call: the call to {name!r} has no id, so it has "
                "no stable key (every id-less call would share one); make sure the chat model "
                "returns tool call ids. The tool was not run."
            )
        earlier = self.ledger.start(thread_id, call_id)
        if earlier is not None and earlier.answer is not None:
            return ToolMessage(**earlier.answer, tool_call_id=call_id)
        if earlier is not None and self.unfinished == "report":
            return ToolMessage(
                f"Error: the call to {name!r} started on an earlier attempt that did not "
                "finish, so whether it took effect is unknown. It was not run again; check "
                "its effect before calling it again.",
                name=name,
                tool_call_id=call_id,
                status="error",
            )
        result = handler(request)
        if not isinstance(result, ToolMessage):
            raise TypeError(
                f"OncePerToolCall.wrap_tool_call: tool {name!r} returned a "
                f"{type(result).__name__}, which cannot be recorded and replayed; return a "
                "ToolMessage (or a string) from it, or leave it out of tools="
            )
        answer = {"content": result.content, "name": result.name, "status": result.status}
        self.ledger.finish(thread_id, call_id, answer)
        return result


def _thread_id(config: RunnableConfig, name: str) -> str:
    thread_id = config.get("configurable", {}).get("thread_id")
    if thread_id is None:
        raise ValueError(
            f"OncePerToolCall.wrap_tool_call: the call to {name!r} runs without a thread_id, "
            "so it has no stable key; run the agent with a checkpointer and "
            "config={'configurable': {'thread_id': ...}}"
        )
    return str(thread_id)


def _check_durability(config: RunnableConfig, name: str) -> None:
    durability = run_durability(config)
    if durability != "sync":
        warnings.warn(
            f"OncePerToolCall.wrap_tool_call: the call to {name!r} runs with durability="
            f"{durability!r}, so a worker that dies before the checkpoint holding the model's "
            "tool call is saved loses that call; the run that takes over asks the model again, "
            "a new tool call id is a new call, and the tool runs twice. Start runs with "
            'durability=\'sync\' (aegra.json: "checkpointer": {"durability": "sync"}; '
            "or agent.invoke(..., durability='sync')), or pass stable_ids=True if the model "
            "gives a repeated call the same id",
            DurabilityWarning,
            stacklevel=2,
        )


def demo() -> tuple[Any, dict[str, Any]]:
    """A refund, then the same step again (as after a failover): the refund is paid once."""
    paid: list[str] = []

    @tool
    def refund(order: str) -> str:
        """Refund an order (a side effect that must not happen twice)."""
        paid.append(order)
        return f"Refunded {order}."

    def reply(messages: list[Any]) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(f"Done: {messages[-1].text}")
        call = {"name": "refund", "args": {"order": "A7"}, "id": "r1"}
        return AIMessage("", tool_calls=[call])

    ledger = CallLedger.sqlite()
    once = OncePerToolCall(ledger, tools={"refund"})
    thread: RunnableConfig = {"configurable": {"thread_id": "refund-demo"}}
    model = ScriptedChatModel(respond=reply)
    agent = create_agent(model, [refund], middleware=[once], checkpointer=InMemorySaver())
    # "sync": the model's tool call is saved before the refund can start.
    ask = {"messages": [HumanMessage("Refund order A7.")]}
    state = agent.invoke(ask, thread, durability="sync")
    # A failover re-runs the tool step from the checkpoint before it: replay that step.
    before_tools = next(s for s in agent.get_state_history(thread) if s.next == ("tools",))
    again = agent.invoke(None, before_tools.config, durability="sync")
    assert paid == ["A7"], paid  # the second attempt got the recorded answer
    assert again["messages"][-1].text == "Done: Refunded A7."
    return agent, state
