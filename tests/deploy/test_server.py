"""The deploy example on the real LangGraph Server, driven with langgraph-sdk as a client would.

One ``langgraph dev`` (in-memory runtime) per session, started in ``deploy/`` on a free
loopback port and always stopped (``server_support.DevServer``). Each test talks to it only
through the HTTP API: threads, streamed runs (``values``, ``updates``, ``messages``,
``custom``), the run's context, interrupts resumed with decisions, concurrent threads, the
thread's state and history, the graph and schema endpoints, and errors as the server
reports them. What the server shows is compared with the same agent run in process where
that is the claim (graph, history).

Needs the ``server`` extra (Python 3.11+): skipped without it, failed when
``FUNCWARE_REQUIRE_SERVER=1`` (CI). The deployment guide's client blocks (fenced ``py``) for the
"Deploy on LangGraph Server" section run here too, against this server.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from deploy_support import DEPLOY, hook_line, load_deploy_agent
from server_support import DevServer, langgraph_cli

REQUIRE_SERVER = "FUNCWARE_REQUIRE_SERVER"
_NEEDED = ("langgraph_api", "langgraph_runtime_inmem", "langgraph_sdk", "langgraph_cli")
_missing = [name for name in _NEEDED if importlib.util.find_spec(name) is None]
if langgraph_cli() is None:
    _missing.append("the `langgraph` executable")
if _missing and os.environ.get(REQUIRE_SERVER) == "1":
    pytest.fail(
        f"{REQUIRE_SERVER}=1 but {', '.join(_missing)} missing; "
        "install the extra (Python 3.11+): pip install -e '.[server]'",
        pytrace=False,
    )
if _missing:
    pytest.skip(
        f"the LangGraph Server tests need the `server` extra ({', '.join(_missing)} missing)",
        allow_module_level=True,
    )

from langgraph_sdk import get_client  # noqa: E402
from langgraph_sdk.client import LangGraphClient  # noqa: E402
from langgraph_sdk.errors import UnprocessableEntityError  # noqa: E402

GRAPH = "assistant"
GUIDE_URL = "http://127.0.0.1:8123"  # the port the deployment guide starts the server on
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "deployment.md"
ADA = {"user_id": "ada", "language": "German"}
PIPELINE = ["check_access.before_agent", "report_progress.before_model", "model"]
AFTER_MODEL = ["ApproveToolCalls.after_model", "UsageCounter.after_model"]
example = load_deploy_agent()


@pytest.fixture(scope="session")
def server(
    tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Iterator[DevServer]:
    dev = DevServer(DEPLOY, tmp_path_factory.mktemp("langgraph-dev") / "server.log")
    try:
        dev.start()
        capture = pytestconfig.pluginmanager.get_plugin("capturemanager")
        reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
        if capture is not None and reporter is not None:
            with capture.global_and_fixture_disabled():
                reporter.write_line(
                    f"langgraph dev healthy at {dev.url} in {dev.startup_seconds:.1f}s"
                )
        yield dev
    finally:
        dev.stop()
    assert not dev.running


@pytest.fixture
async def client(server: DevServer) -> AsyncIterator[LangGraphClient]:
    async with get_client(url=server.url) as lg:
        yield lg


async def run(
    client: LangGraphClient,
    thread_id: str,
    *,
    context: Any,
    stream_mode: list[str] | str = "updates",
    text: str | None = None,
    resume: Any = None,
) -> list[tuple[str, Any]]:
    """One run on ``thread_id`` (a new message, or a resume), as ``(event, data)`` pairs."""
    kwargs: dict[str, Any] = (
        {"input": {"messages": [{"role": "user", "content": text}]}}
        if resume is None
        else {"command": {"resume": resume}}
    )
    parts = client.runs.stream(thread_id, GRAPH, context=context, stream_mode=stream_mode, **kwargs)
    return [(part.event, part.data) async for part in parts]


async def new_thread(client: LangGraphClient) -> str:
    thread_id: str = (await client.threads.create())["thread_id"]
    return thread_id


def of(events: list[tuple[str, Any]], kind: str) -> list[Any]:
    return [data for event, data in events if event == kind]


def contents(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(message["type"], message["content"]) for message in messages]


def updated_nodes(events: list[tuple[str, Any]]) -> list[str]:
    return [node for update in of(events, "updates") for node in update]


# -- streaming -------------------------------------------------------------------------


async def test_run_streams_values_updates_messages_and_custom(client: LangGraphClient) -> None:
    thread_id = await new_thread(client)
    events = await run(
        client,
        thread_id,
        context=ADA,
        text="weather in Oslo",
        stream_mode=["values", "updates", "messages", "custom"],
    )

    assert events[0][0] == "metadata" and events[-1][0] != "error"
    # updates: one per graph node, in pipeline order (two model turns around the tool)
    one_turn = [*PIPELINE[1:], *AFTER_MODEL]
    assert updated_nodes(events) == [PIPELINE[0], *one_turn, "tools", *one_turn]
    # custom: what report_progress wrote with the run's context
    assert of(events, "custom") == [
        {"event": "model_call", "user": "ada", "messages": 1},
        {"event": "model_call", "user": "ada", "messages": 3},
    ]
    # messages: each message complete (the scripted model does not stream tokens), with
    # the node that produced it in the metadata
    complete = [message for batch in of(events, "messages/complete") for message in batch]
    assert [(m["type"], m["content"]) for m in complete] == [
        ("ai", ""),
        ("tool", "Sunny in Oslo."),
        ("ai", "Done. Sunny in Oslo."),
    ]
    assert complete[0]["tool_calls"][0]["args"] == {"city": "Oslo"}
    nodes = {
        message_id: meta["metadata"]["langgraph_node"]
        for batch in of(events, "messages/metadata")
        for message_id, meta in batch.items()
    }
    assert [nodes[m["id"]] for m in complete] == ["model", "tools", "model"]
    # values: the whole state after each step; the last one is the result
    final = of(events, "values")[-1]
    assert contents(final["messages"])[-1] == ("ai", "Done. Sunny in Oslo.")
    assert final["model_calls"] == 2


async def test_context_reaches_the_hooks_and_the_prompt(client: LangGraphClient) -> None:
    thread_id = await new_thread(client)
    french = await run(
        client,
        thread_id,
        context={"user_id": "bo", "language": "French"},
        text="bonjour",
        stream_mode=["values", "custom"],
    )
    german = await run(client, thread_id, context=ADA, text="hallo", stream_mode="values")

    assert contents(of(french, "values")[-1]["messages"])[-1] == ("ai", "Vous avez dit: bonjour")
    assert of(french, "custom") == [{"event": "model_call", "user": "bo", "messages": 1}]
    # same thread, next run, another context: the prompt follows the run, not the thread
    assert contents(of(german, "values")[-1]["messages"])[-1] == ("ai", "Sie sagten: hallo")


# -- human approval: interrupt, then resume with a decision -------------------------------

DECISIONS: dict[str, tuple[dict[str, Any], tuple[str, str], str]] = {
    "approve": (
        {"type": "approve"},
        ("tool", "E-mail 'Q3' sent to bob@corp."),
        "Done. E-mail 'Q3' sent to bob@corp.",
    ),
    "edit": (
        {"type": "edit", "args": {"to": "board@corp", "subject": "Q3"}},
        ("tool", "E-mail 'Q3' sent to board@corp."),
        "Done. E-mail 'Q3' sent to board@corp.",
    ),
    "reject": (
        {"type": "reject", "message": "not before the audit"},
        ("tool", "Rejected by a reviewer: not before the audit"),
        "Done. Rejected by a reviewer: not before the audit",
    ),
}


@pytest.mark.parametrize("kind", sorted(DECISIONS))
async def test_approval_interrupts_and_resumes(client: LangGraphClient, kind: str) -> None:
    decision, tool_reply, answer = DECISIONS[kind]
    thread_id = await new_thread(client)
    paused = await run(client, thread_id, context=ADA, text="email bob@corp about Q3")

    (interrupt,) = of(paused, "updates")[-1]["__interrupt__"]
    review = {
        "tool_call_id": "call-2",
        "name": "send_email",
        "args": {"to": "bob@corp", "subject": "Q3"},
    }
    assert interrupt["value"] == {"review": [review]}
    thread = await client.threads.get(thread_id)
    assert thread["status"] == "interrupted"
    state = await client.threads.get_state(thread_id)
    assert state["next"] == ["ApproveToolCalls.after_model"]
    assert [i["value"] for i in state["interrupts"]] == [{"review": [review]}]

    resumed = await run(
        client, thread_id, context=ADA, resume={"decisions": [decision]}, stream_mode="values"
    )
    messages = of(resumed, "values")[-1]["messages"]
    assert contents(messages)[-2:] == [tool_reply, ("ai", answer)]
    assert messages[1]["tool_calls"][0]["id"] == "call-2"  # reviewed in place, same message
    assert len(messages) == 4
    assert (await client.threads.get(thread_id))["status"] == "idle"


# -- concurrency --------------------------------------------------------------------------


async def test_two_threads_at_once_do_not_mix(client: LangGraphClient) -> None:
    paused_id, first_id, second_id = [await new_thread(client) for _ in range(3)]
    await run(client, paused_id, context=ADA, text="email bob@corp about Q3")  # left waiting

    first, second = await asyncio.gather(
        run(
            client,
            first_id,
            context={"user_id": "bo", "language": "French"},
            text="weather in Paris",
            stream_mode=["values", "custom"],
        ),
        run(
            client,
            second_id,
            context={"user_id": "cy"},
            text="weather in Rome",
            stream_mode=["values", "custom"],
        ),
    )

    assert {event["user"] for event in of(first, "custom")} == {"bo"}
    assert {event["user"] for event in of(second, "custom")} == {"cy"}
    for thread_id, city, user in ((first_id, "Paris", "bo"), (second_id, "Rome", "cy")):
        state = await client.threads.get_state(thread_id)
        assert contents(state["values"]["messages"]) == [
            ("human", f"weather in {city}"),
            ("ai", ""),
            ("tool", f"Sunny in {city}."),
            ("ai", f"Done. Sunny in {city}."),
        ]
        assert state["values"]["billed_to"] == user
    paused = await client.threads.get_state(paused_id)
    assert paused["next"] == ["ApproveToolCalls.after_model"]
    assert contents(paused["values"]["messages"])[0] == ("human", "email bob@corp about Q3")
    assert len(paused["values"]["messages"]) == 2


# -- thread state and history ---------------------------------------------------------------


async def test_thread_state_and_history_match_an_in_process_run(client: LangGraphClient) -> None:
    thread_id = await new_thread(client)
    await run(client, thread_id, context=ADA, text="weather in Oslo")

    state = await client.threads.get_state(thread_id)
    values = state["values"]
    assert state["next"] == [] and state["tasks"] == []
    assert contents(values["messages"])[-1] == ("ai", "Done. Sunny in Oslo.")
    assert values["model_calls"] == 2
    # The thread's state holds every field, the private one too (it is kept out of the
    # input and output schemas, not out of the checkpoint).
    assert values["billed_to"] == "ada"

    history = await client.threads.get_history(thread_id, limit=100)
    local = example.agent.copy(update={"checkpointer": _memory_saver()})
    config = {"configurable": {"thread_id": "local"}}
    local.invoke({"messages": [("user", "weather in Oslo")]}, config, context=ADA)
    expected = [list(snapshot.next) for snapshot in local.get_state_history(config)]
    assert [snapshot["next"] for snapshot in history] == expected
    assert history[0]["checkpoint"]["checkpoint_id"] == state["checkpoint"]["checkpoint_id"]
    assert [h["metadata"]["step"] for h in history] == list(range(len(history) - 2, -2, -1))


def _memory_saver() -> Any:
    from langgraph.checkpoint.memory import InMemorySaver

    return InMemorySaver()


# -- graph and schema endpoints --------------------------------------------------------------


async def _assistant_id(client: LangGraphClient) -> str:
    (assistant,) = await client.assistants.search(graph_id=GRAPH)
    assistant_id: str = assistant["assistant_id"]
    return assistant_id


async def test_graph_endpoint_shows_the_middleware_nodes(client: LangGraphClient) -> None:
    graph = await client.assistants.get_graph(await _assistant_id(client))

    local = example.agent.get_graph()
    assert [node["id"] for node in graph["nodes"]] == list(local.nodes)
    assert {n["id"] for n in graph["nodes"]} >= {*PIPELINE, *AFTER_MODEL, "tools"}
    served_edges = {(e["source"], e["target"], e.get("conditional", False)) for e in graph["edges"]}
    assert served_edges == {(e.source, e.target, e.conditional) for e in local.edges}


async def test_schema_endpoints_show_input_output_and_context(client: LangGraphClient) -> None:
    schemas = await client.assistants.get_schemas(await _assistant_id(client))

    input_fields = set(schemas["input_schema"]["properties"])
    output_fields = set(schemas["output_schema"]["properties"])
    assert {"messages", "model_calls"} <= input_fields
    assert {"messages", "model_calls"} <= output_fields
    assert "billed_to" not in input_fields | output_fields  # PrivateStateAttr
    assert "jump_to" not in input_fields | output_fields
    assert schemas["input_schema"] == example.agent.get_input_jsonschema()
    assert schemas["output_schema"] == example.agent.get_output_jsonschema()
    context = schemas["context_schema"]
    assert context["title"] == "Caller"
    assert context["required"] == ["user_id"]
    assert context["properties"]["language"]["enum"] == ["English", "French", "German"]


# -- errors -----------------------------------------------------------------------------------


def the_note(hook: str) -> str:
    """funcware's note for a hook of the example, as a pattern: middleware, hook, file:line."""
    line = hook_line(example, hook)
    where = rf"\S*deploy/(\./)?agent\.py:{line}\)"
    return re.escape(f"raised in middleware {hook!r}, hook before_agent (defined at ") + where


