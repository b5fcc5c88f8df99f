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
import threading
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage
from scenarios import SCENARIOS, Prepared, Scenario, chain_agent, hits, new_input

__all__ = ["DEPTH_CAP", "main", "measure"]

DEPTH_CAP = 5000
"""The deepest chain tried when searching for the deepest sync chain that runs."""

MIN_SAMPLES = 5
MAX_SAMPLES = 50_000


class BenchCheckError(AssertionError):
    """A scenario did not do what it should (a hook skipped, a step missing)."""


def _check(result: Any, prepared: Prepared, hits_before: int) -> None:
    """Check one invocation's result, or a list of them (``concurrent`` scenarios)."""
    results = result if isinstance(result, list) else [result]
    ran = hits() - hits_before - 1  # reading the counter counts one
    if ran != prepared.hits * len(results):
        raise BenchCheckError(f"expected {prepared.hits * len(results)} hook calls, got {ran}")
    for one in results:
        _check_result(one, prepared)


def _check_result(result: Any, prepared: Prepared) -> None:
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


async def ameasure(
    call: Callable[[], Awaitable[object]],
    budget_s: float,
    *,
    warmups: int = 3,
    min_samples: int = MIN_SAMPLES,
) -> list[int]:
    """:func:`measure` for a coroutine function, timed inside one running event loop."""
    warm_until = _now() + int(budget_s * 0.2e9)
    for count in range(1_000_000):
        if count >= warmups and _now() >= warm_until:
            break
        await call()
    gc.collect()
    samples: list[int] = []
    stop = _now() + int(budget_s * 1e9)
    while len(samples) < MAX_SAMPLES and (len(samples) < min_samples or _now() < stop):
        start = _now()
        await call()
        samples.append(_now() - start)
    return samples


def _invoker(prepared: Prepared) -> Callable[[], Any]:
    agent, inputs, config, cleanup = (
        prepared.target,
        prepared.inputs,
        prepared.config,
        prepared.cleanup,
    )

    def call() -> Any:
        used = config()
        result = agent.invoke(inputs(), used)
        if cleanup is not None:
            cleanup(used)
        return result

    return call


def _ainvoker(prepared: Prepared) -> Callable[[], Awaitable[Any]]:
    agent, inputs, config, cleanup = (
        prepared.target,
        prepared.inputs,
        prepared.config,
        prepared.cleanup,
    )

    async def call() -> Any:
        used = config()
        result = await agent.ainvoke(inputs(), used)
        if cleanup is not None:
            cleanup(used)
        return result

    return call


def _invoke(scenario: Scenario, impl: str, budget_s: float) -> dict[str, Any]:
    assert scenario.prepare is not None
    prepared = scenario.prepare(impl)
    call = _invoker(prepared)
    before, start = hits(), _now()
    result = call()
    first = _now() - start
    _check(result, prepared, before)
    samples = measure(call, budget_s)
    return {"samples_ns": samples, "first_call_ns": first}


def _ainvoke(scenario: Scenario, impl: str, budget_s: float) -> dict[str, Any]:
    assert scenario.prepare is not None
    prepared = scenario.prepare(impl)
    call = _ainvoker(prepared)

    async def main() -> dict[str, Any]:
        before, start = hits(), _now()
        result = await call()
        first = _now() - start
        _check(result, prepared, before)
        samples = await ameasure(call, budget_s)
        return {"samples_ns": samples, "first_call_ns": first}

    return asyncio.run(main())


def _rss_bytes() -> int:
    """This process's resident memory now (Linux), or 0 where unknown."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize()
    except OSError:
        return 0


class _ThreadPeak:
    """The most threads alive at once while it runs (sampled every half millisecond)."""

    def __init__(self) -> None:
        self.peak = threading.active_count()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.wait(0.0005):
            self.peak = max(self.peak, threading.active_count())

    def __enter__(self) -> _ThreadPeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _concurrent(scenario: Scenario, impl: str, budget_s: float) -> dict[str, Any]:
    """``concurrency`` ``ainvoke`` at once (``asyncio.gather``), one sample per batch."""
    assert scenario.prepare is not None
    prepared = scenario.prepare(impl)
    call, count = _ainvoker(prepared), prepared.concurrency

    async def batch() -> list[Any]:
        return await asyncio.gather(*(call() for _ in range(count)))

    async def main() -> dict[str, Any]:
        rss_before = _rss_bytes()
        threads_before = threading.active_count()
        with _ThreadPeak() as peak:
            before, start = hits(), _now()
            results = await batch()
            first = _now() - start
            _check(results, prepared, before)
            # a batch of 1,000 can take seconds: one warm-up batch, at least 3 timed
            samples = await ameasure(batch, budget_s, warmups=1, min_samples=3)
        return {
            "samples_ns": samples,
            "first_call_ns": first,
            "concurrency": count,
            "threads_before": threads_before,
            "peak_threads": peak.peak,
            "rss_growth_bytes": max(
                0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss_before
            ),
        }

    return asyncio.run(main())


def _build(scenario: Scenario, impl: str, budget_s: float) -> dict[str, Any]:
    assert scenario.prepare is not None
    prepared = scenario.prepare(impl)
    build = prepared.target
    start = _now()
    agent = build()
    first = _now() - start
    before = hits()
    _check(agent.invoke(new_input()), prepared, before)
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
    is_async = scenario.flavour == "async"

    def runs(layers: int) -> bool:
        agent = chain_agent(impl, layers, is_async=is_async)
        try:
            if is_async:
                asyncio.run(agent.ainvoke(new_input()))
            else:
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
    before = hits()
    result = agent.invoke(new_input())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    _check(result, prepared, before)
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"value": peak, "unit": "bytes", "max_rss_bytes": rss_kib * 1024}


def _onion(scenario: Scenario, impl: str, budget_s: float) -> dict[str, Any]:
    from onion import TARGET_NS, run

    rows = run(quick=budget_s < 0.2)
    worst = max(row["per_layer_ns"] for row in rows)
    return {"value": worst, "unit": "ns per layer", "rows": rows, "target_ns": TARGET_NS}


RUNNERS: dict[str, Callable[[Scenario, str, float], dict[str, Any]]] = {
    "invoke": _invoke,
    "ainvoke": _ainvoke,
    "build": _build,
    "concurrent": _concurrent,
    "depth": _depth,
    "memory": _memory,
    "onion": _onion,
}


def _error_text(exc: BaseException) -> str:
    if _is_recursion(exc):
        return "RecursionError"
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:300]


def measure_one(impl: str, scenario_name: str, budget_s: float) -> dict[str, Any]:
    """One scenario's result: ``status`` ok with its figures, or error with the reason."""
    scenario = SCENARIOS[scenario_name]
    try:
        return {"status": "ok", **RUNNERS[scenario.kind](scenario, impl, budget_s)}
    except Exception as exc:
        return {"status": "error", "error": _error_text(exc)}


def main(impl: str, scenario_names: str, budget_s: float, out: Path) -> int:
    """Run the comma-separated scenarios in turn and write their JSON results to ``out``."""
    results: dict[str, Any] = {}
    for name in scenario_names.split(","):
        results[name] = measure_one(impl, name, budget_s)
        gc.collect()
    out.write_text(json.dumps(results), encoding="utf-8")
    return 0
