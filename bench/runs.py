"""What run-level control and the tool-call pairing check cost per run, in one run.

Each row times the same agent with the feature and without it. The agent: 10 no-op
decorated middleware (``before_model``, ``after_model``, ``wrap_model_call``, cycled), one
tool call, two model calls. The rows held to 2%:

- ``wrap_agent_call``: the stack plus one pass-through ``@wrap_agent_call`` layer in the
  entry's own flavour (a ``def`` under ``invoke``, an ``async def`` under ``ainvoke``);
- ``per-run switch (wrap)``: the stack plus one ``wrap_model_call`` middleware, run with
  ``config["configurable"]["funcware"] = {"disable": [...]}`` switching it off, against the
  stack without it; ``per-run switch (node)``: the same with a ``before_model`` middleware
  (a graph built once for that stack, reused);
- ``pairing check``: the agent with ``tool_pairing="warn"`` (the default) against
  ``"off"``, on a fresh question and after a 60-message history (20 earlier tool steps).

Shown, not held to it: the pairing check on ``bench/pairing.py``'s agent, its worst case
(hooks that write or rewrite messages at every step, three tool steps); a layer of the
other flavour (an ``async def`` layer under ``invoke``, a ``def`` one under ``ainvoke``),
which crosses the sync/async bridge once per run; and a *control*: two builds of one
agent, which shows how far two agents doing the same work drift apart on this machine.

Method: each row in turn runs rounds of four single runs back to back: with, without,
without, with (or the other way round, from round to round), timed in this process's CPU
time (other processes on a busy machine count less). So a burst of load, or the cost of
going first, hits both sides of a round alike. The garbage collector is off while timing
and collects between rounds now and then (a pause would land on one side at random). A
row's figure is the median of its per-round ratios; the middle half of them shows the
spread.

    python bench/runs.py               # 600 rounds per row
    python bench/runs.py --quick       # 3 rounds per row (the smoke test)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fake_model import BenchChatModel, add
from langchain_core.messages import HumanMessage
from pairing import INPUTS, agents, question

from funcware import (
    AgentRequest,
    AgentResponse,
    after_model,
    before_model,
    create_agent,
    wrap_agent_call,
    wrap_model_call,
)

__all__ = ["BOUND", "Row", "main", "measure", "report"]

HOOKS = 10
BOUND = 1.02
"""The most a bounded row may cost: 2% over the agent without the feature."""


def _node(state: Any) -> None:
    return None


def _wrap(request: Any, handler: Callable[[Any], Any]) -> Any:
    return handler(request)


def _around(request: AgentRequest, handler: Callable[[AgentRequest], AgentResponse]) -> Any:
    return handler(request)


async def _aaround(request: AgentRequest, handler: Any) -> Any:
    return await handler(request)


def _copy(func: Callable[..., Any]) -> Callable[..., Any]:
    return types.FunctionType(func.__code__, func.__globals__, func.__name__)


def _stack() -> list[Any]:
    decorators = (before_model, after_model, wrap_model_call)
    return [
        decorators[i % 3](name=f"hook_{i}")(_copy(_wrap if i % 3 == 2 else _node))
        for i in range(HOOKS)
    ]


def _agent(*extra: Any, first: Any = None, prior: int = 0, pairing: str = "warn") -> Any:
    """The bench's agent (``prior``: tool steps in the history it is given)."""
    layers = [] if first is None else [first]
    model = BenchChatModel(tool_steps=prior + 1)
    middleware = [*layers, *_stack(), *extra]
    return create_agent(model, [add], middleware=middleware, tool_pairing=pairing)


def _plain_input() -> dict[str, Any]:
    return {"messages": [HumanMessage("hi")]}


@dataclass
class Side:
    """One agent, the config it runs with, and a maker of its input."""

    agent: Any
    config: Any = None
    inputs: Callable[[], Any] = _plain_input

    def run(self) -> Any:
        return self.agent.invoke(self.inputs(), self.config)

    async def arun(self) -> Any:
        return await self.agent.ainvoke(self.inputs(), self.config)


@dataclass
class Row:
    """A feature's agent against the same agent without it, under one entry point."""

    name: str
    entry: str
    with_: Side
    without: Side
    bounded: bool = True
    ratios: list[float] = field(default_factory=list)
    times: tuple[list[float], list[float]] = field(default_factory=lambda: ([], []))

    def record(self, with_us: float, without_us: float) -> None:
        self.ratios.append(with_us / without_us)
        self.times[0].append(with_us)
        self.times[1].append(without_us)

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)

    @property
    def spread(self) -> tuple[float, float]:
        """The middle half of the per-round ratios (first and third quartiles)."""
        if len(self.ratios) < 2:
            return self.ratio, self.ratio
        low, _, high = statistics.quantiles(self.ratios, n=4)
        return low, high


