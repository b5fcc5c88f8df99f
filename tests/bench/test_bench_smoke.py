"""bench/run.py runs: one round of one scenario, funcware only, no langchain needed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

RUN = Path(__file__).resolve().parents[2] / "bench" / "run.py"
ARGS = ["--rounds", "1", "--scenarios", "no_middleware", "--budget", "0.05"]


def _bench(tmp_path: Path, *args: str, hide_langchain: bool = False) -> tuple[str, dict[str, Any]]:
    out = tmp_path / "bench.json"
    argv = [str(RUN), *ARGS, "--json", str(out), *args]
    if hide_langchain:  # as if langchain were not installed, whether or not it is
        code = (
            "import runpy, sys; sys.modules['langchain'] = None; "
            f"sys.argv = {argv!r}; runpy.run_path({str(RUN)!r}, run_name='__main__')"
        )
        command = [sys.executable, "-c", code]
    else:
        command = [sys.executable, *argv]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, json.loads(out.read_text(encoding="utf-8"))


def _funcware_result(data: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = data["scenarios"]["no_middleware"]["results"]["funcware"]
    assert result["status"] == "ok", result
    assert result["median_ns"] > 0
    return result


def test_one_round_of_one_scenario_for_funcware(tmp_path: Path) -> None:
    stdout, data = _bench(tmp_path, "--impls", "funcware")
    _funcware_result(data)
    assert "no_middleware" in stdout
    assert data["meta"]["machine"]["python"]


def test_langchain_side_is_skipped_with_a_notice_when_not_importable(tmp_path: Path) -> None:
    stdout, data = _bench(tmp_path, "--impls", "funcware,langchain", hide_langchain=True)
    assert "NOTICE: langchain is not importable" in stdout
    assert data["meta"]["skipped"] == ["langchain"]
    _funcware_result(data)
    assert "langchain" not in data["scenarios"]["no_middleware"]["results"]


def test_quick_mode_runs_each_kind_of_new_dimension_for_funcware(tmp_path: Path) -> None:
    names = "conv10_ckpt,tools10,loop1,build_mw1,opt_decorated,opt_defaults,concurrent10"
    out = tmp_path / "bench.json"
    command = [sys.executable, str(RUN), "--quick", "--impls", "funcware"]
    command += ["--scenarios", names, "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    for name in names.split(","):
        result = data["scenarios"][name]["results"]["funcware"]
        assert result["status"] == "ok", (name, result)
        assert result["median_ns"] > 0
    concurrent = data["scenarios"]["concurrent10"]["results"]["funcware"]
    assert concurrent["calls_per_s"] > 0 and concurrent["peak_threads"] >= 1
    targets = {t["target"]: t for t in data["targets"]}
    assert "opt_defaults: funcware median / opt_decorated" in targets
    assert "| options |" in done.stdout and "| concurrency |" in done.stdout


def test_the_onion_bench_reports_every_row_and_the_bare_coroutine_chain() -> None:
    onion = RUN.parent / "onion.py"
    done = subprocess.run(
        [sys.executable, str(onion), "--quick"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line.split("|")[1:-1] for line in done.stdout.splitlines()[2:]]
    flavours = [(cells[0].strip(), cells[1].strip()) for cells in rows]
    sizes = ("10", "100", "1000")
    expected = [(f, n) for f in ("sync", "async") for n in sizes]
    assert flavours[:6] == expected
    for cells in rows:
        per_layer, bare = cells[5].strip(), cells[7].strip()
        assert per_layer.endswith(" µs")
        # Only async onions hold a coroutine of their own per layer.
        assert bare.endswith(" µs") if cells[0].strip().startswith("async") else bare == ""


def test_the_onion_rows_of_several_rounds_keep_each_ones_best_batch() -> None:
    sys.path.insert(0, str(RUN.parent))
    try:
        from onion import combine
    finally:
        sys.path.remove(str(RUN.parent))

    def row(onion: float, floor: float, bare: float | None = None) -> dict[str, Any]:
        found: dict[str, Any] = {"flavour": "async", "layers": 10, "onion_ns": onion}
        found.update(floor_ns=floor, per_layer_ns=(onion - floor) / 10)
        if bare is not None:
            found["bare_ns"] = bare
        return found

    # Round 1 was loaded for the onion, round 2 for the floor: each keeps its own best.
    (combined,) = combine([[row(900, 500, 700)], [row(800, 600, 650)]])
    assert (combined["onion_ns"], combined["floor_ns"], combined["bare_ns"]) == (800, 500, 650)
    assert combined["per_layer_ns"] == 30
    assert combined["bare_per_layer_ns"] == 15
    sync = {"flavour": "sync", "layers": 100, "onion_ns": 300.0, "floor_ns": 100.0}
    (only,) = combine([[sync]])
    assert only["per_layer_ns"] == 2 and "bare_per_layer_ns" not in only


def test_the_bridge_bench_prints_a_row_per_thread_bound() -> None:
    script = Path(__file__).resolve().parents[2] / "bench" / "bridge.py"
    command = [sys.executable, str(script), "--runs", "12", "--sleep", "5"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = done.stdout.splitlines()[2:]
    labels = [row[:34].strip() for row in rows]
    assert labels == ["stdlib bound min(32, cpus + 4)", "funcware default", "one thread per run"]
    threads, wall, rate, _ideal = zip(*(row[34:].split() for row in rows), strict=True)
    assert threads[1:] == ("40", "12")
    assert all(float(w) > 0 and float(r) > 0 for w, r in zip(wall, rate, strict=True))
