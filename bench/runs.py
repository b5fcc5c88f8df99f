"""What run-level control costs per run: a ``wrap_agent_call`` layer, a per-run switch.

One agent run (one tool call, two model calls) with 10 no-op decorated middleware
(``before_model``, ``after_model``, ``wrap_model_call``, cycled), each row against the
same agent without the feature, with ``invoke`` and with ``ainvoke``:

- ``wrap_agent_call``: the stack plus one pass-through ``@wrap_agent_call`` layer, a
  ``def`` and an ``async def`` (a ``def`` layer under ``ainvoke`` runs on a worker thread,
  as every sync hook does there, and an ``async def`` one under ``invoke`` on the bridge);
- ``per-run switch (wrap)``: the stack plus one ``wrap_model_call`` middleware, run with
  ``config["configurable"]["funcware"] = {"disable": [...]}`` switching it off (no rebuild),
  against the stack without it;
- ``per-run switch (node)``: the same with a ``before_model`` middleware (a graph built once
  for that stack, reused), against the stack without it.

Single runs alternate, with and without, so that load hits both sides alike, and the
fastest run of each side counts (load only ever adds time). The ``vs without`` column is
the ratio; 1.02 is 2 % slower.

    python bench/runs.py            # 300 rounds
    python bench/runs.py --quick    # 5 rounds (the smoke test)
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import types
from collections.abc import Callable
from typing import Any

from fake_model import BenchChatModel, add
from langchain_core.messages import HumanMessage

from funcware import (
    AgentRequest,
    AgentResponse,
    after_model,
    before_model,
    create_agent,
    wrap_agent_call,
    wrap_model_call,
)

__all__ = ["main", "measure"]

HOOKS = 10


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


Case = tuple[Any, Any]
"""An agent and the config it runs with."""


def _cases() -> dict[str, tuple[Case, Case]]:
    """Each row: (with the feature, the same agent without). Each row has its own agent
    without, run as often as the one with (a shared one, run four times as often, would
    have its code and data hotter in the caches than each agent it is compared with)."""

    def plain() -> Any:
        return create_agent(BenchChatModel(), [add], middleware=_stack())

    layered = create_agent(
        BenchChatModel(), [add], middleware=[wrap_agent_call(name="around")(_around), *_stack()]
    )
    alayered = create_agent(
        BenchChatModel(), [add], middleware=[wrap_agent_call(name="around")(_aaround), *_stack()]
    )
    wrap = wrap_model_call(name="switched")(_copy(_wrap))
    node = before_model(name="switched")(_copy(_node))
    off = {"configurable": {"funcware": {"disable": ["switched"]}}}
    return {
        "wrap_agent_call (def)": ((layered, None), (plain(), None)),
        "wrap_agent_call (async def)": ((alayered, None), (plain(), None)),
        "per-run switch (wrap)": (
            (create_agent(BenchChatModel(), [add], middleware=[*_stack(), wrap]), off),
            (plain(), None),
        ),
        "per-run switch (node)": (
            (create_agent(BenchChatModel(), [add], middleware=[*_stack(), node]), off),
            (plain(), None),
        ),
    }


def _inputs() -> dict[str, Any]:
    return {"messages": [HumanMessage("hi")]}


def _time_sync(agent: Any, config: Any) -> float:
    start = time.perf_counter_ns()
    agent.invoke(_inputs(), config)
    return (time.perf_counter_ns() - start) / 1e3


async def _time_async(agent: Any, config: Any) -> float:
    start = time.perf_counter_ns()
    await agent.ainvoke(_inputs(), config)
    return (time.perf_counter_ns() - start) / 1e3


def measure(rounds: int = 300) -> dict[str, dict[str, tuple[float, float]]]:
    """Best µs per run of each row, with the feature and without, per entry point."""
    cases = _cases()
    for pair in cases.values():
        for agent, config in pair:
            assert agent.invoke(_inputs(), config)["messages"][-1].text == "done"
    best = {
        entry: {name: [float("inf"), float("inf")] for name in cases}
        for entry in ("invoke", "ainvoke")
    }
    for _ in range(rounds):
        for name, pair in cases.items():
            for side, (agent, config) in enumerate(pair):
                best["invoke"][name][side] = min(
                    best["invoke"][name][side], _time_sync(agent, config)
                )

    async def arounds() -> None:
        for _ in range(rounds):
            for name, pair in cases.items():
                for side, (agent, config) in enumerate(pair):
                    us = await _time_async(agent, config)
                    best["ainvoke"][name][side] = min(best["ainvoke"][name][side], us)

    asyncio.run(arounds())
    return {
        entry: {name: (pair[0], pair[1]) for name, pair in rows.items()}
        for entry, rows in best.items()
    }


def report(best: dict[str, dict[str, tuple[float, float]]]) -> str:
    lines = [
        f"| {HOOKS} no-op middleware, 2 model calls | entry | µs with | µs without | vs without |",
        "|---|---|---|---|---|",
    ]
    for entry, rows in best.items():
        lines += [
            f"| {name} | {entry} | {with_:.0f} | {without:.0f} | {with_ / without:.3f}× |"  # noqa: RUF001
            for name, (with_, without) in rows.items()
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    print(report(measure(rounds=5 if args.quick else 300)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
