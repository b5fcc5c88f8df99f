"""deepagents' ``create_deep_agent`` on funcware's ``create_agent`` (the ``deepagents`` extra).

deepagents calls ``langchain.agents.create_agent`` from its own modules; the ``on_funcware``
fixture points each of those at ``funcware.create_agent``, checks that the agent really is
funcware's, and the tests run real deep agents with a scripted model: memory, skills,
sub-agents, summarization, ``interrupt_on`` with a checkpointer, and streaming.

Skipped with a reason when deepagents is not installed (it needs Python 3.11+); with
``FUNCWARE_REQUIRE_DEEPAGENTS=1`` (CI) a missing deepagents is a failure instead.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from support import build_deep_agents_on_funcware, require_deepagents

import funcware
from funcware.testing import ScriptedChatModel

deepagents = require_deepagents()
from deepagents.backends import StateBackend  # noqa: E402
from deepagents.backends.utils import create_file_data  # noqa: E402


@pytest.fixture
def on_funcware(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """deepagents builds with funcware's create_agent; the agents it built."""
    return build_deep_agents_on_funcware(monkeypatch)


def _model(*responses: Any, **options: Any) -> ScriptedChatModel:
    return ScriptedChatModel(responses=list(responses), **options)


def _call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}]
    )


def _system_text(model: ScriptedChatModel, call: int = 0) -> str:
    first = model.calls[call].messages[0]
    assert first.type == "system"
    return str(first.text)


def _files(**files: str) -> dict[str, Any]:
    return {path: create_file_data(text) for path, text in files.items()}


def test_a_deep_agent_runs_its_tools_on_funcware(on_funcware: list[Any]) -> None:
    model = _model(
        _call("write_file", {"file_path": "/notes.md", "content": "hello"}, "c1"),
        _call("read_file", {"file_path": "/notes.md"}, "c2"),
        "wrote and read it",
    )
    agent = deepagents.create_deep_agent(model=model)

    result = agent.invoke({"messages": [HumanMessage("write a note")]})

    assert on_funcware and on_funcware[-1] is not None
    plan = funcware.explain(on_funcware[-1]).plan  # a funcware agent, with its plan
    assert "FilesystemMiddleware" in [m.name for m in plan.middleware]
    assert result["messages"][-1].content == "wrote and read it"
    assert "/notes.md" in result["files"]
    replies = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert "hello" in str(replies[-1].content)
    assert "write_file" in model.calls[0].tool_names


def test_memory_files_are_loaded_into_the_system_prompt(on_funcware: list[Any]) -> None:
    model = _model("remembered")
    agent = deepagents.create_deep_agent(model=model, memory=["/AGENTS.md"], backend=StateBackend())

    agent.invoke(
        {
            "messages": [HumanMessage("hi")],
            "files": _files(**{"/AGENTS.md": "Always answer in haiku."}),
        }
    )

    assert "Always answer in haiku." in _system_text(model)


def test_skills_are_listed_for_the_model(on_funcware: list[Any]) -> None:
    skill = (
        "---\nname: brewing\ndescription: How to brew tea properly.\n---\n\n# Brewing\nSteep 3 min."
    )
    model = _model("ok")
    agent = deepagents.create_deep_agent(model=model, skills=["/skills/"], backend=StateBackend())

    agent.invoke(
        {
            "messages": [HumanMessage("make tea")],
            "files": _files(**{"/skills/brewing/SKILL.md": skill}),
        }
    )

    system = _system_text(model)
    assert "brewing" in system
    assert "How to brew tea properly." in system


def test_a_sub_agent_answers_through_the_task_tool(on_funcware: list[Any]) -> None:
    model = _model(
        _call(
            "task",
            {"description": "find the capital of France", "subagent_type": "researcher"},
            "t1",
        ),
        "Paris, says the researcher",  # the sub-agent's answer (same scripted model)
        "The capital is Paris.",
    )
    agent = deepagents.create_deep_agent(
        model=model,
        subagents=[
            {
                "name": "researcher",
                "description": "Looks things up.",
                "system_prompt": "You are a careful researcher.",
            }
        ],
    )

    result = agent.invoke({"messages": [HumanMessage("capital of France?")]})

    assert result["messages"][-1].content == "The capital is Paris."
    reply = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert "Paris, says the researcher" in str(reply.content)
    assert "You are a careful researcher." in _system_text(model, 1)
    assert len(on_funcware) >= 2  # the sub-agent was built by funcware too


def test_a_long_history_is_summarized(on_funcware: list[Any]) -> None:
    # The window must hold what stays after the summary: deepagents' own system prompt and
    # tools are about 2,700 tokens (0.7.32), and deepagents 0.7.32 refuses a request still over
    # 95% of the window after compaction (ContextOverflowError, with LangChain's create_agent
    # too). The history (about 2,800 tokens) must still push the first request past the 85% of
    # the window that triggers the summary.
    model = _model(
        "SUMMARY: the user talked about many long things.",
        "answered after the summary",
        profile={"max_input_tokens": 5_000},
    )
    agent = deepagents.create_deep_agent(model=model)
    history: list[Any] = []
    for index in range(8):
        history.append(HumanMessage(f"question {index}: " + "lorem ipsum " * 60))
        history.append(AIMessage(f"answer {index}: " + "dolor sit amet " * 40))
    history.append(HumanMessage("and now?"))

    result = agent.invoke({"messages": history})

    assert result["messages"][-1].content == "answered after the summary"
    assert len(model.calls) == 2
    last_request = model.calls[1].messages
    assert any("the user talked about many long things" in str(m.content) for m in last_request)
    assert len(last_request) < len(history)


def test_interrupt_on_pauses_a_tool_until_a_human_approves(on_funcware: list[Any]) -> None:
    model = _model(
        _call("write_file", {"file_path": "/plan.md", "content": "step 1"}, "w1"),
        "written after approval",
    )
    agent = deepagents.create_deep_agent(
        model=model, interrupt_on={"write_file": True}, checkpointer=InMemorySaver()
    )
    config: Any = {"configurable": {"thread_id": "approve"}}

    paused = agent.invoke({"messages": [HumanMessage("plan it")]}, config)
    assert "__interrupt__" in paused
    request = paused["__interrupt__"][0].value
    assert request["action_requests"][0]["name"] == "write_file"
    assert "/plan.md" not in agent.get_state(config).values.get("files", {})

    result = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)

    assert result["messages"][-1].content == "written after approval"
    assert "/plan.md" in result["files"]


async def test_a_deep_agent_streams_updates_and_messages(on_funcware: list[Any]) -> None:
    model = _model(_call("ls", {"path": "/"}, "l1"), "listed")
    agent = deepagents.create_deep_agent(model=model)

    modes: dict[str, list[Any]] = {"updates": [], "messages": []}
    async for mode, chunk in agent.astream(
        {"messages": [HumanMessage("what is there?")]}, stream_mode=["updates", "messages"]
    ):
        modes[mode].append(chunk)

    updated_nodes = [node for update in modes["updates"] for node in update]
    assert "model" in updated_nodes and "tools" in updated_nodes
    streamed = [message for message, _ in modes["messages"]]
    assert any(getattr(m, "content", None) == "listed" for m in streamed)
    assert any(isinstance(m, ToolMessage) and m.tool_call_id == "l1" for m in streamed)
