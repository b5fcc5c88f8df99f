"""A local LangSmith: a loopback HTTP server that records what the real ``langsmith``
client posts, so tracing tests run the real client and nothing leaves the machine.

``recorded_langsmith(monkeypatch)`` starts it, points ``LANGSMITH_ENDPOINT`` at it with
``LANGSMITH_TRACING=true`` and a fake key, and resets the client's caches before and
after; ``recorder.runs()`` waits for the tracers to flush and gives the runs received
(posts and patches of ``/runs/multipart`` or ``/runs/batch`` merged by run id).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from langchain_core.tracers.langchain import wait_for_all_tracers
from langsmith import run_trees
from langsmith import utils as ls_utils


class LangSmithRecorder:
    """What the local LangSmith received."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        self._runs: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def add(self, op: str, run: dict[str, Any]) -> None:
        with self._lock:
            self._runs.setdefault(str(run["id"]), {}).update(
                {k: v for k, v in run.items() if v is not None or op == "post"}
            )

    def runs(self) -> list[dict[str, Any]]:
        """Every run received, in start order (after the tracers flushed)."""
        wait_for_all_tracers()
        with self._lock:
            return sorted(self._runs.values(), key=lambda run: str(run.get("dotted_order")))

    def tree(self) -> list[tuple[int, str, str]]:
        """``(depth, name, run_type)`` per run, depth-first in start order."""
        runs = self.runs()
        ids = {run["id"] for run in runs}
        children: dict[str | None, list[dict[str, Any]]] = {}
        for run in runs:
            parent = run.get("parent_run_id")
            children.setdefault(parent if parent in ids else None, []).append(run)
        out: list[tuple[int, str, str]] = []

        def walk(parent: str | None, depth: int) -> None:
            for run in children.get(parent, []):
                out.append((depth, run["name"], run["run_type"]))
                walk(run["id"], depth + 1)

        walk(None, 0)
        return out

    def named(self, name: str) -> list[dict[str, Any]]:
        return [run for run in self.runs() if run["name"] == name]


def _parts(content_type: str, body: bytes) -> Iterator[tuple[str, Any]]:
    message = BytesParser().parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + body)
    for part in message.get_payload():  # type: ignore[union-attr]
        name = part.get_param("name", header="content-disposition")
        yield str(name), json.loads(part.get_payload(decode=True))


def _handler(recorder: LangSmithRecorder) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self, payload: Any) -> None:
            out = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def do_GET(self) -> None:
            recorder.requests.append(("GET", self.path))
            self._answer({})

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            recorder.requests.append(("POST", self.path))
            if self.path.endswith("/runs/multipart"):
                pending: dict[str, dict[str, Any]] = {}
                for name, value in _parts(self.headers["Content-Type"], body):
                    op, run_id, *field = name.split(".")
                    run = pending.setdefault(f"{op}.{run_id}", {"id": run_id, "op": op})
                    if field:
                        run[field[0]] = value
                    else:
                        run.update(value)
                for run in pending.values():
                    recorder.add(run.pop("op"), run)
            elif self.path.endswith("/runs/batch"):
                batch = json.loads(body)
                for op in ("post", "patch"):
                    for run in batch.get(op, []):
                        recorder.add(op, run)
            self._answer({})

        do_PATCH = do_POST

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def _reset_client() -> None:
    ls_utils.get_env_var.cache_clear()
    run_trees._CLIENT = None


@contextmanager
def recorded_langsmith(monkeypatch: pytest.MonkeyPatch) -> Iterator[LangSmithRecorder]:
    recorder = LangSmithRecorder()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(recorder))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    for key in list(__import__("os").environ):
        if key.startswith(("LANGSMITH_", "LANGCHAIN_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    monkeypatch.setenv("LANGSMITH_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("LANGSMITH_API_KEY", "fake-key-for-a-local-recorder")
    monkeypatch.setenv("LANGSMITH_PROJECT", "funcware-tests")
    _reset_client()
    try:
        yield recorder
    finally:
        wait_for_all_tracers()
        monkeypatch.undo()
        _reset_client()
        server.shutdown()
        server.server_close()
        thread.join()
