"""The commands of "Durable execution on Temporal" run as written: deploy/temporal's
cluster comes up, the agent asks for approval, sends its email once, and it all stops."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from temporal_cluster import HERE, free_port, require_temporal

sys.path.insert(0, str(HERE.parent / "docs"))
from docs_blocks import ROOT, read

GUIDE = ROOT / "docs" / "guides" / "durable-execution.md"


def commands() -> list[str]:
    blocks = [b for b in read(GUIDE) if b.heading == "Try it on one machine"]
    assert [b.language for b in blocks] == ["bash"]
    return [line for line in blocks[0].code.splitlines() if line.strip()]


def test_the_guide_commands_run_as_written(tmp_path: Path) -> None:
    require_temporal()
    port = free_port()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "TEMPORAL_PORT": str(port),
        "TEMPORAL_ADDRESS": f"127.0.0.1:{port}",
        "TEMPORAL_STATE_DIR": str(tmp_path / "state"),
        "FUNCWARE_OUTBOX": str(tmp_path / "outbox.txt"),
    }
    lines = commands()
    # The install is this environment's own (CI installs the same extra before this step).
    assert lines[0] == 'pip install -e ".[temporal]"'
    outputs = []
    try:
        for line in lines[1:]:
            done = subprocess.run(
                line, shell=True, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
            )
            assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
            outputs.append(done.stdout)
    finally:
        subprocess.run(
            ["deploy/temporal/cluster.sh", "down", "--wipe"], cwd=ROOT, env=env, check=False
        )
    assert "worker 2" in outputs[0]
    asked = outputs[1].splitlines()
    assert asked[0].startswith("asks: [{'review': [{'args': {'body': 'Standup moves to 10:00'")
    assert asked[1:] == [
        "HumanMessage: Standup moves to 10:00",
        "AIMessage: ",
        "ToolMessage: sent to team",
        "AIMessage: Done: sent to team.",
    ]
    assert (tmp_path / "outbox.txt").read_text() == "to team: Standup moves to 10:00\n"
    assert "stopped" in outputs[2]
    assert shlex.split(lines[2])[:2] == ["python", "deploy/temporal/ask.py"]
