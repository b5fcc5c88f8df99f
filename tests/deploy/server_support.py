"""A real LangGraph Server (``langgraph dev``, in memory) as a subprocess on a loopback port.

``DevServer.start()`` runs the CLI in ``deploy/`` exactly as the deployment guide does, plus a free
port, no reloader, no browser and a few parallel jobs; it waits until ``/ok`` answers and
fails with the server's log if the process exits first. ``stop()`` ends the process group
it started (SIGINT, then SIGKILL after a grace period) and is safe to call twice; it is also
registered with ``atexit`` and, on Linux, the server is told to die with its parent, so an
interrupted test run does not leave it behind. Nothing leaves the machine: analytics, the
version check and tracing are switched off, and LangSmith/LangChain variables are not passed;
nor is ``FUNCWARE_ERROR_NOTES``, which the config's ``env`` sets (as a deployment would).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import IO

QUIET_ENV = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",  # the CLI's usage analytics
    "LANGGRAPH_NO_VERSION_CHECK": "true",  # the server's check for a newer release
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "PYTHONUNBUFFERED": "1",
}


CONFIG_ENV = ("FUNCWARE_ERROR_NOTES",)
"""Set by ``langgraph.json``'s ``env``, so not passed from the test's own environment."""


def free_loopback_port() -> int:
    """A TCP port nobody listens on at 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def langgraph_cli() -> str | None:
    """The ``langgraph`` executable of this interpreter's environment, if installed."""
    candidate = Path(sys.executable).parent / "langgraph"
    return str(candidate) if candidate.exists() else None


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that asks Linux to SIGTERM the child when the test process dies."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_pdeathsig = 1

    def arrange() -> None:
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)

    return arrange


def end_process_group(
    process: subprocess.Popen[bytes] | None, first: signal.Signals, grace: float
) -> None:
    """Send ``first`` to ``process``'s group; SIGKILL it if it is still there after ``grace``."""
    if process is None or process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, first)
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


class DevServer:
    """One ``langgraph dev`` process serving the config in ``workdir``."""

    def __init__(self, workdir: Path, log_path: Path, jobs: int = 4) -> None:
        self.workdir = workdir
        self.log_path = log_path
        self.jobs = jobs
        self.port = 0
        self.startup_seconds = 0.0
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        cli = langgraph_cli()
        assert cli is not None, "langgraph CLI not installed"
        return [
            cli,
            "dev",
            "--no-browser",
            "--no-reload",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n-jobs-per-worker",
            str(self.jobs),
        ]

    def start(self, timeout: float = 90.0) -> None:
        """Start the server and return once it is healthy (or raise with its log)."""
        self.port = free_loopback_port()
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("LANGSMITH_", "LANGCHAIN_")) and key not in CONFIG_ENV
        }
        env.update(QUIET_ENV)
        self._log = self.log_path.open("wb")
        began = time.monotonic()
        self._process = subprocess.Popen(
            self.command(),
            cwd=self.workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop() ends all of it
            preexec_fn=_die_with_parent(),
        )
        atexit.register(self.stop)
        try:
            self._wait_healthy(began + timeout)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - began

    def _wait_healthy(self, deadline: float) -> None:
        assert self._process is not None
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(
                    f"langgraph dev exited with {self._process.returncode} before it was "
                    f"healthy; its log:\n{self.log()[-4000:]}"
                )
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{self.url}/ok", timeout=2) as response,
            ):
                if response.status == 200:
                    return
            time.sleep(0.1)
        raise TimeoutError(f"langgraph dev not healthy at {self.url}; log:\n{self.log()[-4000:]}")

    def log(self) -> str:
        """Everything the server printed so far."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def wait_for_log(self, text: str, timeout: float = 10.0) -> str:
        """The log once it contains ``text`` (the server writes it after reporting)."""
        deadline = time.monotonic() + timeout
        while text not in (log := self.log()) and time.monotonic() < deadline:
            time.sleep(0.1)
        return log

    def stop(self, grace: float = 15.0) -> None:
        """End the server's process group: SIGINT, then SIGKILL if it lingers."""
        process, self._process = self._process, None
        end_process_group(process, signal.SIGINT, grace)
        if self._log is not None:
            self._log.close()
            self._log = None
        atexit.unregister(self.stop)

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None
