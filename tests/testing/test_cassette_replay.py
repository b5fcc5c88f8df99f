"""Cassettes: a recorded run replays offline exactly, and any change to a request fails
loudly with a diff naming what changed, in sequence or by request, from threads and tasks.

The "real" model here is the kit's streaming scripted model; ``test_cassette_openai.py``
records ``ChatOpenAI`` itself.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from langchain_core.load import dumpd
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command
from pydantic import BaseModel

from funcware import ToolStrategy, create_agent, wrap_model_call
from funcware.testing import (
    Cassette,
    CassetteMismatchError,
    ScriptedChatModel,
    StreamingScriptedChatModel,
)

TASK_KEYS = {"checkpoint_ns", "langgraph_checkpoint_ns"}
"""Stream metadata naming the langgraph task: a fresh id on every run, cassette or not."""

tool_runs: list[dict[str, int]] = []


def add(a: int, b: int) -> int:
    """Add two numbers."""
    tool_runs.append({"a": a, "b": b})
    return a + b


def mul(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


def calls_add(a: int, b: int, call_id: str = "call_1") -> AIMessage:
    return AIMessage("", tool_calls=[{"name": "add", "args": {"a": a, "b": b}, "id": call_id}])


def real_model() -> StreamingScriptedChatModel:
    return StreamingScriptedChatModel(
        responses=[calls_add(2, 3), "2 + 3 = 5, as the tool says."], chunk_size=3
    )


def question(text: str = "What is 2 + 3?") -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


def stream_events(agent: Any, inputs: dict[str, Any] | None = None) -> str:
    """Every ``stream_mode="messages"`` event, serialized (task ids left out)."""
    events = [
        [dumpd(chunk), {k: v for k, v in meta.items() if k not in TASK_KEYS}]
        for chunk, meta in agent.stream(inputs or question(), stream_mode="messages")
    ]
    return json.dumps(events, sort_keys=True)


async def astream_events(agent: Any, inputs: dict[str, Any] | None = None) -> str:
    events = [
        [dumpd(chunk), {k: v for k, v in meta.items() if k not in TASK_KEYS}]
        async for chunk, meta in agent.astream(inputs or question(), stream_mode="messages")
    ]
    return json.dumps(events, sort_keys=True)


def adder(model: Any, middleware: list[Any], prompt: str = "You add numbers.") -> Any:
    return create_agent(model, [add], system_prompt=prompt, middleware=middleware)


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, str]:
    """A streamed tool-calling run recorded with its tool results, and what it streamed."""
    path = tmp_path / "adder.json"
    cassette = Cassette(path)
    events = stream_events(adder(cassette.record(real_model()), [cassette.record_tools()]))
    return path, events


def replayed_adder(path: Path, prompt: str = "You add numbers.", **options: Any) -> Any:
    cassette = Cassette(path, **options)
    return adder(cassette.replay(), [cassette.replay_tools()], prompt)


def test_a_streamed_tool_calling_run_replays_byte_for_byte_offline(
    recorded: tuple[Path, str],
) -> None:
    path, live = recorded
    runs_before = len(tool_runs)
    assert stream_events(replayed_adder(path)) == live
    assert len(tool_runs) == runs_before  # the tool never ran: its result came from the file
    assert (
        '"content": "2 +"' in live and "cassette-tool-call_1" in live
    )  # chunks and the tool result


async def test_an_async_streamed_run_replays_byte_for_byte(recorded: tuple[Path, str]) -> None:
    path, live = recorded
    assert await astream_events(replayed_adder(path)) == live


def test_recording_streams_what_the_model_alone_streams(recorded: tuple[Path, str]) -> None:
    _, live = recorded
    alone = json.loads(stream_events(adder(real_model(), [])))
    with_cassette = json.loads(live)
    assert [chunk["kwargs"]["content"] for chunk, _ in with_cassette] == [
        chunk["kwargs"]["content"] for chunk, _ in alone
    ]


def test_a_changed_system_prompt_fails_with_a_diff_naming_the_change(
    recorded: tuple[Path, str],
) -> None:
    path, _ = recorded
    with pytest.raises(CassetteMismatchError) as caught:
        stream_events(replayed_adder(path, prompt="You add numbers carefully."))
    message = str(caught.value)
    assert "model call #1 differs from the recorded model call #1" in message
    assert 'messages[0] (system) content: "You add numbers." -> "You add numbers carefully."' in (
        message
    )
    assert '-   "content": "You add numbers.",' in message
    assert '+   "content": "You add numbers carefully.",' in message
    assert "--record-cassettes" in message


def test_an_added_tool_fails_naming_it(recorded: tuple[Path, str]) -> None:
    path, _ = recorded
    cassette = Cassette(path)
    agent = create_agent(cassette.replay(), [add, mul], system_prompt="You add numbers.")
    with pytest.raises(CassetteMismatchError, match=r"tools: 'mul' added"):
        agent.invoke(question())


def test_a_changed_setting_fails_naming_it(recorded: tuple[Path, str]) -> None:
    path, _ = recorded

    @wrap_model_call
    def warmer(request: Any, handler: Any) -> Any:
        return handler(request.override(model_settings={"temperature": 0.7}))

    cassette = Cassette(path)
    agent = adder(cassette.replay(), [warmer, cassette.replay_tools()])
    with pytest.raises(CassetteMismatchError, match=r"settings.temperature: \(absent\) -> 0.7"):
        agent.invoke(question())


def test_a_changed_question_fails_naming_the_message(recorded: tuple[Path, str]) -> None:
    path, _ = recorded
    with pytest.raises(CassetteMismatchError, match=r"messages\[1\] \(human\) content"):
        replayed_adder(path).invoke(question("What is 2 + 4?"))


def test_a_call_past_the_recording_fails(recorded: tuple[Path, str]) -> None:
    path, _ = recorded
    agent = replayed_adder(path)
    agent.invoke(question())
    with pytest.raises(CassetteMismatchError, match=r"model call #3 was not recorded .*holds 2"):
        agent.invoke(question())


def test_a_tool_call_that_was_not_recorded_fails_with_a_diff(recorded: tuple[Path, str]) -> None:
    path, _ = recorded
    document = json.loads(path.read_text())
    document["tool_calls"][0]["request"]["args"] = {"a": 2, "b": 4}
    path.write_text(json.dumps(document))
    with pytest.raises(CassetteMismatchError) as caught:
        replayed_adder(path).invoke(question())
    assert "tool call #1 matches no recorded request" in str(caught.value)
    assert '-  "b": 4' in str(caught.value) and '+  "b": 3' in str(caught.value)


def test_a_tool_returning_a_command_is_refused_when_recording(tmp_path: Path) -> None:
    @tool
    def jump(x: int) -> Command[Any]:
        """Jump."""
        return Command(update={"messages": [ToolMessage("jumped", tool_call_id="j")]})

    cassette = Cassette(tmp_path / "c.json")
    model = ScriptedChatModel(
        responses=[AIMessage("", tool_calls=[{"name": "jump", "args": {"x": 1}, "id": "j"}])]
    )
    agent = create_agent(cassette.record(model), [jump], middleware=[cassette.record_tools()])
    with pytest.raises(TypeError, match=r"result of tool 'jump': it is Command"):
        agent.invoke(question())


# -- match="sequence" and match="request" ------------------------------------------------


def echo_model() -> ScriptedChatModel:
    return ScriptedChatModel(respond=lambda messages: f"answer to {messages[-1].text}")


def record_questions(path: Path, texts: list[str]) -> None:
    cassette = Cassette(path)
    agent = create_agent(cassette.record(echo_model()), [])
    for text in texts:
        agent.invoke(question(text))


def test_sequence_mode_refuses_another_order_and_request_mode_accepts_it(tmp_path: Path) -> None:
    path = tmp_path / "two.json"
    record_questions(path, ["first", "second"])
    in_order = create_agent(Cassette(path).replay(), [])
    with pytest.raises(CassetteMismatchError, match=r"messages\[0\] \(human\) content"):
        in_order.invoke(question("second"))
    any_order = create_agent(Cassette(path, match="request").replay(), [])
    assert any_order.invoke(question("second"))["messages"][-1].text == "answer to second"
    assert any_order.invoke(question("first"))["messages"][-1].text == "answer to first"
    with pytest.raises(CassetteMismatchError, match=r"no recorded answer left"):
        any_order.invoke(question("first"))


def test_request_mode_shows_the_nearest_recorded_request(tmp_path: Path) -> None:
    path = tmp_path / "two.json"
    record_questions(path, ["alpha question", "zeta"])
    agent = create_agent(Cassette(path).replay(match="request"), [])
    with pytest.raises(CassetteMismatchError) as caught:
        agent.invoke(question("alpha questions"))
    assert "nearest unused one is recorded #1" in str(caught.value)
    assert '"alpha question" -> "alpha questions"' in str(caught.value)


def test_equal_requests_get_their_answers_in_recorded_order(tmp_path: Path) -> None:
    path = tmp_path / "same.json"
    cassette = Cassette(path)
    model = cassette.record(ScriptedChatModel(responses=["one", "two"]))
    assert [model.invoke("hi").text, model.invoke("hi").text] == ["one", "two"]
    replay = Cassette(path, match="request").replay()
    assert [replay.invoke("hi").text, replay.invoke("hi").text] == ["one", "two"]


QUESTIONS = [f"question {n}" for n in range(6)]


def test_concurrent_threads_replay_each_run_its_own_answers(tmp_path: Path) -> None:
    path = tmp_path / "many.json"
    record_questions(path, QUESTIONS * 2)

    def ask_all() -> list[str]:
        agent = create_agent(Cassette(path, match="request").replay(), [])
        with ThreadPoolExecutor(max_workers=6) as pool:
            runs = pool.map(lambda t: agent.invoke(question(t)), QUESTIONS * 2)
            return [run["messages"][-1].text for run in runs]

    for _ in range(3):
        assert ask_all() == [f"answer to {t}" for t in QUESTIONS * 2]


async def test_asyncio_gather_replays_each_run_its_own_answers(tmp_path: Path) -> None:
    path = tmp_path / "many.json"
    record_questions(path, QUESTIONS)
    agent = create_agent(Cassette(path, match="request").replay(), [])

    async def ask(text: str) -> str:
        result = await agent.ainvoke(question(text))
        return str(result["messages"][-1].text)

    assert await asyncio.gather(*(ask(t) for t in QUESTIONS)) == [
        f"answer to {t}" for t in QUESTIONS
    ]


async def test_sequential_async_runs_replay_in_sequence(recorded: tuple[Path, str]) -> None:
    path, _ = recorded
    result = await replayed_adder(path).ainvoke(question())
    assert result["messages"][-1].text == "2 + 3 = 5, as the tool says."


# -- streamed and whole answers, structured output --------------------------------------


def test_a_streamed_recording_answers_an_invoke_with_the_whole_message(
    recorded: tuple[Path, str],
) -> None:
    path, _ = recorded
    result = replayed_adder(path).invoke(question())
    assert result["messages"][1].tool_calls[0]["args"] == {"a": 2, "b": 3}
    assert result["messages"][2] == ToolMessage(
        "5", name="add", tool_call_id="call_1", id="cassette-tool-call_1"
    )


def test_a_whole_recording_streams_as_one_last_chunk(tmp_path: Path) -> None:
    path = tmp_path / "whole.json"
    usage = {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}
    Cassette(path).record(
        ScriptedChatModel(responses=[AIMessage("all at once", usage_metadata=usage)])
    ).invoke("hi")
    chunks = list(Cassette(path).replay().stream("hi"))
    assert [(c.text, c.chunk_position) for c in chunks] == [("all at once", "last")]
    assert chunks[0].usage_metadata == usage


class Sum(BaseModel):
    total: int


def test_with_structured_output_records_and_replays(tmp_path: Path) -> None:
    path = tmp_path / "structured.json"
    call = AIMessage("", tool_calls=[{"name": "Sum", "args": {"total": 5}, "id": "s"}])
    recording = Cassette(path).record(ScriptedChatModel(responses=[call]))
    assert recording.with_structured_output(Sum).invoke("2 + 3?") == Sum(total=5)
    assert Cassette(path).replay().with_structured_output(Sum).invoke("2 + 3?") == Sum(total=5)
    with pytest.raises(CassetteMismatchError, match=r"tool_choice|tools: 'Sum'"):
        Cassette(path).replay().invoke("2 + 3?")


def test_an_agent_with_a_response_format_replays_its_structured_response(tmp_path: Path) -> None:
    path = tmp_path / "format.json"
    call = AIMessage("", tool_calls=[{"name": "Sum", "args": {"total": 5}, "id": "s"}])

    def run(model: Any) -> Any:
        agent = create_agent(model, [], response_format=ToolStrategy(Sum))
        return agent.invoke(question())["structured_response"]

    assert run(Cassette(path).record(ScriptedChatModel(responses=[call]))) == Sum(total=5)
    assert run(Cassette(path).replay()) == Sum(total=5)


async def test_an_async_recording_replays_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "async.json"
    recording = Cassette(path)
    live = await astream_events(adder(recording.record(real_model()), [recording.record_tools()]))
    assert await astream_events(replayed_adder(path)) == live
    assert stream_events(replayed_adder(path)) == live  # and sync replays it the same
    ainvoked = Cassette(tmp_path / "ainvoke.json")
    result = await adder(ainvoked.record(real_model()), []).ainvoke(question())
    replayed = await adder(Cassette(tmp_path / "ainvoke.json").replay(), []).ainvoke(question())
    assert replayed["messages"][-1].text == result["messages"][-1].text


def test_a_changed_tool_schema_and_a_setting_bound_after_the_tools_are_named(
    tmp_path: Path,
) -> None:
    path = tmp_path / "bound.json"
    recording = Cassette(path).record(ScriptedChatModel(responses=["ok"]))
    recording.bind_tools([add]).bind(temperature=0.1).invoke("hi")
    assert json.loads(path.read_text())["calls"][0]["request"]["settings"] == {"temperature": 0.1}
    assert Cassette(path).replay().bind_tools([add]).bind(temperature=0.1).invoke("hi").text == "ok"

    def add_floats(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    add_floats.__name__ = "add"
    with pytest.raises(CassetteMismatchError, match=r"tools: 'add' schema changed"):
        Cassette(path).replay().bind_tools([add_floats]).bind(temperature=0.1).invoke("hi")
    with pytest.raises(CassetteMismatchError, match=r"settings.temperature: 0.1 -> 0.9"):
        Cassette(path).replay().bind_tools([add]).bind(temperature=0.9).invoke("hi")
