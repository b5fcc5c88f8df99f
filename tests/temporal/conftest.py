"""The fixtures of the Temporal tests: a dev server and a client process per session, and
per test a :class:`~temporal_cluster.Cluster` of workers on its own task queue."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporal_cluster import Client, Cluster, free_port, require_temporal


@pytest.fixture(scope="session")
def temporal_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``host:port`` of a dev server started for this session."""
    cli = require_temporal()
    folder = tmp_path_factory.mktemp("temporal")
    address = f"127.0.0.1:{free_port()}"
    host, port = address.split(":")
    server = subprocess.Popen(
        [
            cli,
            "server",
            "start-dev",
            "--headless",
            "--ip",
            host,
            "--port",
            port,
            "--ui-port",
            str(free_port()),
            "--db-filename",
            str(folder / "temporal.db"),
            "--log-level",
            "error",
        ],
        stdout=subprocess.DEVNULL,
        stderr=open(folder / "server.log", "w"),  # noqa: SIM115 - closed with the process
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            health = subprocess.run(
                [cli, "operator", "cluster", "health", "--address", address],
                capture_output=True,
                text=True,
                check=False,
            )
            if "SERVING" in health.stdout:
                break
            time.sleep(0.1)
        else:
            pytest.fail(
                f"the Temporal dev server did not start: {(folder / 'server.log').read_text()}"
            )
        yield address
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)


@pytest.fixture(scope="session")
def temporal_client(
    temporal_server: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Client]:
    client = Client(temporal_server, tmp_path_factory.mktemp("client") / "client.log")
    yield client
    client.close()


@pytest.fixture
def cluster(
    temporal_server: str, temporal_client: Client, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Cluster]:
    made = Cluster(temporal_server, tmp_path, f"q-{request.node.name}", temporal_client)
    try:
        yield made
    finally:
        for process in made.workers:
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=10)
