"""One measurement in a fresh process: one scenario, one implementation, one round.

``run.py`` starts ``python bench/run.py --worker --impl I --scenario S --out FILE``; this
module prepares the scenario, checks once that it behaves (every hook ran, the tool loop
ran its steps, the answer is ``"done"``), warms up, times, and writes a JSON result.
"""

from __future__ import annotations

import asyncio
import gc
import json
import resource
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage
from scenarios import HITS, SCENARIOS, Prepared, Scenario, chain_agent, new_input

__all__ = ["DEPTH_CAP", "main", "measure"]

DEPTH_CAP = 5000
"""The deepest chain tried when searching for the deepest sync chain that runs."""

MIN_SAMPLES = 5
MAX_SAMPLES = 50_000


class BenchCheckError(AssertionError):
    """A scenario did not do what it should (a hook skipped, a step missing)."""


def _check(result: Any, prepared: Prepared, hits_before: int) -> None:
    hits = HITS[0] - hits_before
    if hits != prepared.hits:
        raise BenchCheckError(f"expected {prepared.hits} hook calls, got {hits}")
    messages = result["messages"]
    tools = sum(1 for m in messages if isinstance(m, ToolMessage))
    if tools != prepared.tool_results:
        raise BenchCheckError(f"expected {prepared.tool_results} tool results, got {tools}")
    if messages[-1].content != "done":
        raise BenchCheckError(f"the last message is {messages[-1]!r}, not the final answer")


def _now() -> int:
    return time.perf_counter_ns()


def measure(call: Callable[[], object], budget_s: float) -> list[int]:
    """Warm up for ~20% of ``budget_s`` (3 calls at least), then time calls for the rest."""
    warm_until = _now() + int(budget_s * 0.2e9)
    for count in range(1_000_000):
        if count >= 3 and _now() >= warm_until:
            break
        call()
    gc.collect()
    samples: list[int] = []
    stop = _now() + int(budget_s * 1e9)
    while len(samples) < MAX_SAMPLES and (len(samples) < MIN_SAMPLES or _now() < stop):
        start = _now()
        call()
        samples.append(_now() - start)
    return samples


async def ameasure(call: Callable[[], Awaitable[object]], budget_s: float) -> list[int]:
    """:func:`measure` for a coroutine function, timed inside one running event loop."""
    warm_until = _now() + int(budget_s * 0.2e9)
    for count in range(1_000_000):
        if count >= 3 and _now() >= warm_until:
            break
        await call()
    gc.collect()
    samples: list[int] = []
    stop = _now() + int(budget_s * 1e9)
    while len(samples) < MAX_SAMPLES and (len(samples) < MIN_SAMPLES or _now() < stop):
        start = _now()
        await call()
        samples.append(_now() - start)
    return samples


def _invoke(scenario: Scenario, impl: str, budget_s: float) -> dict[str, Any]:
    assert scenario.prepare is not None
    prepared = scenario.prepare(impl)
    agent = prepared.target
    before, start = HITS[0], _now()
    result = agent.invoke(new_input())
    first = _now() - start
    _check(result, prepared, before)
    samples = measure(lambda: agent.invoke(new_input()), budget_s)
    return {"samples_ns": samples, "first_call_ns": first}


def _ainvoke(scenario: Scenario, impl: str, budget_s: float) -> dict[str, Any]:
    assert scenario.prepare is not None
    prepared = scenario.prepare(impl)
    agent = prepared.target

    async def main() -> dict[str, Any]:
        before, start = HITS[0], _now()
        result = await agent.ainvoke(new_input())
        first = _now() - start
        _check(result, prepared, before)
        samples = await ameasure(lambda: agent.ainvoke(new_input()), budget_s)
        return {"samples_ns": samples, "first_call_ns": first}

    return asyncio.run(main())


def _build(scenario: Scenario, impl: str, budget_s: float) -> dict[str, Any]:
    assert scenario.prepare is not None
    build = scenario.prepare(impl).target
    start = _now()
    agent = build()
    first = _now() - start
    before = HITS[0]
    _check(agent.invoke(new_input()), Prepared(None, hits=200), before)
    return {"samples_ns": measure(build, budget_s), "first_call_ns": first}


def _is_recursion(exc: BaseException | None) -> bool:
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, RecursionError):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _depth(scenario: Scenario, impl: str, budget_s: float) -> dict[str, Any]:
    probes: dict[int, bool] = {}

    def runs(layers: int) -> bool:
        agent = chain_agent(impl, layers)
        try:
            agent.invoke(new_input())
        except Exception as exc:
            if not _is_recursion(exc):
                raise
            probes[layers] = False
            return False
        probes[layers] = True
        return True

    good, bad = 0, None
    for layers in (50, 100, 200, 400, 800, 1600, 3200, DEPTH_CAP):
        if not runs(layers):
            bad = layers
            break
        good = layers
    if bad is not None:
        while bad - good > 1:
            middle = (good + bad) // 2
            if runs(middle):
                good = middle
            else:
                bad = middle
    return {
        "value": good,
        "unit": "layers",
        "capped": bad is None,
        "cap": DEPTH_CAP,
        "recursion_limit": sys.getrecursionlimit(),
        "probes": {str(k): v for k, v in sorted(probes.items())},
    }


def _memory(scenario: Scenario, impl: str, budget_s: float) -> dict[str, Any]:
    assert scenario.prepare is not None
    prepared = scenario.prepare(impl)
    agent = prepared.target
    for _ in range(3):
        agent.invoke(new_input())
    gc.collect()
    tracemalloc.start()
    before = HITS[0]
    result = agent.invoke(new_input())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    _check(result, prepared, before)
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"value": peak, "unit": "bytes", "max_rss_bytes": rss_kib * 1024}


RUNNERS: dict[str, Callable[[Scenario, str, float], dict[str, Any]]] = {
    "invoke": _invoke,
    "ainvoke": _ainvoke,
    "build": _build,
    "depth": _depth,
    "memory": _memory,
}


def _error_text(exc: BaseException) -> str:
    if _is_recursion(exc):
        return "RecursionError"
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:300]


def main(impl: str, scenario_name: str, budget_s: float, out: Path) -> int:
    """Run one measurement and write its JSON to ``out``; 0 unless the worker itself broke."""
    scenario = SCENARIOS[scenario_name]
    try:
        result: dict[str, Any] = {
            "status": "ok",
            **RUNNERS[scenario.kind](scenario, impl, budget_s),
        }
    except Exception as exc:
        result = {"status": "error", "error": _error_text(exc)}
    out.write_text(json.dumps(result), encoding="utf-8")
    return 0
