"""The cassette file (one versioned JSON document) and the two ways to use it.

``Tape`` records: it collects model calls and tool results and rewrites the file after
each one, so a run that stops half-way still leaves what it did. ``Deck`` replays: it
hands out recorded answers to live requests, by order or by request, and raises a
:class:`CassetteMismatchError` with a diff when a request matches nothing.
"""

from __future__ import annotations

import json
import os
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from funcware.testing.cassette.canonical import key
from funcware.testing.cassette.diff import distance, explain
from funcware.testing.cassette.errors import (
    CassetteError,
    CassetteMismatchError,
    CassetteVersionError,
)

__all__ = ["VERSION", "Deck", "Match", "Redact", "Tape", "read"]

VERSION = 1
"""The format version this funcware writes and reads."""

Match = Literal["sequence", "request"]
Redact = Callable[[Any], Any]
"""Takes one JSON document (a request or an answer) and returns what to store instead."""

RERECORD = (
    "If the change is intended, record the cassette again (pytest --record-cassettes, or "
    "FUNCWARE_RECORD_CASSETTES=1, or Cassette(path).record(model))."
)


def read(path: Path) -> dict[str, Any]:
    """The cassette at ``path``; a missing, malformed or newer-format file is an error."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CassetteError(
            f"No cassette at {path}: record it first (Cassette(path).record(model), or run "
            "the test with --record-cassettes)."
        ) from None
    except json.JSONDecodeError as exc:
        raise CassetteError(f"Cassette {path} is not valid JSON: {exc}") from exc
    version = document.get("version") if isinstance(document, dict) else None
    if version != VERSION:
        raise CassetteVersionError(
            f"Cassette {path} has format version {version!r}; this funcware reads version "
            f"{VERSION} only. Record the cassette again with this funcware, or use the "
            "funcware release that wrote it."
        )
    checked: dict[str, Any] = document
    return checked


class Tape:
    """Collects recorded entries and writes the whole file after each one."""

    def __init__(self, path: Path, redact: Redact | None) -> None:
        self.path = path
        self.redact = redact
        self.meta: dict[str, Any] = {}
        self._entries: dict[str, list[dict[str, Any] | None]] = {"calls": [], "tool_calls": []}
        self._lock = threading.Lock()

    def clean(self, document: Any) -> Any:
        """``document`` as it may be stored: through ``redact``, if given."""
        return document if self.redact is None else self.redact(document)

    def reserve(self, kind: str) -> int:
        """A place for an entry of ``kind``, in the order the calls started."""
        with self._lock:
            self._entries[kind].append(None)
            return len(self._entries[kind]) - 1

    def fill(self, kind: str, index: int, request: Any, response: Any, **extra: Any) -> None:
        """Store one call (redacted) at its place, and rewrite the file."""
        entry = {"request": self.clean(request), "response": self.clean(response), **extra}
        with self._lock:
            self._entries[kind][index] = entry
            self._write()

    def _write(self) -> None:
        document = {
            "version": VERSION,
            **self.meta,
            **{
                kind: [e for e in entries if e is not None]
                for kind, entries in self._entries.items()
            },
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(self.path.name + ".partial")
        partial.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", "utf-8")
        os.replace(partial, self.path)


class Deck:
    """Recorded answers handed out to live requests; a request that fits none is an error."""

    def __init__(
        self,
        path: Path,
        what: str,
        entries: list[dict[str, Any]],
        match: Match,
        redact: Redact | None,
    ) -> None:
        if match not in ("sequence", "request"):
            raise ValueError(f"Cassette match={match!r}: use 'sequence' or 'request'.")
        self.path = path
        self.what = what
        self.entries = entries
        self.match: Match = match
        self.redact = redact
        self._lock = threading.Lock()
        self._next = 0
        self._unused: dict[str, deque[int]] = {}
        for index, entry in enumerate(entries):
            self._unused.setdefault(key(entry["request"]), deque()).append(index)

    def take(self, request: Any) -> dict[str, Any]:
        """The recorded entry answering ``request`` (redacted as the recording was)."""
        live = request if self.redact is None else self.redact(request)
        with self._lock:
            number = self._next + 1
            self._next += 1
            if self.match == "sequence":
                return self._in_sequence(number, live)
            return self._by_request(number, live)

    def _in_sequence(self, number: int, live: Any) -> dict[str, Any]:
        if number > len(self.entries):
            raise CassetteMismatchError(
                f"Cassette {self.path}: {self.what} #{number} was not recorded (the cassette "
                f"holds {len(self.entries)}). {RERECORD}"
            )
        entry = self.entries[number - 1]
        if entry["request"] != live:
            raise CassetteMismatchError(
                f"Cassette {self.path}: {self.what} #{number} differs from the recorded "
                f"{self.what} #{number} (match='sequence'):\n"
                f"{explain(entry['request'], live)}\n{RERECORD}"
            )
        return entry

    def _by_request(self, number: int, live: Any) -> dict[str, Any]:
        waiting = self._unused.get(key(live))
        if waiting:
            return self.entries[waiting.popleft()]
        left = [i for indexes in self._unused.values() for i in indexes]
        if not left:
            raise CassetteMismatchError(
                f"Cassette {self.path}: {self.what} #{number} has no recorded answer left "
                f"(all {len(self.entries)} are used, and none was for this request). {RERECORD}"
            )
        nearest = min(left, key=lambda i: distance(self.entries[i]["request"], live))
        raise CassetteMismatchError(
            f"Cassette {self.path}: {self.what} #{number} matches no recorded request "
            f"(match='request'); the nearest unused one is recorded #{nearest + 1}:\n"
            f"{explain(self.entries[nearest]['request'], live)}\n{RERECORD}"
        )
