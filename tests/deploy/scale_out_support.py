"""Aegra scaled out on one machine: PostgreSQL, Redis and N Aegra instances as subprocesses.

``Cluster.start()`` brings up, on loopback ports: a PostgreSQL database (a fresh database
in the server at ``$FUNCWARE_POSTGRES_URL`` when set, else a throwaway server made with
``initdb``), a ``redis-server`` without persistence, and Aegra instances (``uvicorn
aegra_api.main:app``) that share both. Each instance is one process: its HTTP API, its
workers (``WORKER_COUNT`` loops, ``N_JOBS_PER_WORKER`` runs each), its lease heartbeats
and its reaper. ``Instance.signal()`` kills or drains one; ``restart()`` brings it back.
``stop()`` ends everything it started (also at exit, and Linux kills the children with
the test process), and is safe to call twice.

The lease, heartbeat and reaper are set short (``FAST_RECOVERY``) so a killed worker's runs
move within seconds, not the production defaults' ~50 s.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

import psycopg
from server_support import QUIET_ENV, _die_with_parent, end_process_group, free_loopback_port

FAST_RECOVERY = {
    "HEARTBEAT_INTERVAL_SECONDS": "1",  # a running worker extends its lease every second
    "LEASE_DURATION_SECONDS": "4",  # ... to 4 s ahead: > 2 heartbeats, as Aegra requires
    "REAPER_INTERVAL_SECONDS": "1",  # every instance looks for expired leases each second
    "STUCK_PENDING_THRESHOLD_SECONDS": "5",  # a popped, never-claimed run is requeued after 5 s
    "BLPOP_TIMEOUT_SECONDS": "1",
    "BLOCKING_SOCKET_TIMEOUT_SECONDS": "6",  # must exceed the BLPOP timeout by 5 s
    "POSTGRES_POLL_INTERVAL_SECONDS": "1",
    "WORKER_DRAIN_TIMEOUT": "2",  # SIGTERM: runs not done in 2 s go back to the queue
    "WORKER_COUNT": "2",
    "N_JOBS_PER_WORKER": "3",  # 6 runs at once per instance
}
"""Settings for the tests; the README's deploy script uses Aegra's defaults."""

LEDGER_TABLES = (
    "CREATE TABLE IF NOT EXISTS ledger_steps (thread_id TEXT, tool_call_id TEXT, "
    "step TEXT, pid INTEGER, at TIMESTAMPTZ DEFAULT clock_timestamp())",
    "CREATE TABLE IF NOT EXISTS ledger_effects (thread_id TEXT, tool_call_id TEXT, "
    "pid INTEGER, at TIMESTAMPTZ DEFAULT clock_timestamp())",
)
"""The ledger ``scale_out_graphs.transfer`` writes (made before the instances start)."""

SMALL_POOLS = {
    "SQLALCHEMY_POOL_SIZE": "5",
    "SQLALCHEMY_MAX_OVERFLOW": "5",
    "LANGGRAPH_MIN_POOL_SIZE": "2",
    "LANGGRAPH_MAX_POOL_SIZE": "10",
}
"""At most 20 connections per instance, so the cluster fits a default server's 100 beside
the other tests' (Aegra's defaults allow 50 per instance)."""

RECOVERY_SECONDS = int(FAST_RECOVERY["LEASE_DURATION_SECONDS"]) + int(
    FAST_RECOVERY["REAPER_INTERVAL_SECONDS"]
)
"""Lease + reaper interval: the longest a dead worker's run waits to be requeued."""


NO_PERSISTENCE = ("--save", "", "--appendonly", "no")
"""Redis holds only the queue and the stream's pub/sub; runs live in PostgreSQL."""


def redis_server() -> str | None:
    """The ``redis-server`` executable, if installed."""
    return shutil.which("redis-server")


def _pg_bin() -> Path | None:
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin")):
        if (candidate / "initdb").exists():
            return candidate
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def _as_postgres(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


class Postgres:
    """A database for the cluster: in ``$FUNCWARE_POSTGRES_URL``'s server, or a new server."""

    def __init__(self) -> None:
        self.url = ""
        self._admin_url = ""
        self._database = ""
        self._dir: Path | None = None
        self._bin: Path | None = None

    def start(self) -> str:
        server = os.environ.get("FUNCWARE_POSTGRES_URL")
        if not server:
            server = self._start_server()
        self._admin_url = server
        self._database = f"aegra_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(server, autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {self._database}")
        base = server.partition("?")[0]
        self.url = f"{base.rsplit('/', 1)[0]}/{self._database}"
        atexit.register(self.stop)
        return self.url

    def _start_server(self) -> str:
        self._bin = _pg_bin()
        if self._bin is None:
            raise RuntimeError("PostgreSQL is not installed: apt-get install postgresql")
        self._dir = Path(tempfile.mkdtemp(prefix="funcware-aegra-pg-"))
        if os.geteuid() == 0:
            shutil.chown(self._dir, "postgres")
        port = free_loopback_port()
        data = str(self._dir / "data")
        subprocess.run(
            _as_postgres([str(self._bin / "initdb"), "-D", data, "-U", "postgres", "-A", "trust"]),
            check=True,
            capture_output=True,
        )
        options = f"-p {port} -k {self._dir} -c listen_addresses=127.0.0.1 -c max_connections=300"
        ctl = [str(self._bin / "pg_ctl"), "-D", data, "-l", f"{self._dir}/log"]
        subprocess.run(
            _as_postgres([*ctl, "-w", "-o", options, "start"]),
            check=True,
            capture_output=True,
        )
        return f"postgresql://postgres@127.0.0.1:{port}/postgres"

    def stop(self) -> None:
        if self._database:
            with (
                contextlib.suppress(psycopg.Error),
                psycopg.connect(self._admin_url, autocommit=True) as connection,
            ):
                connection.execute(f"DROP DATABASE IF EXISTS {self._database} WITH (FORCE)")
            self._database = ""
        if self._dir is not None and self._bin is not None:
            data = str(self._dir / "data")
            command = [str(self._bin / "pg_ctl"), "-D", data, "-m", "fast", "stop"]
            subprocess.run(_as_postgres(command), capture_output=True)
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        atexit.unregister(self.stop)


