"""bench/runs.py runs (quick) and prints every row, for invoke and ainvoke, in one run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "runs.py"


def test_the_run_control_bench_prints_each_row_against_the_agent_without() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = (
        "wrap_agent_call (def)",
        "wrap_agent_call (async def)",
        "per-run switch (wrap)",
        "per-run switch (node)",
    )
    for row in rows:
        for entry in ("invoke", "ainvoke"):
            assert f"| {row} | {entry} |" in done.stdout
