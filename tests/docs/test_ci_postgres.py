"""Sourcing ``.ci/postgres`` starts a throwaway server and leaves the caller's shell as it was,
also when starting the server fails.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_REPO = str(Path(__file__).resolve().parents[2])


def _source_postgres(extra_env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = (
        "before=$(set +o); source .ci/postgres; status=$?; after=$(set +o); "
        '[ "$before" = "$after" ] && echo "options unchanged"; echo "status=$status"; '
        "false; echo 'the shell survived a failing command'; "
        'echo "url=${FUNCWARE_POSTGRES_URL:-}"; pg_stop; '
        'echo "stopped url=${FUNCWARE_POSTGRES_URL:-}"'
    )
    env = {**os.environ, **extra_env}
    env.pop("FUNCWARE_POSTGRES_URL", None)
    return subprocess.run(
        ["bash", "-c", script], cwd=_REPO, env=env, capture_output=True, text=True, timeout=300
    )


def test_sourcing_ci_postgres_starts_a_server_and_changes_no_shell_option() -> None:
    done = _source_postgres({})
    assert "options unchanged" in done.stdout, done.stderr
    assert "status=0" in done.stdout, done.stderr
    assert "the shell survived a failing command" in done.stdout
    assert "url=postgresql://postgres@127.0.0.1:" in done.stdout
    assert "stopped url=\n" in done.stdout


def test_a_failure_while_sourcing_ci_postgres_returns_an_error_and_keeps_the_shell() -> None:
    done = _source_postgres({"TMPDIR": "/nonexistent/funcware-test"})  # mktemp -d fails
    assert "options unchanged" in done.stdout, done.stderr
    assert "status=1" in done.stdout and "PostgreSQL did not start" in done.stderr
    assert "the shell survived a failing command" in done.stdout
    assert "url=\n" in done.stdout
