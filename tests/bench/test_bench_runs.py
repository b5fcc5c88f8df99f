"""bench/runs.py runs (quick) and prints, in one run, every row for invoke and ainvoke (the
wrap_agent_call layer, the per-run switches, the pairing check and its worst case, the bridge
and the control) and its verdict on the 2% bound."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "runs.py"

ROWS = (
    "wrap_agent_call",
    "per-run switch (wrap)",
    "per-run switch (node)",
    "pairing check (fresh question)",
    "pairing check (60-message history)",
    "pairing check, worst case (fresh question)",
    "pairing check, worst case (60-message history)",
    "wrap_agent_call, other flavour (bridge)",
    "control: two builds of one agent",
)


def test_the_run_control_bench_prints_each_row_against_the_agent_without() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for row in ROWS:
        for entry in ("invoke", "ainvoke"):
            line = next(
                (x for x in done.stdout.splitlines() if x.startswith(f"| {row} | {entry} |")),
                None,
            )
            assert line is not None, f"no row {row!r} for {entry}:\n{done.stdout}"
            with_us, without_us = (float(x) for x in line.split("|")[3:5])
            assert with_us > 0 and without_us > 0
    verdict = re.search(
        r"every bounded row within 2% of the agent without the feature: (yes|\*\*NO\*\*) "
        r"\(highest: .+, (invoke|ainvoke), \d\.\d{3}",
        done.stdout,
    )
    assert verdict is not None, done.stdout