def _rows() -> list[Row]:
    """Every row; each has its own agent without the feature, run as often as its agent
    with it (a shared one would be hotter in the caches than each agent it is compared to)."""
    off = {"configurable": {"funcware": {"disable": ["switched"]}}}
    sync_layer = wrap_agent_call(name="around")(_around)
    async_layer = wrap_agent_call(name="around")(_aaround)
    switched_wrap = wrap_model_call(name="switched")(_copy(_wrap))
    switched_node = before_model(name="switched")(_copy(_node))
    rows: list[Row] = []
    for entry, own, other in (
        ("invoke", sync_layer, async_layer),
        ("ainvoke", async_layer, sync_layer),
    ):
        rows += [
            Row("wrap_agent_call", entry, Side(_agent(first=own)), Side(_agent())),
            Row("per-run switch (wrap)", entry, Side(_agent(switched_wrap), off), Side(_agent())),
            Row("per-run switch (node)", entry, Side(_agent(switched_node), off), Side(_agent())),
        ]
        for label, history in INPUTS.items():
            prior = sum(1 for m in history if m.type == "tool")

            def inputs(history: Any = history) -> Any:
                return question(history)

            checked, unchecked = (_agent(prior=prior, pairing=mode) for mode in ("warn", "off"))
            rows.append(
                Row(
                    f"pairing check ({label})",
                    entry,
                    Side(checked, None, inputs),
                    Side(unchecked, None, inputs),
                )
            )
        for label, history in INPUTS.items():
            prior = sum(1 for m in history if m.type == "tool")
            pair = agents(prior)

            def inputs(history: Any = history) -> Any:
                return question(history)

            rows.append(
                Row(
                    f"pairing check, worst case ({label})",
                    entry,
                    Side(pair["warn"], None, inputs),
                    Side(pair["off"], None, inputs),
                    bounded=False,
                )
            )
        rows += [
            Row(
                "wrap_agent_call, other flavour (bridge)",
                entry,
                Side(_agent(first=other)),
                Side(_agent()),
                bounded=False,
            ),
            Row("control: two builds of one agent", entry, Side(_agent()), Side(_agent()), False),
        ]
    return rows


def _timed(run: Callable[[], Any], batch: int) -> float:
    start = time.process_time_ns()
    for _ in range(batch):
        run()
    return (time.process_time_ns() - start) / batch / 1e3


async def _atimed(run: Callable[[], Any], batch: int) -> float:
    start = time.process_time_ns()
    for _ in range(batch):
        await run()
    return (time.process_time_ns() - start) / batch / 1e3


def measure(rounds: int = 600, batch: int = 1) -> list[Row]:
    """Every row, one after the other, in ``rounds`` rounds of four batches of ``batch``
    runs: with, without, without, with (or the other way round, from round to round)."""
    rows = _rows()
    loop = asyncio.new_event_loop()

    def timed(row: Row, side: Side) -> float:
        if row.entry == "invoke":
            return _timed(side.run, batch)
        return loop.run_until_complete(_atimed(side.arun, batch))

    try:
        for row in rows:
            for side in (row.with_, row.without):  # each runs and answers before it is timed
                sync = row.entry == "invoke"
                result = side.run() if sync else loop.run_until_complete(side.arun())
                assert result["messages"][-1].text == "done", row.name
            gc.disable()
            for number in range(rounds):
                if number % 25 == 0:
                    gc.collect()
                one, other = (row.with_, row.without) if number % 2 else (row.without, row.with_)
                first, second, third, fourth = (timed(row, s) for s in (one, other, other, one))
                outer, inner = (first + fourth) / 2, (second + third) / 2
                row.record(*((outer, inner) if number % 2 else (inner, outer)))
            gc.enable()
    finally:
        gc.enable()
        loop.close()
    return rows


def report(rows: list[Row]) -> str:
    lines = [
        "| row | entry | µs with | µs without | with / without | middle half of rounds |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        with_us, without_us = (statistics.median(times) for times in row.times)
        flag = "" if row.bounded else " (not bounded)"
        low, high = row.spread
        lines.append(
            f"| {row.name} | {row.entry} | {with_us:.0f} | {without_us:.0f} "
            f"| {row.ratio:.3f}×{flag} | {low:.3f} to {high:.3f} |"  # noqa: RUF001
        )
    bounded = [row for row in rows if row.bounded]
    worst = max(bounded, key=lambda row: row.ratio)
    verdict = "yes" if worst.ratio <= BOUND else "**NO**"
    lines += [
        "",
        f"every bounded row within {BOUND - 1:.0%} of the agent without the feature: {verdict} "
        f"(highest: {worst.name}, {worst.entry}, {worst.ratio:.3f}×)",  # noqa: RUF001
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=600)
    parser.add_argument("--batch", type=int, default=1)
    args = parser.parse_args(argv)
    rounds, batch = (3, 1) if args.quick else (args.rounds, args.batch)
    print(report(measure(rounds, batch)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
