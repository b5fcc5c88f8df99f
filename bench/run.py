"""funcware vs LangChain ``create_agent``: the same scenarios, side by side.

Run from the repository root (needs the ``bench`` extra for the LangChain side)::

    pip install -e ".[bench]"
    python bench/run.py                      # every scenario, 2 rounds
    python bench/run.py --quick              # 1 short round of every scenario
    python bench/run.py --groups conversation,tools --rounds 3
    python bench/run.py --rounds 1 --scenarios mw10,wrap50 --budget 0.2
    python bench/run.py --profile mw50       # cProfile of funcware on one scenario

Each (scenario, implementation, round) runs in its own subprocess; within a round the
implementations alternate who goes first. Samples from all rounds are pooled; the table
shows medians, p90 and funcware/LangChain. Results go to ``bench/results/`` as JSON. If
``langchain`` is not importable, its side is skipped with a notice.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE))

from impls import FLOOR, FUNCWARE, IMPLS, LANGCHAIN, available  # noqa: E402

NAMES = {FUNCWARE: "funcware", LANGCHAIN: "LangChain", FLOOR: "LangGraph floor"}
TIMED = ("invoke", "ainvoke", "build", "concurrent")
ONCE = ("depth",)
"""Kinds measured in the first round only (deterministic, or interleaved internally)."""
OWN_PROCESS = ("depth", "memory", "concurrent", "onion")
"""Kinds that get a process of their own (they read the process's peaks, or go deep)."""
CHAINS = ("wrap50", "wrap100", "wrap200")
WITH_MIDDLEWARE = ("mw10", "mw50", "tool_loop", "mw10_async", *CHAINS)
WORKER_TIMEOUT_S = 600


# ---------------------------------------------------------------- running the workers


def _spawn(impl: str, scenarios: list[str], budget: float) -> dict[str, dict[str, Any]]:
    """Run ``scenarios`` one after another in one worker process; a result for each."""
    found = _spawn_worker(impl, scenarios, budget)
    if "status" in found:  # the worker itself failed: the same error for each
        return dict.fromkeys(scenarios, found)
    return found


def _spawn_worker(impl: str, scenarios: list[str], budget: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        command = [sys.executable, str(HERE / "run.py"), "--worker", "--impl", impl]
        command += ["--scenario", ",".join(scenarios), "--budget", str(budget)]
        command += ["--out", str(out)]
        env = {**os.environ, "PYTHONHASHSEED": "0", "LANGSMITH_TRACING": "false"}
        env["LANGCHAIN_TRACING_V2"] = "false"
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, env=env, timeout=WORKER_TIMEOUT_S
            )
        except subprocess.TimeoutExpired:
            return {"status": "error", "error": f"worker timed out after {WORKER_TIMEOUT_S} s"}
        if out.exists():
            return dict(json.loads(out.read_text(encoding="utf-8")))
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return {"status": "error", "error": f"worker exited {done.returncode}: {' | '.join(tail)}"}


def _rotate(items: list[str], by: int) -> list[str]:
    by %= max(len(items), 1)
    return items[by:] + items[:by]


def _quick(result: dict[str, Any]) -> str:
    if result["status"] != "ok":
        return str(result["error"])[:40]
    if "samples_ns" in result:
        return _fmt(statistics.median(result["samples_ns"]))
    return str(result["value"])


def collect(
    scenarios: list[str], impls: list[str], rounds: int, budget: float
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Every worker result: ``runs[scenario][impl]`` is one result per round."""
    from scenarios import SCENARIOS

    runs: dict[str, dict[str, list[dict[str, Any]]]] = {s: {} for s in scenarios}
    # scenarios of one group and the same implementations share a worker process,
    # except kinds that read the process's own peaks
    batches: dict[tuple[str, ...], list[str]] = {}
    for name in scenarios:
        scenario = SCENARIOS[name]
        key = (name,) if scenario.kind in OWN_PROCESS else (scenario.group, *scenario.impls)
        batches.setdefault(key, []).append(name)
    for round_ in range(rounds):
        print(f"round {round_ + 1}/{rounds}", flush=True)
        for batch in batches.values():
            batch = [n for n in batch if round_ == 0 or SCENARIOS[n].kind not in ONCE]
            if not batch:
                continue
            lines: dict[str, list[str]] = {name: [] for name in batch}
            for impl in _rotate([i for i in SCENARIOS[batch[0]].impls if i in impls], round_):
                for name, result in _spawn(impl, batch, budget).items():
                    runs[name].setdefault(impl, []).append(result)
                    lines[name].append(f"{impl} {_quick(result)}")
            for name, line in lines.items():
                print(f"  {name:<20} " + "  ".join(line), flush=True)
    return runs


# ---------------------------------------------------------------- statistics and report


def _percentile(sorted_values: list[float], q: float) -> float:
    if len(sorted_values) == 1:
        return sorted_values[0]
    position = (len(sorted_values) - 1) * q
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def _summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    errors = [r["error"] for r in results if r["status"] != "ok"]
    oks = [r for r in results if r["status"] == "ok"]
    if not oks:
        return {"status": "error", "error": errors[0] if errors else "no result"}
    summary: dict[str, Any] = {"status": "ok", "rounds": len(oks)}
    if errors:
        summary["errors"] = errors
    if "samples_ns" in oks[0]:
        pooled = sorted(s for r in oks for s in r["samples_ns"])
        summary.update(
            median_ns=_percentile(pooled, 0.5),
            p90_ns=_percentile(pooled, 0.9),
            min_ns=pooled[0],
            n=len(pooled),
            round_medians_ns=[statistics.median(r["samples_ns"]) for r in oks],
            first_call_ns=statistics.median(r["first_call_ns"] for r in oks),
        )
        if "concurrency" in oks[0]:
            summary.update(
                concurrency=oks[0]["concurrency"],
                calls_per_s=oks[0]["concurrency"] / (summary["median_ns"] / 1e9),
                peak_threads=max(r["peak_threads"] for r in oks),
                threads_before=min(r["threads_before"] for r in oks),
                rss_growth_bytes=statistics.median(r["rss_growth_bytes"] for r in oks),
            )
    else:
        summary.update(
            value=statistics.median(r["value"] for r in oks),
            unit=oks[0]["unit"],
            details=[{k: v for k, v in r.items() if k not in ("status",)} for r in oks],
        )
    return summary


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _median(summary: dict[str, Any] | None) -> float | None:
    if summary is None or summary["status"] != "ok":
        return None
    return summary.get("median_ns", summary.get("value"))


def _slope(points: dict[int, float]) -> float | None:
    """Least-squares slope of cost against layer count."""
    if len(points) < 2:
        return None
    xs, ys = list(points), list(points.values())
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def derive(table: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per-layer and per-middleware costs from the scenario medians."""
    from scenarios import SCENARIOS

    derived: dict[str, Any] = {}
    points: dict[str, dict[int, float]] = {}
    for impl in (FUNCWARE, LANGCHAIN):
        points[impl] = {}
        for name in ("no_middleware", *CHAINS):  # no_middleware is the 0-layer chain
            layers = SCENARIOS[name].layers or 0
            median = _median(table.get(name, {}).get("results", {}).get(impl))
            if layers is not None and median is not None:
                points[impl][layers] = median
    common = sorted(set(points[FUNCWARE]) & set(points[LANGCHAIN]))
    wrap: dict[str, Any] = {"points_ns": {i: points[i] for i in points}, "common_layers": common}
    for impl in (FUNCWARE, LANGCHAIN):
        pts = points[impl]
        wrap[impl] = {
            "per_layer_ns_all_points": _slope(pts),
            "per_layer_ns_common_points": _slope({k: pts[k] for k in common if k in pts}),
            "segments_ns": {
                f"{a}->{b}": (pts[b] - pts[a]) / (b - a)
                for a, b in zip(sorted(pts), sorted(pts)[1:], strict=False)
            },
        }
    wrap["ratio"] = _ratio(
        wrap[FUNCWARE]["per_layer_ns_common_points"], wrap[LANGCHAIN]["per_layer_ns_common_points"]
    )
    fw = points[FUNCWARE]
    averages = {n: (fw[n] - fw[0]) / n for n in fw if n and 0 in fw}
    wrap[FUNCWARE]["average_per_layer_ns"] = averages
    # superlinear growth (say O(n^2) copying) makes the average per layer climb with n
    wrap["funcware_growth"] = _ratio(averages.get(200), averages.get(50))
    derived["wrap_layer"] = wrap

    mixed: dict[str, Any] = {}
    for impl in (FUNCWARE, LANGCHAIN):
        m10 = _median(table.get("mw10", {}).get("results", {}).get(impl))
        m50 = _median(table.get("mw50", {}).get("results", {}).get(impl))
        mixed[impl] = (m50 - m10) / 40 if m10 is not None and m50 is not None else None
    mixed["ratio"] = _ratio(mixed[FUNCWARE], mixed[LANGCHAIN])
    derived["per_mixed_middleware_ns"] = mixed
    return derived


def _target(
    name: str, goal: str, value: float | None, limit: float, below: bool, note: str = ""
) -> dict[str, Any]:
    met = None if value is None else (value <= limit if below else value >= limit)
    return {"target": name, "goal": goal, "value": value, "met": met, "note": note}


def targets(table: dict[str, dict[str, Any]], derived: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's targets, each met, missed, or not measurable (``met`` is ``None``)."""
    found = []
    for name in WITH_MIDDLEWARE:
        if name not in table:
            continue
        entry = table[name]
        note = ""
        lc = entry["results"].get(LANGCHAIN)
        if lc is not None and lc["status"] != "ok":
            note = f"LangChain cannot run it ({lc['error']})"
        found.append(
            _target(
                f"{name}: funcware/LangChain median", "<= 0.8", entry.get("ratio"), 0.8, True, note
            )
        )
    wrap = derived["wrap_layer"]
    found.append(
        _target(
            "wrap_model_call layer: funcware/LangChain per-layer cost",
            "<= 0.1",
            wrap["ratio"],
            0.1,
            True,
            f"slope over layer counts both ran: {wrap['common_layers']}",
        )
    )
    if "no_middleware" in table:
        found.append(
            _target(
                "no middleware: funcware/LangGraph floor",
                "<= 1.1",
                table["no_middleware"].get("ratio_floor"),
                1.1,
                True,
            )
        )
    for name, goal in (("deepest_sync_chain", 480), ("deepest_async_chain", 5000)):
        if name in table:
            fw = table[name]["results"].get(FUNCWARE)
            flavour = name.split("_")[1]
            found.append(
                _target(
                    f"deepest {flavour} wrap chain (layers)", f">= {goal}", _median(fw), goal, False
                )
            )
    onion = table.get("onion_layers", {}).get("results", {}).get(FUNCWARE)
    if onion is not None and onion["status"] == "ok":
        for row in _onion_rows(onion):
            if row["flavour"].startswith("async, new task"):
                continue  # the cost of fresh stacks, shown beside the goal rows
            found.append(
                _target(
                    f"onion's own cost per layer, {row['flavour']}, {row['layers']} layers (µs)",
                    "<= 0.3",
                    row["per_layer_ns"] / 1e3,
                    0.3,
                    True,
                    "over nested calls of the same functions",
                )
            )
    from options import BASELINE, VARIANTS

    base = _median(table.get(f"opt_{BASELINE}", {}).get("results", {}).get(FUNCWARE))
    for name in VARIANTS:
        if name == BASELINE or f"opt_{name}" not in table:
            continue
        other = _median(table[f"opt_{name}"]["results"].get(FUNCWARE))
        found.append(
            _target(
                f"opt_{name}: funcware median / opt_{BASELINE}",
                "<= 1.05",
                _ratio(other, base),
                1.05,
                True,
                "an unused option costs nothing (within noise)",
            )
        )
    if "build50" in table:
        found.append(
            _target(
                "build50: funcware/LangChain median",
                "<= 0.8",
                table["build50"].get("ratio"),
                0.8,
                True,
            )
        )
    if wrap["funcware_growth"] is not None:
        found.append(
            _target(
                "linear growth: funcware cost per layer at 200 / at 50 layers",
                "<= 1.33",
                wrap["funcware_growth"],
                1.33,
                True,
                "(t(n) - t(0)) / n; above 1 means superlinear",
            )
        )
    return found


def _fmt(ns: float | None) -> str:
    if ns is None:
        return "-"
    if ns >= 1e7:
        return f"{ns / 1e6:.0f} ms"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if abs(ns) < 1e4:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns / 1e3:.0f} µs"


def _cell(summary: dict[str, Any] | None) -> str:
    if summary is None:
        return "-"
    if summary["status"] != "ok":
        return str(summary["error"]).split(":")[0]
    if "calls_per_s" in summary:
        return (
            f"{_fmt(summary['median_ns'])} ({_fmt(summary['p90_ns'])}); "
            f"{summary['calls_per_s']:.0f} calls/s, {summary['peak_threads']} threads, "
            f"+{summary['rss_growth_bytes'] / 2**20:.0f} MiB"
        )
    if "median_ns" in summary:
        return f"{_fmt(summary['median_ns'])} ({_fmt(summary['p90_ns'])})"
    if summary["unit"] == "bytes":
        return f"{summary['value'] / 1024:.0f} KiB"
    if summary["unit"] == "ns per layer":
        worst = max(
            row["per_layer_ns"] for row in _onion_rows(summary) if "task" not in row["flavour"]
        )
        return f"worst {worst / 1e3:.3f} µs/layer over {summary['rounds']} rounds"
    capped = any(d.get("capped") for d in summary.get("details", []))
    return f"{'>= ' if capped else ''}{summary['value']:.0f} layers"


def _onion_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The onion's rows, each from its best batches over every round (``onion.combine``)."""
    from onion import combine

    return combine([detail["rows"] for detail in summary["details"]])


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}×"  # noqa: RUF001


def report(data: dict[str, Any]) -> str:
    """The Markdown tables: scenarios, derived per-layer costs, targets."""
    from scenarios import SCENARIOS

    lines: list[str] = []
    groups: dict[str, list[str]] = {}
    for name in data["scenarios"]:
        group = SCENARIOS[name].group if name in SCENARIOS else "core"
        groups.setdefault(group, []).append(name)
    for group, names in groups.items():
        if lines:
            lines.append("")
        lines += [
            f"| {group} | funcware median (p90) | LangChain median (p90) | funcware/LangChain "
            "| LangGraph floor median (p90) | funcware/floor |",
            "|---|---|---|---|---|---|",
        ]
        for name in names:
            entry = data["scenarios"][name]
            res = entry["results"]
            lines.append(
                f"| {name}: {entry['title']} | {_cell(res.get(FUNCWARE))} "
                f"| {_cell(res.get(LANGCHAIN))} | {_x(entry.get('ratio'))} "
                f"| {_cell(res.get(FLOOR))} | {_x(entry.get('ratio_floor'))} |"
            )
    onion = data["scenarios"].get("onion_layers", {}).get("results", {}).get(FUNCWARE)
    if onion is not None and onion["status"] == "ok":
        from onion import report as onion_report

        lines += ["", onion_report(_onion_rows(onion))]
    wrap = data["derived"]["wrap_layer"]
    mixed = data["derived"]["per_mixed_middleware_ns"]
    fw, lc = wrap[FUNCWARE], wrap[LANGCHAIN]
    lines += [
        "",
        "| derived | funcware | LangChain | funcware/LangChain |",
        "|---|---|---|---|",
        f"| wrap_model_call layer (slope over {wrap['common_layers']}) "
        f"| {_fmt(fw['per_layer_ns_common_points'])} | {_fmt(lc['per_layer_ns_common_points'])} "
        f"| {_x(wrap['ratio'])} |",
        f"| wrap_model_call layer (fit over every count that ran) "
        f"| {_fmt(fw['per_layer_ns_all_points'])} | {_fmt(lc['per_layer_ns_all_points'])} | |",
    ]
    for n, average in fw.get("average_per_layer_ns", {}).items():
        lines.append(f"| wrap_model_call layer, average over 0->{n} | {_fmt(average)} | | |")
    for segment in fw["segments_ns"]:
        lines.append(
            f"| wrap_model_call layer, segment {segment} | {_fmt(fw['segments_ns'][segment])} "
            f"| {_fmt(lc['segments_ns'].get(segment))} | |"
        )
    lines.append(
        f"| one mixed middleware ((mw50 - mw10) / 40) | {_fmt(mixed[FUNCWARE])} "
        f"| {_fmt(mixed[LANGCHAIN])} | {_x(mixed['ratio'])} |"
    )
    lines += ["", "| target | goal | measured | met |", "|---|---|---|---|"]
    for t in data["targets"]:
        met = {True: "yes", False: "**no**", None: "n/a"}[t["met"]]
        value = "-" if t["value"] is None else f"{t['value']:.3g}"
        note = f" ({t['note']})" if t["note"] else ""
        lines.append(f"| {t['target']} | {t['goal']} | {value} | {met}{note} |")
    return "\n".join(lines)


# ---------------------------------------------------------------- machine and entry points


def _load() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (other work on the machine skews timings)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _git() -> dict[str, Any] | None:
    """The commit benchmarked, and whether library code had uncommitted changes."""
    root = HERE.parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "hooks", "compose", "funcware"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return {"commit": commit, "library_dirty": bool(dirty)}


def machine() -> dict[str, Any]:
    """The machine and the versions under test."""
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor() or "unknown"
    versions: dict[str, str | None] = {}
    for dist in ("funcware", "langchain", "langgraph", "langchain-core", "langgraph-prebuilt"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    return {
        "funcware_git": _git(),
        "nproc": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu": cpu,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "versions": versions,
    }


def profile(scenario_name: str, impl: str, iterations: int, out: str | None) -> int:
    """Run one invoke scenario in this process under cProfile and print the top entries."""
    import cProfile
    import pstats

    from scenarios import SCENARIOS, new_input

    scenario = SCENARIOS[scenario_name]
    if scenario.kind != "invoke" or scenario.prepare is None:
        print(f"--profile needs an invoke scenario, not {scenario.kind!r}", file=sys.stderr)
        return 2
    agent = scenario.prepare(impl).target
    for _ in range(20):
        agent.invoke(new_input())
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(iterations):
        agent.invoke(new_input())
    profiler.disable()
    if out:
        profiler.dump_stats(out)
    stats = pstats.Stats(profiler).strip_dirs()
    print(f"{impl} {scenario_name}: {iterations} invocations")
    stats.sort_stats("tottime").print_stats(30)
    stats.sort_stats("cumulative").print_stats(40)
    return 0


def parse(argv: list[str] | None) -> argparse.Namespace:
    from scenarios import SCENARIOS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--scenarios", default=None, help="comma-separated (default: all)")
    parser.add_argument(
        "--groups",
        default=None,
        help="comma-separated: " + ",".join(dict.fromkeys(s.group for s in SCENARIOS.values())),
    )
    parser.add_argument(
        "--quick", action="store_true", help="one short round (--rounds 1 --budget 0.05)"
    )
    parser.add_argument(
        "--impls", default=",".join(IMPLS), help="comma-separated: " + ",".join(IMPLS)
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=0.6,
        help="seconds of timing per scenario, implementation and round",
    )
    parser.add_argument("--json", help="where to write the results (default bench/results/)")
    parser.add_argument("--report", metavar="JSON", help="print the tables of a results file")
    parser.add_argument("--profile", metavar="SCENARIO", help="cProfile one scenario in-process")
    parser.add_argument("--iterations", type=int, default=300, help="with --profile")
    parser.add_argument("--pstats", help="with --profile: also dump the stats to this file")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--impl", default=FUNCWARE, help=argparse.SUPPRESS)
    parser.add_argument("--scenario", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.budget = 1, 0.05
    groups = set(args.groups.split(",")) if args.groups else None
    if args.scenarios is None:
        args.scenarios = ",".join(
            n for n, s in SCENARIOS.items() if groups is None or s.group in groups
        )
    for name in args.scenarios.split(","):
        if name not in SCENARIOS:
            parser.error(f"unknown scenario {name!r}; choose from {', '.join(SCENARIOS)}")
    for impl in args.impls.split(","):
        if impl not in IMPLS:
            parser.error(f"unknown implementation {impl!r}; choose from {', '.join(IMPLS)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.worker:
        from worker import main as work

        return work(args.impl, args.scenario, args.budget, Path(args.out))
    if args.profile:
        return profile(args.profile, args.impl, args.iterations, args.pstats)
    if args.report:
        earlier = json.loads(Path(args.report).read_text(encoding="utf-8"))
        earlier["derived"] = derive(earlier["scenarios"])
        earlier["targets"] = targets(earlier["scenarios"], earlier["derived"])
        print(report(earlier))
        return 0

    impls = args.impls.split(",")
    for impl in list(impls):
        if not available(impl):
            print(
                f"NOTICE: {impl} is not importable here; its side is skipped. "
                "Install it with: pip install -e '.[bench]'",
                flush=True,
            )
            impls.remove(impl)
    scenarios = []
    from scenarios import SCENARIOS

    for name in args.scenarios.split(","):
        needs = SCENARIOS[name].requires
        if needs is not None and not available(needs):
            print(f"NOTICE: {name} needs {needs}, which is not importable; skipped.", flush=True)
            continue
        scenarios.append(name)
    started, load_before = time.perf_counter(), _load()
    runs = collect(scenarios, impls, args.rounds, args.budget)

    table: dict[str, dict[str, Any]] = {}
    for name in scenarios:
        results = {impl: _summary(r) for impl, r in runs[name].items()}
        fw, lc, floor = (_median(results.get(i)) for i in (FUNCWARE, LANGCHAIN, FLOOR))
        table[name] = {
            "title": SCENARIOS[name].title,
            "kind": SCENARIOS[name].kind,
            "results": results,
            "ratio": _ratio(fw, lc),
            "ratio_floor": _ratio(fw, floor),
        }
    derived = derive(table)
    data: dict[str, Any] = {
        "meta": {
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "command": " ".join([Path(sys.executable).name, *sys.argv]),
            "rounds": args.rounds,
            "budget_s": args.budget,
            "impls": impls,
            "skipped": [i for i in args.impls.split(",") if i not in impls],
            "duration_s": round(time.perf_counter() - started, 1),
            "load_average_before_after": [load_before, _load()],
            "machine": machine(),
        },
        "scenarios": table,
        "derived": derived,
    }
    data["targets"] = targets(table, derived)
    text = report(data)
    print()
    print(text)
    if args.json:
        path = Path(args.json)
    else:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        path = RESULTS / f"bench-{stamp}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    print(f"\nwrote {path} ({data['meta']['duration_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
