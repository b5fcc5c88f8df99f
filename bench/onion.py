"""The onion's own cost per layer, over plain nested function calls, sync and async.

No agent and no LangGraph: ``layers`` no-op ``wrap_model_call`` functions run once
through funcware's onion (``build_sync``/``build_async``, as ``create_agent`` builds it)
and once through the floor, a chain of handlers built once in which each handler just
calls the next function (``lambda r: f(r, next_handler)``): what any onion must cost
at least. The difference divided by ``layers`` is the onion's own cost per layer.

Async rows also time a *bare* chain: each handler an ``async def`` that only awaits the
next function. Any onion that checks what a layer returned must hold a frame of its own
between two layers, which on CPython is a coroutine, so the bare chain is the least such
an onion can cost; ``bare`` is its cost per layer over the floor, the part of the goal
that bookkeeping cannot win back.

The layers are ``return handler(request)``. The onion gives every layer the same check
of what it returned, so these rows are the cost of that check and the onion's bookkeeping
(the floor runs the same functions).

Both run at a recursion limit of 10,000, since the floor needs two frames a layer and
cannot run 1,000 layers at the default limit (where funcware's onion holds 480 layers,
sync or async: ``tests/compose/test_onion_depth.py`` checks it).

    python bench/onion.py                 # 10, 100, 1000 layers, sync and async
    python bench/onion.py --quick         # fewer repetitions (the smoke test)
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from funcware import ModelRequest, ModelResponse, wrap_model_call
from funcware.compose.wraps.onion import build_async, build_sync
from funcware.compose.wraps.results import MODEL_CALLS
from funcware.hooks.middleware import hook_impls

__all__ = ["LAYERS", "TARGET_NS", "main", "measure_onion"]

LAYERS = (10, 100, 1000)
TARGET_NS = 500.0
"""The goal: at most 0.5 µs per checked layer over nested calls."""

RESPONSE = ModelResponse(result=[AIMessage("done")])


def _sync_layer(request: Any, handler: Callable[[Any], Any]) -> Any:
    return handler(request)


async def _async_layer(request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
    return await handler(request)


def _copy(func: Callable[..., Any]) -> Callable[..., Any]:
    import types

    return types.FunctionType(func.__code__, func.__globals__, func.__name__)


def _impls(layers: int, *, is_async: bool) -> list[Any]:
    func = _async_layer if is_async else _sync_layer
    middleware = [wrap_model_call(name=f"wrap_{i}")(_copy(func)) for i in range(layers)]
    return [hook_impls(m)["wrap_model_call"] for m in middleware]


def _floor_sync(funcs: list[Callable[..., Any]]) -> Callable[[Any], Any]:
    def tail(request: Any) -> Any:
        return RESPONSE

    handler: Callable[[Any], Any] = tail
    for func in reversed(funcs):
        handler = (lambda f, h: lambda r: f(r, h))(func, handler)
    return handler


def _floor_async(funcs: list[Callable[..., Any]]) -> Callable[[Any], Awaitable[Any]]:
    async def tail(request: Any) -> Any:
        return RESPONSE

    handler: Callable[[Any], Awaitable[Any]] = tail
    for func in reversed(funcs):
        handler = (lambda f, h: lambda r: f(r, h))(func, handler)
    return handler


def _bare_async(funcs: list[Callable[..., Any]]) -> Callable[[Any], Awaitable[Any]]:
    """One coroutine of its own per layer and nothing else: the least a checking onion costs."""

    async def tail(request: Any) -> Any:
        return RESPONSE

    def link(func: Callable[..., Any], after: Callable[[Any], Any]) -> Callable[[Any], Any]:
        async def handler(request: Any) -> Any:
            return await func(request, after)

        return handler

    handler: Callable[[Any], Awaitable[Any]] = tail
    for func in reversed(funcs):
        handler = link(func, handler)
    return handler


def _batch(call: Callable[[], object], inner: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(inner):
        call()
    return (time.perf_counter_ns() - start) / inner


async def _abatch(call: Callable[[], Awaitable[object]], inner: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(inner):
        await call()
    return (time.perf_counter_ns() - start) / inner


def _best(onion: list[float], floor: list[float]) -> dict[str, float]:
    """The fastest batch of each: on a shared machine, load only ever adds time."""
    best_onion, best_floor = min(onion), min(floor)
    return {"onion_ns": best_onion, "floor_ns": best_floor}


def measure_onion(layers: int, *, is_async: bool, rounds: int = 40) -> dict[str, float]:
    """Onion and floor ns per call (best batch), and the onion's own cost per layer.

    The floor and the onion alternate batch by batch (about 2 ms each) so that load on
    the machine hits both alike.
    """
    impls = _impls(layers, is_async=is_async)
    request = ModelRequest(model=None, messages=[HumanMessage("hi")])  # type: ignore[arg-type]
    inner = max(2, 4_000 // layers)
    onion_ns: list[float] = []
    floor_ns: list[float] = []
    bare_ns: list[float] = []
    if is_async:
        funcs = [impl.async_ for impl in impls]
        aonion = build_async(impls, MODEL_CALLS)
        afloor = _floor_async(funcs)
        abare = _bare_async(funcs)

        async def atail(r: Any) -> Any:
            return RESPONSE

        async def both() -> None:
            assert (await aonion(request, atail))[0] is RESPONSE
            assert (await afloor(request)) is RESPONSE
            assert (await abare(request)) is RESPONSE
            for _ in range(rounds):
                onion_ns.append(await _abatch(lambda: aonion(request, atail), inner))
                floor_ns.append(await _abatch(lambda: afloor(request), inner))
                bare_ns.append(await _abatch(lambda: abare(request), inner))

        asyncio.run(both())
    else:
        sonion = build_sync(impls, MODEL_CALLS)
        sfloor = _floor_sync([impl.sync for impl in impls])

        def tail(r: Any) -> Any:
            return RESPONSE

        assert sonion(request, tail)[0] is RESPONSE
        assert sfloor(request) is RESPONSE
        for _ in range(rounds):
            onion_ns.append(_batch(lambda: sonion(request, tail), inner))
            floor_ns.append(_batch(lambda: sfloor(request), inner))
    found = _best(onion_ns, floor_ns)
    if bare_ns:
        found["bare_ns"] = min(bare_ns)
    return _per_layer(found, layers)


def _per_layer(found: dict[str, float], layers: int) -> dict[str, float]:
    """``found`` (best onion, floor and bare ns) with the costs per layer over the floor."""
    found["per_layer_ns"] = (found["onion_ns"] - found["floor_ns"]) / layers
    if "bare_ns" in found:
        found["bare_per_layer_ns"] = (found["bare_ns"] - found["floor_ns"]) / layers
    return found


def combine(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The rows of several runs (one per bench round) as one: each the best batch of all.

    Load on the machine only ever adds time, and on a shared machine it comes and goes
    over minutes, longer than one run takes; so the onion, the floor and the bare chain
    each keep their fastest batch over every round, and the costs per layer are computed
    from those.
    """
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    for run_rows in runs:
        for row in run_rows:
            key = (row["flavour"], row["layers"])
            best = rows.setdefault(key, dict(row))
            for field in ("onion_ns", "floor_ns", "bare_ns"):
                if field in row:
                    best[field] = min(best[field], row[field])
    return [_per_layer(row, row["layers"]) for row in rows.values()]


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Every (flavour, layers) measurement."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))  # the floor needs 2 frames a layer
    rounds = 5 if quick else 40
    try:
        rows = []
        for is_async in (False, True):
            for layers in LAYERS:
                found = measure_onion(layers, is_async=is_async, rounds=rounds)
                flavour = "async" if is_async else "sync"
                rows.append({"flavour": flavour, "layers": layers, **found})
        return rows
    finally:
        sys.setrecursionlimit(limit)


def _bare(row: dict[str, Any]) -> str:
    bare = row.get("bare_per_layer_ns")
    return "" if bare is None else f"{bare / 1e3:.3f} µs"


def report(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| onion | layers | funcware onion | nested calls (floor) | onion/floor "
        "| own cost per layer | goal <= 0.5 µs | bare coroutine per layer |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        met = "yes" if row["per_layer_ns"] <= TARGET_NS else "**no**"
        lines.append(
            f"| {row['flavour']} | {row['layers']} | {row['onion_ns'] / 1e3:.1f} µs "
            f"| {row['floor_ns'] / 1e3:.1f} µs | {row['onion_ns'] / row['floor_ns']:.2f}× "  # noqa: RUF001
            f"| {row['per_layer_ns'] / 1e3:.3f} µs | {met} | {_bare(row)} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    print(report(run(args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
