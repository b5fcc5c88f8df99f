"""Stream transformers and projections: v3 streaming as LangChain's agents."""

from __future__ import annotations

import asyncio
import warnings
from functools import partial
from typing import Any

import pytest
from harness import contents, tool_calls
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.prebuilt import ToolCallTransformer
from support import hi
from transformers_support import MethodLog, Redacting, Scrubber

from funcware import before_model, compose, create_agent
from funcware.compose.stream.streaming import subagent_transformer
from funcware.compose.stream.subagents import AsyncSubagentRunStream
from funcware.testing import ScriptedChatModel

pytestmark = pytest.mark.filterwarnings("ignore:The v3 streaming protocol")


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"the secret of {key}"


def agent_with(*middleware: Any, **kwargs: Any) -> Any:
    model = ScriptedChatModel(responses=[tool_calls(("lookup", {"key": "x"})), "the secret is out"])
    return create_agent(model, [lookup], middleware=list(middleware), **kwargs)


def _subagents() -> Any:
    """The sub-agent projection every agent registers (it picks LangChain's transformer
    when LangChain is installed, funcware's otherwise)."""
    return subagent_transformer()


def test_agent_registers_tool_call_and_subagent_projections_first() -> None:
    agent = agent_with()
    assert list(agent.stream_transformers) == [ToolCallTransformer, _subagents()]


def test_transformers_come_from_middleware_then_create_agent_each_once() -> None:
    per_instance = partial(Scrubber, word="x")
    instance = Redacting()
    instance.name = "Other"
    instance.transformers = (per_instance, Scrubber)
    agent = agent_with(Redacting(), instance, transformers=[MethodLog, Scrubber])
    assert list(agent.stream_transformers) == [
        ToolCallTransformer,
        _subagents(),
        Scrubber,
        per_instance,
        MethodLog,
    ]


def test_a_composite_carries_its_members_transformers() -> None:
    @before_model
    def plain(state: Any) -> None:
        return None

    stack = compose(plain, Redacting())
    assert list(stack.transformers) == [Scrubber]
    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[stack])
    assert Scrubber in agent.stream_transformers


def test_a_middleware_transformer_governs_the_v3_stream_but_not_the_state() -> None:
    agent = agent_with(Redacting())
    run = agent.stream_events(hi(), version="v3")
    events = list(run)
    assert events, "the v3 run streamed nothing"
    assert "secret" not in repr([e["params"]["data"] for e in events])
    assert any("[gone]" in repr(e["params"]["data"]) for e in events)
    assert contents(agent_with(Redacting()).invoke(hi())["messages"])[-1] == "the secret is out"


def test_create_agent_transformers_project_onto_extensions() -> None:
    run = agent_with(transformers=[MethodLog]).stream_events(hi(), version="v3")
    methods = list(run.extensions["methods"])
    assert "updates" in methods


def test_run_tool_calls_shows_each_tool_call() -> None:
    run = agent_with().stream_events(hi(), version="v3")
    handles = list(run.tool_calls)
    seen = [(c.tool_call_id, c.tool_name, c.input, c.completed, c.output) for c in handles]
    assert seen == [("call-0", "lookup", {"key": "x"}, True, "the secret of x")]


def test_a_transformer_that_is_not_callable_is_refused_naming_its_owner() -> None:
    bad = Redacting()
    bad.transformers = (Scrubber(),)  # type: ignore[assignment]
    with pytest.raises(TypeError, match="middleware 'Redacting' has the transformer"):
        agent_with(bad)
    with pytest.raises(TypeError, match=r"create_agent\(transformers=...\)"):
        agent_with(transformers=["Scrubber"])


# -- lc_agent_name and sub-agents ------------------------------------------------------


def _metadata(mode: str, part: Any) -> dict[str, Any] | None:
    if mode == "messages":
        return part[1]  # type: ignore[no-any-return]
    payload = part["payload"] if mode == "debug" else part
    return payload.get("metadata")  # type: ignore[no-any-return]


def test_named_agent_metadata_reaches_every_stream_mode() -> None:
    for mode in ("messages", "debug", "tasks"):
        parts = list(agent_with(name="bot").stream(hi(), stream_mode=mode))
        metadata = [m for m in (_metadata(mode, part) for part in parts) if m is not None]
        assert len(metadata) >= 2, f"no metadata streamed in {mode} mode"
        assert all(m["lc_agent_name"] == "bot" for m in metadata), mode
        assert all("ls_integration" in m for m in metadata), mode


def test_unnamed_agent_streams_no_agent_name() -> None:
    for _, metadata in agent_with().stream(hi(), stream_mode="messages"):
        assert "lc_agent_name" not in metadata
        # the model's own chunks say the chat model's integration, the node's the agent's
        assert metadata["ls_integration"] in {"langchain_create_agent", "langchain_chat_model"}


def _boss() -> Any:
    @tool
    def ask_helper(question: str) -> str:
        """Ask the helper agent."""
        helper = create_agent(ScriptedChatModel(responses=["helper here"]), name="helper")
        return str(helper.invoke({"messages": [HumanMessage(question)]})["messages"][-1].text)

    model = ScriptedChatModel(responses=[tool_calls(("ask_helper", {"question": "?"})), "done"])
    return create_agent(model, [ask_helper], name="boss")


def test_a_named_agent_inside_a_tool_is_a_subagent() -> None:
    async def subagents() -> list[tuple[str, Any, Any, list[str]]]:
        run = await _boss().astream_events(hi(), version="v3")
        found = []
        async for handle in run.subagents:
            texts = [await m.text async for m in handle.messages]
            found.append((type(handle).__name__, handle.name, handle.cause, texts))
        return found

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = asyncio.run(subagents())
    assert len(found) == 1
    kind, name, cause, texts = found[0]
    assert kind == AsyncSubagentRunStream.__name__
    assert name == "helper"
    assert cause == {"type": "toolCall", "tool_call_id": "call-0"}
    assert texts == ["helper here"]


def test_an_unnamed_nested_agent_is_no_subagent() -> None:
    @tool
    def ask(question: str) -> str:
        """Ask an unnamed agent."""
        inner = create_agent(ScriptedChatModel(responses=[AIMessage("inner")]))
        return str(inner.invoke({"messages": [HumanMessage(question)]})["messages"][-1].text)

    async def count() -> tuple[int, int]:
        model = ScriptedChatModel(responses=[tool_calls(("ask", {"question": "?"})), "done"])
        run = await create_agent(model, [ask]).astream_events(hi(), version="v3")
        subagents = run.subagents.__aiter__()  # both subscribed before the run is pumped
        calls = run.tool_calls.__aiter__()
        return len([h async for h in subagents]), len([c async for c in calls])

    assert asyncio.run(count()) == (0, 1)
