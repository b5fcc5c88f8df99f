"""A real provider class on a cassette: ``ChatOpenAI`` recorded against a local
OpenAI-compatible server (``fake_openai.FakeOpenAI``), then replayed with the server gone.

Needs the ``openai`` extra; skipped without it, failed when ``FUNCWARE_REQUIRE_OPENAI=1``.
``python -m pytest tests/testing/test_cassette_openai.py --record-cassettes`` also rewrites the
cassette the observing guide replays (``tests/cassettes/readme_weather.json``).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, require_openai
from langchain_core.load import dumpd
from langchain_core.messages import HumanMessage

from funcware import create_agent
from funcware.testing import Cassette, CassetteMismatchError

langchain_openai = require_openai()
ChatOpenAI = langchain_openai.ChatOpenAI

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "tests" / "cassettes" / "readme_weather.json"
GUIDE = ROOT / "docs" / "guides" / "observing.md"
README_BLOCK = next(
    block
    for block in re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.DOTALL)
    if "readme_weather.json" in block
)
API_KEY = "sk-test-never-written-0451"
TASK_KEYS = {"checkpoint_ns", "langgraph_checkpoint_ns"}
"""Stream metadata naming the langgraph task: a fresh id on every run, cassette or not."""


def get_weather(city: str) -> str:
    """Today's weather in a city."""
    return f"Sunny, 24 C in {city}"


@pytest.fixture
def server() -> Any:
    fake = FakeOpenAI()
    yield fake
    fake.stop()


def run_block(capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    exec(compile(README_BLOCK, "observing.md[cassette]", "exec"), {"__name__": "readme_cassette"})
    return capsys.readouterr().out


def requests_of(path: Path) -> list[Any]:
    return [call["request"] for call in json.loads(path.read_text())["calls"]]


def test_the_readme_example_records_chatopenai_then_replays_it_with_the_server_stopped(
    server: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("FUNCWARE_RECORD_CASSETTES", "1")
    recorded_output = run_block(capsys)
    server.stop()  # from here on, any HTTP request to it would fail

    assert recorded_output == "['Sunny, 24 C in Paris, says the weather tool.']\n"
    assert [r["stream"] for r in server.requests] == [True, True]
    assert server.requests[0]["tools"][0]["function"]["name"] == "get_weather"
    recorded = tmp_path / "tests" / "cassettes" / "readme_weather.json"
    text = recorded.read_text()
    assert API_KEY not in text
    document = json.loads(text)
    assert document["version"] == 1
    assert document["model"]["ls_params"]["ls_model_name"] == "gpt-4o-mini"
    assert [len(call["response"]["chunks"]) > 3 for call in document["calls"]] == [True, True]
    assert document["tool_calls"][0]["request"]["args"] == {"city": "Paris"}

    monkeypatch.delenv("FUNCWARE_RECORD_CASSETTES")
    assert run_block(capsys) == recorded_output
    assert len(server.requests) == 2

    if request.config.getoption("record_cassettes"):
        shutil.copyfile(recorded, SHIPPED)
    # The shipped cassette is what this example records (its requests, call for call).
    assert requests_of(SHIPPED) == requests_of(recorded)


def test_a_whole_chatopenai_answer_replays_with_its_usage_and_metadata(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    path = tmp_path / "whole.json"

    def model(name: str = "gpt-4o-mini") -> Any:
        return ChatOpenAI(model=name, base_url=server.base_url, api_key=API_KEY)

    def run(chat_model: Any) -> list[Any]:
        agent = create_agent(chat_model, [get_weather], system_prompt="Be brief.")
        return agent.invoke({"messages": [HumanMessage("Weather in Oslo?")]})["messages"]

    live = run(Cassette(path).record(model()))
    server.stop()
    replayed = run(Cassette(path).replay(model=model()))

    assert [(m.type, m.content) for m in replayed] == [(m.type, m.content) for m in live]
    assert replayed[1].tool_calls == live[1].tool_calls
    assert replayed[-1].usage_metadata == live[-1].usage_metadata
    assert replayed[-1].usage_metadata is not None
    assert replayed[-1].response_metadata == live[-1].response_metadata
    assert replayed[-1].id == live[-1].id

    with pytest.raises(CassetteMismatchError) as caught:
        Cassette(path).replay(model=model("gpt-4o"))
    assert "ls_model_name: 'gpt-4o-mini' -> 'gpt-4o'" in str(caught.value)


def test_a_streamed_chatopenai_agent_run_replays_byte_for_byte(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    path = tmp_path / "streamed.json"
    real = ChatOpenAI(
        model="gpt-4o-mini", base_url=server.base_url, api_key=API_KEY, stream_usage=True
    )

    def run(cassette: Cassette, recording: bool) -> str:
        model = cassette.record(real) if recording else cassette.replay(model=real)
        tools = cassette.record_tools() if recording else cassette.replay_tools()
        agent = create_agent(model, [get_weather], system_prompt="Be brief.", middleware=[tools])
        inputs = {"messages": [HumanMessage("Weather in Lima?")]}
        events = [
            [dumpd(chunk), {k: v for k, v in meta.items() if k not in TASK_KEYS}]
            for chunk, meta in agent.stream(inputs, stream_mode="messages")
        ]
        return json.dumps(events, sort_keys=True)

    live = run(Cassette(path), recording=True)
    server.stop()
    assert run(Cassette(path), recording=False) == live
    assert '"input_tokens"' in live  # the usage chunk streamed, and replayed
    assert "Sunny, 24 C in Lima" in live
