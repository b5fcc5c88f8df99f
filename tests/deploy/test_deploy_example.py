"""The deploy example and ``ScriptedChatModel(respond=...)``, in process (no server needed).

``deploy/agent.py`` is what ``langgraph dev`` serves; these tests run it with a local
checkpointer so the example stays right on every Python funcware supports, with or without
the ``server`` extra. ``test_server.py`` drives the same agent through the real server.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from deploy_support import DEPLOY, hook_line, load_deploy_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import ValidationError

from funcware import create_agent
from funcware.testing import ScriptedChatModel, ScriptExhaustedError

example = load_deploy_agent()


def served() -> Any:
    """The example agent with a checkpointer of its own, as the server gives it one."""
    return example.agent.copy(update={"checkpointer": InMemorySaver()})


def ask(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


# -- ScriptedChatModel(respond=...) --------------------------------------------------


def test_respond_answers_every_call_after_the_script() -> None:
    seen: list[list[BaseMessage]] = []

    def echo(messages: list[BaseMessage]) -> str:
        seen.append(messages)
        return f"echo {messages[-1].text}"

    model = ScriptedChatModel(responses=["scripted"], respond=echo)
    answers = [model.invoke([HumanMessage(text)]).content for text in ("a", "b", "c")]

    assert answers == ["scripted", "echo b", "echo c"]
    assert [m[-1].text for m in seen] == ["b", "c"]
    assert [call.messages[-1].text for call in model.calls] == ["a", "b", "c"]


def test_respond_alone_drives_an_agent_loop() -> None:
    def rule(messages: list[BaseMessage]) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return AIMessage(f"got {messages[-1].text}")
        return AIMessage("", tool_calls=[{"name": "double", "args": {"x": 21}, "id": "d1"}])

    def double(x: int) -> int:
        """Double a number."""
        return 2 * x

    agent = create_agent(ScriptedChatModel(respond=rule), [double])
    assert agent.invoke(ask("go"))["messages"][-1].content == "got 42"


def test_respond_returning_something_else_is_a_clear_error() -> None:
    model = ScriptedChatModel(respond=lambda messages: {"content": "hi"})  # type: ignore[arg-type,return-value]
    with pytest.raises(
        TypeError, match=r"respond\(\) returned a dict for call #0; return an AIMessage or a str"
    ):
        model.invoke("q")


def test_exhausted_script_names_respond_as_the_way_out() -> None:
    model = ScriptedChatModel(responses=["only"])
    model.invoke("q")
    with pytest.raises(ScriptExhaustedError, match="respond="):
        model.invoke("q")


# -- the deploy example, in process ---------------------------------------------------


def test_example_pipeline_nodes() -> None:
    assert list(example.agent.get_graph().nodes) == [
        "__start__",
        "model",
        "tools",
        "check_access.before_agent",
        "report_progress.before_model",
        "UsageCounter.after_model",
        "ApproveToolCalls.after_model",
        "__end__",
    ]


def test_example_answers_in_the_callers_language_and_counts_calls() -> None:
    agent = served()
    config = {"configurable": {"thread_id": "t1"}}
    chunks = list(
        agent.stream(
            ask("weather in Oslo"),
            config,
            context={"user_id": "ada", "language": "German"},
            stream_mode=["custom", "values"],
        )
    )
    custom = [data for mode, data in chunks if mode == "custom"]
    final = [data for mode, data in chunks if mode == "values"][-1]
    output = agent.invoke(ask("weather in Rome"), config, context={"user_id": "ada"})

    assert custom == [
        {"event": "model_call", "user": "ada", "messages": 1},
        {"event": "model_call", "user": "ada", "messages": 3},
    ]
    assert final["messages"][-1].content == "Done. Sunny in Oslo."
    assert final["model_calls"] == 2
    # Private: not in the run's output; but the values stream and the state hold every field.
    assert "billed_to" not in output and output["model_calls"] == 4
    assert final["billed_to"] == "ada"
    assert agent.get_state(config).values["billed_to"] == "ada"

    again = agent.invoke(ask("bonjour"), config, context={"user_id": "ada", "language": "French"})
    assert again["messages"][-1].content == "Vous avez dit: bonjour"


def test_example_pauses_for_approval_and_resumes_with_a_rejection() -> None:
    agent = served()
    config = {"configurable": {"thread_id": "t2"}}
    caller = {"user_id": "ada"}
    paused = agent.invoke(ask("email bob@corp about Q3"), config, context=caller)
    (pause,) = paused["__interrupt__"]
    assert pause.value == {
        "review": [
            {
                "tool_call_id": "call-2",
                "name": "send_email",
                "args": {"to": "bob@corp", "subject": "Q3"},
            }
        ]
    }
    decision = {"type": "reject", "message": "not before the audit"}
    done = agent.invoke(Command(resume={"decisions": [decision]}), config, context=caller)
    tool_reply = done["messages"][-2]
    assert isinstance(tool_reply, ToolMessage) and tool_reply.status == "error"
    assert done["messages"][-1].content == "Done. Rejected by a reviewer: not before the audit"


def test_example_blocked_user_error_names_the_hook_and_its_line() -> None:
    with pytest.raises(PermissionError, match="user 'mallory' may not use this assistant") as info:
        example.agent.invoke(ask("hi"), context={"user_id": "mallory"})
    line = hook_line(example, "check_access")
    note = info.value.__notes__[0]
    assert note.startswith("raised in middleware 'check_access', hook before_agent (defined at ")
    assert note.endswith(f"agent.py:{line})")


def test_example_context_is_validated_by_its_schema() -> None:
    with pytest.raises(ValidationError, match="language"):
        example.agent.invoke(ask("hi"), context={"user_id": "ada", "language": "Klingon"})
    with pytest.raises(ValueError, match="this agent needs a caller"):
        example.agent.invoke(ask("hi"))
    with pytest.raises(ValueError, match=r"^user_id is empty: pass the caller's id"):
        example.agent.invoke(ask("hi"), context={"user_id": " "})


def test_example_config_puts_the_notes_in_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    config = json.loads((DEPLOY / "langgraph.json").read_text(encoding="utf-8"))
    assert config["env"] == {"FUNCWARE_ERROR_NOTES": "message"}
    monkeypatch.setenv("FUNCWARE_ERROR_NOTES", config["env"]["FUNCWARE_ERROR_NOTES"])
    with pytest.raises(PermissionError) as info:
        example.agent.invoke(ask("hi"), context={"user_id": "mallory"})
    note = info.value.__notes__[0]
    assert str(info.value) == f"user 'mallory' may not use this assistant\n{note}"


def test_the_deployment_guide_shows_the_deploy_config_as_it_is() -> None:
    readme = (DEPLOY.parent / "docs" / "guides" / "deployment.md").read_text(encoding="utf-8")
    section = readme.split("## Deploy on LangGraph Server", 1)[1].split("\n## ", 1)[0]
    (shown,) = re.findall(r"```json\n(.*?)```", section, re.DOTALL)
    assert json.loads(shown) == json.loads((DEPLOY / "langgraph.json").read_text(encoding="utf-8"))
    assert "cd deploy && langgraph dev --no-browser --port 8123" in section
