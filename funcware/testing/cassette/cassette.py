"""``Cassette``: record a real chat model's calls (and tool results) once, replay them offline."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from funcware.hooks.middleware import AgentMiddleware
from funcware.testing.cassette.canonical import jsonable
from funcware.testing.cassette.errors import CassetteMismatchError
from funcware.testing.cassette.models import RecordingChatModel, ReplayChatModel
from funcware.testing.cassette.store import RERECORD, Deck, Match, Redact, Tape, read
from funcware.testing.cassette.tools import RecordToolResults, ReplayToolResults

__all__ = ["RECORD_ENV", "Cassette", "redact_text"]

RECORD_ENV = "FUNCWARE_RECORD_CASSETTES"
"""Set to ``1`` to record every cassette whose ``record`` is left to the environment."""


class Cassette:
    """One JSON file of recorded model calls and tool results, and the models that use it.

    ``record(model)`` wraps a real chat model: every call's canonical request (messages,
    tools, ``tool_choice``, settings) and its answer (the whole ``AIMessage`` with usage
    metadata, or every streamed chunk in order) is written to the file, after each call.
    ``replay()`` returns a chat model that answers from the file, offline, streaming the
    recorded chunks when streamed. A call whose request differs from the recording raises
    :class:`CassetteMismatchError` with a diff of what changed; it never gets another
    call's answer. ``record_tools()`` / ``replay_tools()`` do the same for tool results,
    as a ``wrap_tool_call`` middleware.

    ``match="sequence"``: the n-th call gets the n-th answer, and must make the n-th
    request. ``match="request"``: a call gets the answer recorded for an equal request,
    in any order (equal requests get their answers in recorded order) — for concurrent
    runs. ``redact`` gets every request and answer before it is stored and returns what to
    store instead; on replay, live requests go through it too, so they still match.

    A model call that raises, or a stream abandoned half-way, is not recorded. The
    recorder hands the real model's own ``bind_tools`` the tools, so the provider sees
    the call it would see unwrapped; ``with_structured_output`` on the recorder takes
    langchain-core's tool-calling path.

    ``record=None`` (the default) lets :attr:`recording` follow ``FUNCWARE_RECORD_CASSETTES``
    or a missing file; :meth:`use` and :meth:`use_tools` then record or replay by it.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        match: Match = "sequence",
        redact: Redact | None = None,
        record: bool | None = None,
    ) -> None:
        if match not in ("sequence", "request"):
            raise ValueError(f"Cassette(match={match!r}): use 'sequence' or 'request'.")
        self.path = Path(path)
        self.match: Match = match
        self.redact = redact
        if record is None:
            record = os.environ.get(RECORD_ENV, "") not in ("", "0") or not self.path.exists()
        self.recording: bool = record
        """Whether :meth:`use` and :meth:`use_tools` record (else they replay)."""
        self._tape: Tape | None = None
        self._document: dict[str, Any] | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Cassette({str(self.path)!r}, recording={self.recording})"

    # recording

    def _recorder(self) -> Tape:
        with self._lock:
            if self._tape is None:
                self._tape = Tape(self.path, self.redact)
            return self._tape

    def record(self, model: BaseChatModel) -> BaseChatModel:
        """``model``, recording each call to this cassette (which it starts afresh)."""
        if not isinstance(model, BaseChatModel):
            raise TypeError(
                f"Cassette.record() takes a langchain-core BaseChatModel, not "
                f"{type(model).__name__}."
            )
        tape = self._recorder()
        ls_params = jsonable(model._get_ls_params())
        about = {"ls_params": tape.clean(ls_params), "profile": jsonable(model.profile)}
        tape.meta.setdefault("model", about)
        recorder = RecordingChatModel(
            model=model, profile=model.profile, recorded_ls_params=ls_params
        )
        recorder._tape = tape
        return recorder

    def record_tools(self) -> AgentMiddleware:
        """A middleware that runs every tool call and records its result to this cassette."""
        return RecordToolResults(self._recorder())

    # replaying

    def _loaded(self) -> dict[str, Any]:
        with self._lock:
            if self._document is None:
                self._document = read(self.path)
            return self._document

    def replay(
        self, *, match: Match | None = None, model: BaseChatModel | None = None
    ) -> BaseChatModel:
        """A chat model answering from this cassette; each call takes one recorded answer.

        Given the real ``model`` (never called), its identity (provider, model name,
        temperature, ...) must be the recorded model's, or a mismatch is raised here.
        """
        document = self._loaded()
        deck = Deck(self.path, "model call", document["calls"], match or self.match, self.redact)
        recorded = document.get("model", {})
        if model is not None:
            self._check_model(model, recorded.get("ls_params", {}))
        model = ReplayChatModel(
            profile=recorded.get("profile"), recorded_ls_params=recorded.get("ls_params", {})
        )
        model._deck = deck
        return model

    def _check_model(self, model: BaseChatModel, recorded: dict[str, Any]) -> None:
        live = jsonable(model._get_ls_params())
        live = live if self.redact is None else self.redact(live)
        if live != recorded:
            lines = [
                f"  - {name}: {recorded.get(name, '(absent)')!r} -> {live.get(name, '(absent)')!r}"
                for name in sorted(set(recorded) | set(live))
                if recorded.get(name) != live.get(name)
            ]
            raise CassetteMismatchError(
                f"Cassette {self.path}: the model to replay is not the recorded one "
                f"({type(model).__name__}):\n" + "\n".join(lines) + f"\n{RERECORD}"
            )

    def replay_tools(self) -> AgentMiddleware:
        """A middleware answering every tool call from this cassette (no tool runs)."""
        results = self._loaded()["tool_calls"]
        return ReplayToolResults(Deck(self.path, "tool call", results, "request", self.redact))

    # either, as recording says

    def use(self, model: BaseChatModel | Callable[[], BaseChatModel]) -> BaseChatModel:
        """``record(model)`` when :attr:`recording`, else ``replay(model=model)``.

        ``model`` may be a function that builds the real model: it is called only to
        record, so a replay needs no credentials (and skips the identity check).
        """
        if self.recording:
            return self.record(model if isinstance(model, BaseChatModel) else model())
        return self.replay(model=model if isinstance(model, BaseChatModel) else None)

    def use_tools(self) -> AgentMiddleware:
        """``record_tools()`` when :attr:`recording`, else ``replay_tools()``."""
        return self.record_tools() if self.recording else self.replay_tools()


def redact_text(replacements: dict[str, str]) -> Redact:
    """A ``redact=`` function replacing each key's text by its value, in every string."""

    def redact(value: Any) -> Any:
        if isinstance(value, str):
            for secret, mask in replacements.items():
                value = value.replace(secret, mask)
            return value
        if isinstance(value, dict):
            return {redact(k): redact(v) for k, v in value.items()}
        if isinstance(value, list):
            return [redact(v) for v in value]
        return value

    return redact
