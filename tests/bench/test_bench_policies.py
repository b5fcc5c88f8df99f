"""bench/policies.py runs (quick), and finds the hooks untouched when the options are unused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "policies.py"


def test_the_policies_bench_runs_and_unused_options_leave_hooks_alone() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for row in ("plain decorators", "options at their defaults", "timeout=5 on all"):
        assert f"| {row} |" in done.stdout
    assert "leave every hook's callable as it is: yes" in done.stdout
