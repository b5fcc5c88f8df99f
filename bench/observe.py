"""What observing a run costs: nothing when off, and how much per layer when recording.

Each row compares two worker processes (``PYTHONHASHSEED=0``) that time batches of
invokes in turn (about 50 ms each, 40 pairs by default), so load on the machine hits both
sides alike; the ratio is the median of the per-pair ratios.

- **off**: ``mw10`` (10 mixed no-op decorated middleware, one model call, as in
  ``bench/run.py``) with nothing recording, on this tree and on a baseline commit
  (default: the merge base with ``main``, extracted with ``git archive``). The goal: this
  tree at most 1.02x the baseline.
- **on, funcware**: ``wrap50`` (50 no-op ``wrap_model_call`` layers) inside
  ``funcware.observe.record()`` and without; the difference per layer. Also ``mw10``
  per recorded layer.
- **on, LangChain**: LangChain 1.5.2's ``wrap50`` with LangSmith tracing on (every wrap
  layer is a ``traceable`` run; the client sends nothing, so no network is timed) and off;
  the difference per layer. Skipped with a notice without the ``langchain`` extra.

    python bench/observe.py                    # 40 batch pairs per row
    python bench/observe.py --batches 10 --baseline HEAD~3
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OFF_GOAL = 1.02

# ----------------------------------------------------------------------------- worker


def _agent(case: str) -> Any:
    sys.path.insert(0, str(HERE))
    from scenarios import SCENARIOS, chain_agent

    impl, name = case.split(":")[:2]
    if name == "mw10":
        scenario = SCENARIOS["mw10"]
        assert scenario.prepare is not None
        return scenario.prepare(impl).target
    return chain_agent(impl, int(name.removeprefix("wrap")))


def _serve(case: str, batch_s: float) -> None:
    """Time batches of invokes of ``case`` (``impl:scenario:off|on``), one per input line.

    Prints a first line with what one invoke records and which funcware is imported, then
    for every line read, the ns per invoke of a batch of about ``batch_s`` seconds.
    """
    agent = _agent(case)

    def call() -> Any:
        return agent.invoke({"messages": [("user", "What is 1 + 1?")]})

    import funcware

    recorded = 0
    manager: Any = contextlib.nullcontext()
    if case.endswith(":on"):
        if case.startswith("funcware"):
            from funcware.observe import record

            with record() as run:
                call()
            recorded = len(run.layers)
            manager = record()
        else:
            manager = _langsmith_tracing()
    with manager:
        for _ in range(20):  # warm up
            call()
        start = time.perf_counter_ns()
        call()
        count = max(1, int(batch_s * 1e9 / max(time.perf_counter_ns() - start, 1)))
        where = str(Path(funcware.__file__).resolve().parent.parent)
        print(json.dumps({"recorded": recorded, "funcware": where, "count": count}), flush=True)
        for _line in sys.stdin:
            start = time.perf_counter_ns()
            for _ in range(count):
                call()
            print((time.perf_counter_ns() - start) / count, flush=True)


def _langsmith_tracing() -> Any:
    """LangSmith tracing on, with a client whose runs go nowhere (no network)."""
    from langsmith import Client
    from langsmith.run_helpers import tracing_context

    class NullClient(Client):
        def create_run(self, *args: Any, **kwargs: Any) -> None:
            return None

        def update_run(self, *args: Any, **kwargs: Any) -> None:
            return None

    client = NullClient(api_url="http://127.0.0.1:9", api_key="offline", auto_batch_tracing=False)
    return tracing_context(enabled=True, client=client, project_name="bench")


# ----------------------------------------------------------------------------- driver


def _baseline_tree(ref: str, into: Path) -> Path:
    """``ref``'s files (``git archive``) under ``into``; the path to put on ``sys.path``."""
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", ref],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(data)) as archive:
        archive.extractall(into, filter="tar" if hasattr(tarfile, "tar_filter") else None)
    return into