class Process:
    """One long-running child in its own process group, with its output in a log file."""

    def __init__(self, name: str, log_path: Path) -> None:
        self.name = name
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def spawn(self, command: list[str], env: Mapping[str, str], cwd: Path) -> None:
        self._log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            command,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent(),
        )
        atexit.register(self.stop)

    @property
    def pid(self) -> int:
        assert self.process is not None, f"{self.name} is not running"
        return self.process.pid

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def signal(self, signum: int) -> None:
        """Send ``signum`` to the process group (SIGKILL: nothing of it survives)."""
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signum)

    def wait(self, timeout: float) -> int:
        assert self.process is not None
        return self.process.wait(timeout)

    def stop(self, grace: float = 10.0) -> None:
        process, self.process = self.process, None
        end_process_group(process, signal.SIGTERM, grace)
        if self._log is not None:
            self._log.close()
            self._log = None
        atexit.unregister(self.stop)


class Instance(Process):
    """One Aegra server: API, workers and reaper in one process."""

    def __init__(self, name: str, log_path: Path) -> None:
        super().__init__(name, log_path)
        self.port = 0
        self.env: dict[str, str] = {}
        self.cwd = Path(".")
        self.startup_seconds = 0.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, env: Mapping[str, str], cwd: Path, timeout: float = 120.0) -> None:
        self.env, self.cwd = dict(env), cwd
        self.port = self.port or free_loopback_port()
        command = [sys.executable, "-m", "uvicorn", "aegra_api.main:app"]
        command += ["--host", "127.0.0.1", "--port", str(self.port), "--no-access-log"]
        began = time.monotonic()
        self.spawn(command, env, cwd)
        deadline = began + timeout
        while time.monotonic() < deadline:
            if not self.running:
                raise RuntimeError(f"Aegra {self.name} exited; its log:\n{self.log()[-4000:]}")
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{self.url}/health", timeout=2) as response,
            ):
                if response.status == 200:
                    self.startup_seconds = time.monotonic() - began
                    return
            time.sleep(0.2)
        self.stop()
        raise TimeoutError(f"Aegra {self.name} not healthy; its log:\n{self.log()[-4000:]}")

    def restart(self) -> None:
        """Start it again (same port and settings) after a kill or a drain."""
        self.stop()
        self.start(self.env, self.cwd)


class Cluster:
    """PostgreSQL, Redis and ``count`` Aegra instances serving ``config``."""

    def __init__(self, config: Path, workdir: Path, env: Mapping[str, str], count: int = 2):
        self.config = config
        self.workdir = workdir
        self.extra_env = dict(env)
        self.postgres = Postgres()
        self.redis = Process("redis", workdir / "redis.log")
        self.instances = [
            Instance(chr(ord("a") + i), workdir / f"aegra-{i}.log") for i in range(count)
        ]
        self.database_url = ""

    def start(self, before_instances: Sequence[str] = ()) -> None:
        """Start everything; ``before_instances`` are SQL statements run once the DB exists."""
        try:
            self.database_url = self.postgres.start()
            with psycopg.connect(self.database_url, autocommit=True) as connection:
                for statement in before_instances:
                    connection.execute(statement.encode())
            redis_port = free_loopback_port()
            server = redis_server()
            assert server is not None, "redis-server is not installed"
            self.redis.spawn(
                [server, "--port", str(redis_port), "--bind", "127.0.0.1", *NO_PERSISTENCE],
                os.environ,
                self.workdir,
            )
            env = {
                key: value
                for key, value in os.environ.items()
                if not key.startswith(("LANGSMITH_", "LANGCHAIN_"))
            }
            env.update(QUIET_ENV)
            env.update(FAST_RECOVERY)
            env.update(SMALL_POOLS)
            env.update(
                DATABASE_URL=self.database_url,
                REDIS_BROKER_ENABLED="true",
                REDIS_URL=f"redis://127.0.0.1:{redis_port}/0",
                AEGRA_CONFIG=str(self.config),
                CRON_ENABLED="false",
                LOG_LEVEL="INFO",
                FUNCWARE_ERROR_NOTES="message",
            )
            env.update(self.extra_env)
            # One at a time: the first runs Aegra's migrations; the others find them done.
            for instance in self.instances:
                instance.start(env, self.config.parent)
        except BaseException:
            self.stop()
            raise

    def by_pid(self, pid: int) -> Instance:
        return next(i for i in self.instances if i.process is not None and i.pid == pid)

    def stop(self) -> None:
        for instance in self.instances:
            instance.stop()
        self.redis.stop()
        self.postgres.stop()

    @property
    def running(self) -> bool:
        return self.redis.running or any(i.running for i in self.instances)
