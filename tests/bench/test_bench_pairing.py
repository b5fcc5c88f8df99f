"""bench/pairing.py runs (quick) and prints the check-on/check-off table and its verdict."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "pairing.py"


def test_the_pairing_bench_runs_and_prints_its_verdict() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for row in ("fresh question", "60-message history"):
        assert f"| {row} |" in done.stdout
    assert "the pairing check stays within 2% of the agent without it: " in done.stdout