class _Side:
    """A worker process serving batches of one case."""

    def __init__(self, case: str, batch_s: float, tree: Path | None) -> None:
        env = {**os.environ, "PYTHONHASHSEED": "0", "LANGSMITH_TRACING": "false"}
        if tree is not None:  # the baseline's own funcware comes first on the path
            env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")])
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", case, "--batch", str(batch_s)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tree or ROOT,
        )
        assert self.proc.stdout is not None
        self.info: dict[str, Any] = json.loads(self.proc.stdout.readline())
        self.batches: list[float] = []

    def batch(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        self.batches.append(float(self.proc.stdout.readline()))

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def compare(a: _Side, b: _Side, batches: int) -> float:
    """Alternate batches of ``a`` and ``b``; the median of the per-pair ratios a/b."""
    for index in range(batches):
        first, second = (a, b) if index % 2 == 0 else (b, a)
        first.batch()
        second.batch()
    return statistics.median(x / y for x, y in zip(a.batches, b.batches, strict=True))


def _has_langchain() -> bool:
    import importlib.util

    return importlib.util.find_spec("langchain") is not None


def measure_all(batches: int, batch_s: float, baseline: str) -> list[str]:
    """The table's rows: each compares two worker processes batch by batch."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tree = _baseline_tree(baseline, Path(tmp))
        sides = [
            _Side("funcware:mw10:off", batch_s, None),
            _Side("funcware:mw10:off", batch_s, tree),
        ]
        ratio = compare(sides[0], sides[1], batches)
        if sides[1].info["funcware"] != str(tree.resolve()):
            raise RuntimeError(f"the baseline imported {sides[1].info['funcware']}")
        off, base = (statistics.median(side.batches) / 1e3 for side in sides)
        rows.append(
            f"| off: mw10, this tree vs {baseline} | {off:.0f} µs | {base:.0f} µs (baseline) "
            f"| {ratio:.3f}x | <= {OFF_GOAL}x: {'yes' if ratio <= OFF_GOAL else '**no**'} |"
        )
        for side in sides:
            side.close()
    cases = [("funcware", "wrap50"), ("funcware", "mw10")]
    if _has_langchain():
        cases.append(("langchain", "wrap50"))
    for impl, name in cases:
        on, off_side = _Side(f"{impl}:{name}:on", batch_s, None), None
        off_side = _Side(f"{impl}:{name}:off", batch_s, None)
        ratio = compare(on, off_side, batches)
        layers = on.info["recorded"] if impl == "funcware" else 50
        plain = statistics.median(off_side.batches)
        extra = (ratio - 1) * plain / layers / 1e3
        label = "funcware record()" if impl == "funcware" else "LangChain 1.5.2, LangSmith tracing"
        rows.append(
            f"| on: {label}, {name} ({layers} layers) | {plain / 1e3:.0f} µs off "
            f"| {ratio * plain / 1e3:.0f} µs on | {ratio:.3f}x | {extra:.2f} µs per layer |"
        )
        on.close()
        off_side.close()
    if not _has_langchain():
        rows.append("| on: LangChain | - | - | - | skipped: the `langchain` extra is missing |")
    return rows


def report(rows: list[str]) -> str:
    """The rows as a Markdown table."""
    return "\n".join(["| row | this | other | ratio | |", "|---|---|---|---|---|", *rows])


def _merge_base() -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "merge-base", "HEAD", "main"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip()[:12] if done.returncode == 0 else "HEAD"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=40, help="batches per side and row")
    parser.add_argument("--batch", type=float, default=0.05, help="seconds per batch")
    parser.add_argument("--baseline", default=None, help="git ref (default: merge base with main)")
    parser.add_argument("--serve", metavar="CASE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        _serve(args.serve, args.batch)
        return 0
    baseline = args.baseline or _merge_base()
    print(report(measure_all(args.batches, args.batch, baseline)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
