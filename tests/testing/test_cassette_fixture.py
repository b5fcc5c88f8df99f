"""The pytest plugin's ``cassette`` fixture: records when the file is missing or recording
is asked for (``--record-cassettes``, ``FUNCWARE_RECORD_CASSETTES=1``), replays otherwise,
in a file named after the test (or the one ``@pytest.mark.cassette`` names).

The first case runs pytest (in process) on a small test module, as a user's suite would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from funcware.testing import Cassette

pytest_plugins = ["pytester"]

USER_TESTS = """
import pytest
from funcware import create_agent
from funcware.testing import ScriptedChatModel


def real_model():
    with open("answer.txt") as f:  # what the "real" model answers this time
        return ScriptedChatModel(responses=[f.read()])


@pytest.mark.parametrize("who", ["ada"])
def test_greeting(cassette, who):
    agent = create_agent(cassette.use(real_model), [], system_prompt="Greet.")
    reply = agent.invoke({"messages": [{"role": "user", "content": who}]})["messages"][-1]
    print(f"MODE={'record' if cassette.recording else 'replay'} REPLY={reply.text}")


@pytest.mark.cassette("shared/named.json")
def test_named(cassette):
    cassette.use(real_model).invoke("hi")
    print(f"PATH={cassette.path.relative_to(cassette.path.parents[1])}")
"""


def run_pytest(pytester: pytest.Pytester, *args: str) -> str:
    result = pytester.runpytest_inprocess(
        "-q",
        "-s",
        "-p",
        "no:asyncio",
        "-p",
        "funcware.testing.pytest_plugin",
        "test_user.py",
        *args,
    )
    assert result.ret == 0, result.stdout.str()
    return result.stdout.str()


def test_a_missing_file_records_an_existing_one_replays_and_recording_can_be_forced(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FUNCWARE_RECORD_CASSETTES", raising=False)
    pytester.makepyfile(test_user=USER_TESTS)
    answer = pytester.path / "answer.txt"
    answer.write_text("Hello, first take")
    first = run_pytest(pytester)
    assert "MODE=record REPLY=Hello, first take" in first
    path = pytester.path / "cassettes" / "test_user" / "test_greeting_ada.json"
    assert json.loads(path.read_text())["version"] == 1
    assert "PATH=shared/named.json" in first
    assert (pytester.path / "shared" / "named.json").exists()

    answer.write_text("Hello, second take")
    assert "MODE=replay REPLY=Hello, first take" in run_pytest(pytester)  # the file, not the model
    assert "MODE=record REPLY=Hello, second take" in run_pytest(pytester, "--record-cassettes")
    answer.write_text("Hello, third take")
    monkeypatch.setenv("FUNCWARE_RECORD_CASSETTES", "1")
    assert "MODE=record REPLY=Hello, third take" in run_pytest(pytester)
    assert "Hello, third take" in path.read_text()


def test_the_fixture_is_a_cassette_named_after_the_test(
    cassette: Cassette, request: pytest.FixtureRequest
) -> None:
    assert isinstance(cassette, Cassette)
    assert cassette.path == (
        Path(__file__).parent / "cassettes" / "test_cassette_fixture" / f"{request.node.name}.json"
    )
    assert cassette.recording is (
        not cassette.path.exists() or request.config.getoption("record_cassettes")
    )