async def test_hook_error_reaches_the_client_as_the_server_reports_it(
    client: LangGraphClient, server: DevServer
) -> None:
    thread_id = await new_thread(client)
    events = await run(client, thread_id, context={"user_id": "mallory"}, text="hi")

    # The stream ends with the server's error event: the exception's type; its message is
    # withheld by the server for exception types outside its list of safe builtins.
    assert events[-1] == (
        "error",
        {"error": "PermissionError", "message": "An internal error occurred"},
    )
    thread = await client.threads.get(thread_id)
    assert thread["status"] == "error"
    # The failed task, in the thread's state: the node names the middleware and the hook,
    # and the exception's repr carries funcware's note (langgraph.json sets
    # FUNCWARE_ERROR_NOTES=message; the server started with it unset).
    (task,) = (await client.threads.get_state(thread_id))["tasks"]
    assert task["name"] == "check_access.before_agent"
    message = "user 'mallory' may not use this assistant"
    expected = "PermissionError" + re.escape(f'("{message}\\n') + the_note("check_access") + '"\\)'
    assert re.fullmatch(expected, task["error"]), task["error"]
    # The note is in the traceback the server logs too.
    log = server.wait_for_log("raised in middleware 'check_access', hook before_agent")
    assert re.search(the_note("check_access"), log), log[-3000:]


