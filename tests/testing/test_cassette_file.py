"""The cassette file: one versioned JSON document, redacted before anything is written,
refused with a clear error when missing, malformed or from another format version."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from funcware import create_agent
from funcware.testing import (
    Cassette,
    CassetteError,
    CassetteMismatchError,
    CassetteVersionError,
    ScriptedChatModel,
    StreamingScriptedChatModel,
    redact_text,
)

SECRET = "sk-live-7f3a9c"


def lookup_account(user: str) -> str:
    """The account token of a user."""
    return f"token {SECRET} for {user}"


def secret_run(model: Any, cassette: Cassette, tools_middleware: Any) -> list[Any]:
    agent = create_agent(
        model,
        [lookup_account],
        system_prompt=f"Never reveal {SECRET}.",
        middleware=[tools_middleware],
    )
    return agent.invoke({"messages": [HumanMessage("Which token has ada?")]})["messages"]


def test_a_secret_never_reaches_the_file_and_the_redacted_run_still_replays(
    tmp_path: Path,
) -> None:
    path = tmp_path / "secret.json"
    redact = redact_text({SECRET: "<TOKEN>"})
    call = AIMessage(
        "", tool_calls=[{"name": "lookup_account", "args": {"user": "ada"}, "id": "1"}]
    )
    real = StreamingScriptedChatModel(responses=[call, f"ada's token is {SECRET}"])
    recording = Cassette(path, redact=redact)
    secret_run(recording.record(real), recording, recording.record_tools())

    text = path.read_text()
    assert SECRET not in text
    assert "Never reveal <TOKEN>." in text and "token <TOKEN> for ada" in text

    replaying = Cassette(path, redact=redact)
    messages = secret_run(replaying.replay(), replaying, replaying.replay_tools())
    assert messages[-1].text == "ada's token is <TOKEN>"


def test_redact_sees_every_request_and_answer_before_it_is_stored(tmp_path: Path) -> None:
    seen: list[Any] = []

    def redact(document: Any) -> Any:
        seen.append(document)
        return document

    Cassette(tmp_path / "c.json", redact=redact).record(ScriptedChatModel(responses=["ok"])).invoke(
        "hi"
    )
    kinds = [sorted(d) for d in seen if isinstance(d, dict)]
    assert ["messages", "settings", "tool_choice", "tools"] in kinds  # the request
    assert ["message"] in kinds  # the answer


def test_the_file_is_versioned_and_holds_requests_and_answers(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    usage = {"input_tokens": 4, "output_tokens": 1, "total_tokens": 5}
    model = Cassette(path).record(
        ScriptedChatModel(responses=[AIMessage("ok", usage_metadata=usage)])
    )
    model.bind(temperature=0.2).invoke("hi")
    document = json.loads(path.read_text())
    assert document["version"] == 1
    [call] = document["calls"]
    assert call["request"] == {
        "messages": [{"type": "human", "content": "hi"}],
        "tools": [],
        "tool_choice": None,
        "settings": {"temperature": 0.2},
    }
    assert call["response"]["message"]["data"]["usage_metadata"]["total_tokens"] == 5
    assert call["model"] == "ScriptedChatModel"


def test_a_file_from_another_format_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.json"
    path.write_text(json.dumps({"version": 2, "calls": [], "tool_calls": []}))
    with pytest.raises(CassetteVersionError, match=r"has format version 2; this funcware reads"):
        Cassette(path).replay()
    path.write_text(json.dumps({"calls": []}))
    with pytest.raises(CassetteVersionError, match=r"format version None"):
        Cassette(path).replay()


def test_a_missing_or_malformed_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match=r"No cassette at .*record it first"):
        Cassette(tmp_path / "missing.json").replay()
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(CassetteError, match=r"is not valid JSON"):
        Cassette(broken).replay()


def test_recording_follows_the_file_the_environment_and_the_argument(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FUNCWARE_RECORD_CASSETTES", raising=False)
    path = tmp_path / "c.json"
    assert Cassette(path).recording is True  # no file yet
    path.write_text("{}")
    assert Cassette(path).recording is False
    assert Cassette(path, record=True).recording is True
    monkeypatch.setenv("FUNCWARE_RECORD_CASSETTES", "1")
    assert Cassette(path).recording is True
    assert Cassette(path, record=False).recording is False


def test_use_records_then_replays_without_building_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FUNCWARE_RECORD_CASSETTES", raising=False)
    path = tmp_path / "c.json"
    built: list[str] = []

    def build() -> ScriptedChatModel:
        built.append("model")
        return ScriptedChatModel(responses=["recorded"])

    assert Cassette(path).use(build).invoke("hi").text == "recorded"
    assert Cassette(path).use(build).invoke("hi").text == "recorded"
    assert built == ["model"]


def test_replaying_with_another_model_is_a_mismatch(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    Cassette(path).record(ScriptedChatModel(responses=["ok"])).invoke("hi")
    other = StreamingScriptedChatModel(responses=[])
    with pytest.raises(CassetteMismatchError, match=r"ls_provider: 'scriptedchatmodel' ->"):
        Cassette(path).replay(model=other)
    assert Cassette(path).replay(model=ScriptedChatModel()).invoke("hi").text == "ok"


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"match='order'.*'sequence' or 'request'"):
        Cassette(tmp_path / "c.json", match="order")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"takes a langchain-core BaseChatModel, not str"):
        Cassette(tmp_path / "c.json").record("gpt-4o")  # type: ignore[arg-type]
