"""Run-level control on the real LangGraph Server, driven with langgraph-sdk as a client would:
a run's config switches middleware off and on (``configurable.funcware``), a required one
cannot be switched off, ``wrap_agent_call`` wraps served runs, and a paused run resumes.

Serves ``run_control_graph.run_control`` from its own ``langgraph dev`` (in memory). Needs the
``server`` extra: skipped without it, failed when ``FUNCWARE_REQUIRE_SERVER=1`` (CI).
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from server_support import DevServer, langgraph_cli

_NEEDED = ("langgraph_api", "langgraph_runtime_inmem", "langgraph_sdk", "langgraph_cli")
_missing = [name for name in _NEEDED if importlib.util.find_spec(name) is None]
if langgraph_cli() is None:
    _missing.append("the `langgraph` executable")
if _missing and os.environ.get("FUNCWARE_REQUIRE_SERVER") == "1":
    pytest.fail(f"FUNCWARE_REQUIRE_SERVER=1 but {', '.join(_missing)} missing", pytrace=False)
if _missing:
    pytest.skip(
        f"the LangGraph Server tests need the `server` extra ({', '.join(_missing)} missing)",
        allow_module_level=True,
    )

from langgraph_sdk import get_client  # noqa: E402
from langgraph_sdk.client import LangGraphClient  # noqa: E402

TESTS = Path(__file__).resolve().parent
GRAPH = "run_control"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    workdir = tmp_path_factory.mktemp("run-control")
    graphs = {GRAPH: f"{TESTS / 'run_control_graph.py'}:run_control"}
    config = {"dependencies": [str(TESTS)], "graphs": graphs, "disable_persistence": True}
    (workdir / "langgraph.json").write_text(json.dumps(config))
    dev = DevServer(workdir, workdir / "server.log")
    try:
        dev.start()
        yield dev
    finally:
        dev.stop()


@pytest.fixture
async def client(server: DevServer) -> AsyncIterator[LangGraphClient]:
    async with get_client(url=server.url) as lg:
        yield lg


async def run(
    client: LangGraphClient,
    text: str | None,
    choice: Any = None,
    *,
    thread: str | None = None,
    resume: Any = None,
) -> tuple[str, list[tuple[str, Any]]]:
    """One streamed run (a new thread unless given); its thread and ``(event, data)`` pairs."""
    thread_id = thread or (await client.threads.create())["thread_id"]
    config = {"configurable": {"funcware": choice}} if choice is not None else None
    kwargs: dict[str, Any] = (
        {"command": {"resume": resume}}
        if resume is not None
        else {"input": {"messages": [{"role": "user", "content": text}]}}
    )
    parts = client.runs.stream(thread_id, GRAPH, config=config, stream_mode="values", **kwargs)
    return thread_id, [(part.event, part.data) async for part in parts]


def last_messages(events: list[tuple[str, Any]]) -> list[str]:
    values = [data for event, data in events if event == "values"]
    return [m["content"] for m in values[-1]["messages"]]


async def test_a_client_switches_middleware_per_run(client: LangGraphClient) -> None:
    _, events = await run(client, "hi")
    assert last_messages(events) == [
        "hi",
        "welcome",
        "model saw: hi [access] [tracer]",
        "through wrap_agent_call",
    ]
    choice = {"disable": ["tracer", "greeting"], "add": ["audit"]}
    _, events = await run(client, "hi", choice)
    assert last_messages(events) == [
        "hi",
        "model saw: hi [access] [audit]",
        "through wrap_agent_call",
    ]
    _, events = await run(client, "hi")  # the next run has the default stack again
    assert last_messages(events)[2] == "model saw: hi [access] [tracer]"


async def test_a_client_cannot_switch_off_a_required_middleware(client: LangGraphClient) -> None:
    _, events = await run(client, "hi", {"disable": ["access"]})
    errors = [data for event, data in events if event == "error"]
    assert errors and errors[0]["error"] == "RunConfigError"
    assert "per_run='required'" in errors[0]["message"]


async def test_a_paused_run_resumes_with_its_choice(client: LangGraphClient) -> None:
    choice = {"disable": ["tracer"]}
    thread, events = await run(client, "pause please", choice)
    interrupts = [data for event, data in events if event == "values" and "__interrupt__" in data]
    assert interrupts and interrupts[-1]["__interrupt__"][0]["value"] == "continue?"
    _, events = await run(client, None, choice, thread=thread, resume="yes")
    assert last_messages(events)[-2:] == [
        "model saw: pause please [access]",
        "through wrap_agent_call",
    ]
    state = await client.threads.get_state(thread)
    assert [m["content"] for m in state["values"]["messages"]] == [
        "pause please",
        "welcome",
        "model saw: pause please [access]",
    ]