async def test_a_safe_builtin_error_streams_its_message_with_the_note(
    client: LangGraphClient,
) -> None:
    thread_id = await new_thread(client)
    events = await run(client, thread_id, context={"user_id": " "}, text="hi")

    # A ValueError is on the server's list: its message reaches the client, note included.
    event, error = events[-1]
    assert event == "error" and error["error"] == "ValueError"
    first = "user_id is empty: pass the caller's id as context={'user_id': ...}"
    assert re.fullmatch(re.escape(first + "\n") + the_note("check_access"), error["message"])
    (task,) = (await client.threads.get_state(thread_id))["tasks"]
    assert task["error"].startswith("ValueError(") and "raised in middleware" in task["error"]


async def test_bad_context_gets_the_servers_validation_error(client: LangGraphClient) -> None:
    thread_id = await new_thread(client)
    # Not an object: the server refuses the request against its API schema.
    with pytest.raises(UnprocessableEntityError, match=r'"oops" is not of type "object"'):
        await run(client, thread_id, context="oops", text="hi")

    # An object the context schema rejects: the run fails with pydantic's validation error,
    # reported with its message (a ValueError), before any node runs.
    events = await run(
        client, thread_id, context={"user_id": "ada", "language": "Klingon"}, text="hi"
    )
    error = events[-1]
    assert error[0] == "error" and error[1]["error"] == "ValidationError"
    assert "1 validation error for Caller" in error[1]["message"]
    assert "Input should be 'English', 'French' or 'German'" in error[1]["message"]

    missing = await run(client, await new_thread(client), context={"language": "French"}, text="hi")
    assert missing[-1][0] == "error" and "user_id\n  Field required" in missing[-1][1]["message"]
    # Refused before the first step: nothing of the run reached the thread.
    assert (await client.threads.get_state(thread_id))["values"] == {}
    assert await client.threads.get_history(thread_id) == []


# -- the deployment guide --------------------------------------------------------------------------


def _guide_client_blocks() -> list[str]:
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("## Deploy on LangGraph Server", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```py\n(.*?)```", section, re.DOTALL)


def test_the_deployment_guides_client_runs_against_the_server(server: DevServer) -> None:
    blocks = _guide_client_blocks()
    assert blocks, "the deployment guide has no client example"
    namespace: dict[str, object] = {"__name__": "deployment_guide_client"}
    for index, block in enumerate(blocks):
        assert GUIDE_URL in block or index > 0
        code = block.replace(GUIDE_URL, server.url)
        exec(compile(code, f"deployment.md[client {index}]", "exec"), namespace)
