"""LangChain's middleware catalog in ``funcware.create_agent``, checked against LangChain's own.

Each class exported by ``langchain.agents.middleware`` that the other interop files do not
reach (``AutoModeMiddleware``, ``ModelRouterMiddleware``, ``FilesystemFileSearchMiddleware``,
``ShellToolMiddleware``, ``ProviderToolSearchMiddleware``) runs here the way LangChain's
unit tests drive it: a scripted model, the middleware's own tools, and assertions on the
final state, the messages, what the model and the decision model received, and the errors.
``ToolCallLimitMiddleware``'s two exit behaviours are compared message for message.
Every test runs on both ``funcware.create_agent`` and ``langchain.agents.create_agent``, so
a difference between the two shows up as one side failing.

Needs the ``langchain`` extra; skipped without it, failed when ``FUNCWARE_REQUIRE_LANGCHAIN=1``
(CI).
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from pydantic import Field
from support import call, calls_tool, require_langchain

import funcware
from funcware.testing import ScriptedChatModel

lc_agents = require_langchain("langchain.agents")
lc_mw = require_langchain("langchain.agents.middleware")
decisions = require_langchain("langchain_core.decisions")
lc_tcl = require_langchain("langchain.agents.middleware.tool_call_limit")

SIDES = ["funcware", "langchain"]
MODES = ["invoke", "ainvoke"]


def build(side: str, model: Any, tools: Sequence[Any] = (), **kw: Any) -> Any:
    """The same agent on either library."""
    make = funcware.create_agent if side == "funcware" else lc_agents.create_agent
    return make(model, list(tools), **kw)


def run(agent: Any, mode: str, inputs: dict[str, Any] | None = None) -> dict[str, Any]:
    inputs = inputs if inputs is not None else {"messages": [HumanMessage("hi")]}
    if mode == "ainvoke":
        result: dict[str, Any] = asyncio.run(agent.ainvoke(inputs))
    else:
        result = agent.invoke(inputs)
    return result


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


class ScriptedDecisions(decisions.BaseDecisionModel):  # type: ignore[misc,name-defined]
    """A decision model that answers from a list and records every request."""

    model: str = "scripted-decisions"
    answers: list[Any] = Field(default_factory=list)
    seen: list[Any] = Field(default_factory=list)

    @property
    def _provider(self) -> str:
        return "scripted"

    def _classify(self, state: Any, questions: dict[str, Any]) -> Any:
        self.seen.append({"state": state, "questions": questions})
        answer = self.answers[len(self.seen) - 1]
        return decisions.ClassifierResponse(model=self.model, answers=answer)


def noul(probability: float) -> dict[str, Any]:
    return {"is_risky": {"type": "noul", "noul": probability}}


def route(label: str) -> dict[str, Any]:
    return {
        "model_route": {
            "type": "choice",
            "choice": label,
            "probabilities": {"fast": 0.1, "deep": 0.1, label: 0.9},
            "confidence": 0.8,
        }
    }


# --- AutoModeMiddleware -------------------------------------------------------------


def guarded_tools() -> tuple[list[str], list[BaseTool]]:
    ran: list[str] = []

    @tool
    def delete_file(path: str) -> str:
        """Delete a file."""
        ran.append(f"delete {path}")
        return f"deleted {path}"

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        ran.append(f"read {path}")
        return f"contents of {path}"

    return ran, [delete_file, read_file]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("side", SIDES)
def test_auto_mode_lets_a_low_risk_call_run_and_shows_the_classifier_the_call(
    side: str, mode: str
) -> None:
    ran, tools = guarded_tools()
    classifier = ScriptedDecisions(answers=[noul(0.2)], seen=[])
    model = ScriptedChatModel(
        responses=[calls_tool(call("delete_file", {"path": "a.txt"}, "c1")), "done"]
    )
    agent = build(
        side,
        model,
        tools,
        middleware=[lc_mw.AutoModeMiddleware(tools=["delete_file"], classifier=classifier)],
    )
    result = run(agent, mode)
    assert ran == ["delete a.txt"]
    [reply] = tool_messages(result)
    assert reply.content == "deleted a.txt" and reply.status == "success"
    [request] = classifier.seen
    state = request["state"]
    assert state["tool_call"] == {"id": "c1", "name": "delete_file", "args": {"path": "a.txt"}}
    assert state["tool_description"] == "Delete a file."
    assert [m.content for m in state["messages"]] == ["hi", ""]
    assert list(request["questions"]) == ["is_risky"]
    assert result["messages"][-1].content == "done"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("side", SIDES)
def test_auto_mode_blocks_a_risky_call_without_running_the_tool(side: str, mode: str) -> None:
    ran, tools = guarded_tools()
    classifier = ScriptedDecisions(answers=[noul(0.5)], seen=[])
    model = ScriptedChatModel(
        responses=[calls_tool(call("delete_file", {"path": "a.txt"}, "c1")), "ok"]
    )
    agent = build(
        side,
        model,
        tools,
        middleware=[lc_mw.AutoModeMiddleware(tools=tools[:1], classifier=classifier)],
    )
    result = run(agent, mode)
    assert ran == []
    [reply] = tool_messages(result)
    assert reply.status == "error"
    assert reply.tool_call_id == "c1" and reply.name == "delete_file"
    assert reply.content == (
        "The tool call `delete_file` was blocked because it was classified as risky "
        "(probability: 0.50). The tool was not executed."
    )
    # the model saw the refusal on its second call
    assert model.calls[1].messages[-1].content == reply.content


@pytest.mark.parametrize("side", SIDES)
def test_auto_mode_passes_unlisted_tools_through_unclassified(side: str) -> None:
    ran, tools = guarded_tools()
    classifier = ScriptedDecisions(answers=[noul(0.99)], seen=[])
    model = ScriptedChatModel(
        responses=[
            calls_tool(
                call("read_file", {"path": "b"}, "c1"), call("delete_file", {"path": "a"}, "c2")
            ),
            "ok",
        ]
    )
    agent = build(
        side,
        model,
        tools,
        middleware=[lc_mw.AutoModeMiddleware(tools=["delete_file"], classifier=classifier)],
    )
    result = run(agent, "invoke")
    assert ran == ["read b"]
    assert [(m.tool_call_id, m.status) for m in tool_messages(result)] == [
        ("c1", "success"),
        ("c2", "error"),
    ]
    assert [r["state"]["tool_call"]["name"] for r in classifier.seen] == ["delete_file"]


@pytest.mark.parametrize("side", SIDES)
def test_auto_mode_classifier_failure_propagates(side: str) -> None:
    ran, tools = guarded_tools()
    classifier = ScriptedDecisions(answers=[], seen=[])  # IndexError on the first question
    model = ScriptedChatModel(responses=[calls_tool(call("delete_file", {"path": "a"}, "c1"))])
    agent = build(
        side,
        model,
        tools,
        middleware=[lc_mw.AutoModeMiddleware(tools=["delete_file"], classifier=classifier)],
    )
    with pytest.raises(IndexError):
        run(agent, "invoke")
    assert ran == []


# --- ModelRouterMiddleware ----------------------------------------------------------


def router(classifier: Any, fast: Any, deep: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the class is marked beta
        return lc_mw.ModelRouterMiddleware(
            choices={
                "fast": lc_mw.ModelChoice(model=fast, criteria="Short questions."),
                "deep": lc_mw.ModelChoice(model=deep, criteria="Hard questions."),
            },
            instructions="Pick the cheapest model that can do the task.",
            classifier=classifier,
        )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("side", SIDES)
def test_model_router_routes_every_call_and_keeps_the_answer_in_state(side: str, mode: str) -> None:
    @tool
    def lookup(q: str) -> str:
        """Look something up."""
        return f"found {q}"

    default = ScriptedChatModel(responses=[])
    fast = ScriptedChatModel(responses=[])
    deep = ScriptedChatModel(responses=[calls_tool(call("lookup", {"q": "x"}, "c1")), "answer"])
    classifier = ScriptedDecisions(answers=[route("deep")], seen=[])
    agent = build(side, default, [lookup], middleware=[router(classifier, fast, deep)])
    result = run(agent, mode, {"messages": [HumanMessage("prove the theorem")]})
    assert result["messages"][-1].content == "answer"
    assert (len(default.calls), len(fast.calls), len(deep.calls)) == (0, 0, 2)
    assert deep.calls[0].tool_names == ["lookup"]
    answer = result["model_route"]
    assert isinstance(answer, decisions.ChoiceAnswer)
    assert (answer.choice, answer.confidence) == ("deep", 0.8)
    [request] = classifier.seen  # classified once per run, not once per model call
    assert request["state"].content == "prove the theorem"
    question = request["questions"]["model_route"]
    assert question.criteria == {"fast": "Short questions.", "deep": "Hard questions."}


@pytest.mark.parametrize("side", SIDES)
def test_model_router_classifies_the_latest_human_message(side: str) -> None:
    fast = ScriptedChatModel(responses=["quick"])
    classifier = ScriptedDecisions(answers=[route("fast")], seen=[])
    agent = build(
        side,
        ScriptedChatModel(responses=[]),
        middleware=[router(classifier, fast, ScriptedChatModel(responses=[]))],
    )
    history = [HumanMessage("first"), AIMessage("reply"), HumanMessage("second")]
    result = run(agent, "invoke", {"messages": history})
    assert classifier.seen[0]["state"].content == "second"
    assert result["messages"][-1].content == "quick"


@pytest.mark.parametrize("side", SIDES)
def test_model_router_without_a_human_message_fails_the_run(side: str) -> None:
    classifier = ScriptedDecisions(answers=[route("fast")], seen=[])
    model = ScriptedChatModel(responses=[])
    agent = build(side, model, middleware=[router(classifier, model, model)])
    with pytest.raises(ValueError, match="ModelRouterMiddleware requires a HumanMessage"):
        run(agent, "invoke", {"messages": [SystemMessage("only a system message")]})
    assert classifier.seen == [] and model.calls == []


# --- FilesystemFileSearchMiddleware -------------------------------------------------


def project(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 'hello'\n")
    (root / "src" / "util.py").write_text("def helper():\n    pass\n")
    (root / "README.md").write_text("hello readme\n")
    return root


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("side", SIDES)
def test_file_search_tools_are_bound_and_search_the_root(
    side: str, mode: str, tmp_path: Path
) -> None:
    root = project(tmp_path)
    model = ScriptedChatModel(
        responses=[
            calls_tool(
                call("glob_search", {"pattern": "**/*.py"}, "g1"),
                call("grep_search", {"pattern": "hello", "output_mode": "content"}, "g2"),
                call("grep_search", {"pattern": "def ", "include": "*.py"}, "g3"),
                call("glob_search", {"pattern": "*.md", "path": "/nowhere"}, "g4"),
            ),
            "found",
        ]
    )
    search = lc_mw.FilesystemFileSearchMiddleware(root_path=str(root), use_ripgrep=False)
    agent = build(side, model, middleware=[search])
    result = run(agent, mode)
    assert model.calls[0].tool_names == ["glob_search", "grep_search"]
    replies = {m.tool_call_id: m.content for m in tool_messages(result)}
    assert sorted(replies["g1"].splitlines()) == ["/src/app.py", "/src/util.py"]
    assert sorted(replies["g2"].splitlines()) == [
        "/README.md:1:hello readme",
        "/src/app.py:2:    return 'hello'",
    ]
    assert sorted(replies["g3"].splitlines()) == ["/src/app.py", "/src/util.py"]
    assert replies["g4"] == "No files found"
    assert result["messages"][-1].content == "found"


@pytest.mark.parametrize("side", SIDES)
def test_file_search_stays_inside_the_root(side: str, tmp_path: Path) -> None:
    root = project(tmp_path / "root")
    (tmp_path / "secret.txt").write_text("hello secret\n")
    model = ScriptedChatModel(
        responses=[
            calls_tool(
                call("grep_search", {"pattern": "secret", "path": "/../"}, "g1"),
                call("grep_search", {"pattern": "([", "path": "/"}, "g2"),
            ),
            "ok",
        ]
    )
    search = lc_mw.FilesystemFileSearchMiddleware(root_path=str(root), use_ripgrep=False)
    result = run(build(side, model, middleware=[search]), "invoke")
    replies = {m.tool_call_id: m for m in tool_messages(result)}
    assert "secret.txt" not in str(replies["g1"].content)
    assert str(replies["g2"].content).startswith("Invalid regex pattern:")


# --- ShellToolMiddleware ------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("side", SIDES)
def test_shell_tool_runs_commands_in_one_session_in_the_workspace(
    side: str, mode: str, tmp_path: Path
) -> None:
    shell = lc_mw.ShellToolMiddleware(
        workspace_root=tmp_path,
        startup_commands=["export GREETING=hello"],
        shutdown_commands=["echo bye > shutdown.txt"],
    )
    model = ScriptedChatModel(
        responses=[
            calls_tool(call("shell", {"command": "echo $GREETING > out.txt; cat out.txt"}, "s1")),
            calls_tool(call("shell", {"command": "X=1; echo kept-$GREETING"}, "s2")),
            calls_tool(
                call("shell", {"command": "echo $X; exit_code() { return 3; }; exit_code"}, "s3")
            ),
            "done",
        ]
    )
    result = run(build(side, model, middleware=[shell]), mode)
    assert model.calls[0].tool_names == ["shell"]
    first, second, third = tool_messages(result)
    assert (first.content, first.status, first.name) == ("hello\n", "success", "shell")
    assert first.artifact["exit_code"] == 0 and first.artifact["timed_out"] is False
    assert (tmp_path / "out.txt").read_text() == "hello\n"
    assert second.content == "kept-hello\n"
    assert third.status == "error"
    assert third.content == "1\n\nExit code: 3"
    # after_agent ran the shutdown commands and released the session
    assert (tmp_path / "shutdown.txt").read_text() == "bye\n"
    # the session handle is private state: never in the run's output
    assert "shell_session_resources" not in result
    assert result["messages"][-1].content == "done"


@pytest.mark.parametrize("side", SIDES)
def test_shell_tool_restart_and_missing_command(side: str, tmp_path: Path) -> None:
    shell = lc_mw.ShellToolMiddleware(workspace_root=tmp_path)
    model = ScriptedChatModel(
        responses=[
            calls_tool(call("shell", {"command": "export KEEP=1"}, "s1")),
            calls_tool(call("shell", {"restart": True}, "s2")),
            calls_tool(call("shell", {"command": "echo [$KEEP]"}, "s3")),
            calls_tool(call("shell", {}, "s4")),
            "done",
        ]
    )
    result = run(build(side, model, middleware=[shell]), "invoke")
    _, restarted, after, invalid = tool_messages(result)
    assert restarted.content == "Shell session restarted."
    assert after.content == "[]\n"  # the restart dropped the old shell's variables
    # neither command nor restart: the tool's schema refuses it and the model is told
    assert invalid.status == "error"
    assert str(invalid.content).startswith("Error invoking tool 'shell' with kwargs {} with error")


@pytest.mark.parametrize("side", SIDES)
def test_shell_tool_times_out_a_slow_command(side: str, tmp_path: Path) -> None:
    policy = lc_mw.HostExecutionPolicy(command_timeout=0.5)
    shell = lc_mw.ShellToolMiddleware(workspace_root=tmp_path, execution_policy=policy)
    model = ScriptedChatModel(
        responses=[calls_tool(call("shell", {"command": "sleep 5"}, "s1")), "ok"]
    )
    result = run(build(side, model, middleware=[shell]), "invoke")
    [reply] = tool_messages(result)
    assert (reply.status, reply.content) == ("error", "Error: Command timed out after 0.5 seconds.")
    assert reply.artifact == {"timed_out": True, "exit_code": None}


@pytest.mark.parametrize("side", SIDES)
def test_shell_tool_redacts_output(side: str, tmp_path: Path) -> None:
    rule = lc_mw.RedactionRule(pii_type="email", strategy="redact")
    shell = lc_mw.ShellToolMiddleware(workspace_root=tmp_path, redaction_rules=[rule])
    model = ScriptedChatModel(
        responses=[
            calls_tool(call("shell", {"command": "echo mail me at a@b.example"}, "s1")),
            "ok",
        ]
    )
    result = run(build(side, model, middleware=[shell]), "invoke")
    [reply] = tool_messages(result)
    assert "a@b.example" not in reply.content
    assert reply.content == "mail me at [REDACTED_EMAIL]\n"
    assert list(reply.artifact["redaction_matches"]) == ["email"]


# --- ProviderToolSearchMiddleware ---------------------------------------------------


class AnthropicScripted(ScriptedChatModel):
    """A scripted model that reports itself as an Anthropic model (as LangChain infers it).

    It keeps the tools exactly as ``bind_tools`` received them (``defer_loading`` lives in a
    tool's ``extras``, which the OpenAI schema the parent records leaves out).
    """

    bound: list[list[Any]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        self.bound.append(list(tools))
        return super().bind_tools(tools, **kwargs)

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> Any:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = "anthropic"
        return params


def catalog_tools() -> list[BaseTool]:
    @tool
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return f"sunny in {city}"

    @tool(extras={"defer_loading": True})
    def send_email(to: str) -> str:
        """Send an e-mail."""
        return f"sent to {to}"

    @tool
    def lookup_order(order_id: str) -> str:
        """Look up an order."""
        return f"order {order_id}"

    return [get_weather, send_email, lookup_order]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("side", SIDES)
def test_provider_tool_search_defers_tools_and_adds_the_search_tool(side: str, mode: str) -> None:
    model = AnthropicScripted(
        responses=[calls_tool(call("lookup_order", {"order_id": "7"}, "c1")), "done"], bound=[]
    )
    search = lc_mw.ProviderToolSearchMiddleware(searchable_tools=["lookup_order"])
    result = run(build(side, model, catalog_tools(), middleware=[search]), mode)
    assert len(model.calls) == len(model.bound) == 2
    for tools in model.bound:
        *bound, search_tool = tools
        assert [t.name for t in bound] == ["get_weather", "send_email", "lookup_order"]
        assert search_tool == {
            "type": "tool_search_tool_bm25_20251119",
            "name": "tool_search_tool_bm25",
        }
        deferred = [t.name for t in bound if (t.extras or {}).get("defer_loading") is True]
        assert deferred == ["send_email", "lookup_order"]
    [reply] = tool_messages(result)
    assert reply.content == "order 7"


@pytest.mark.parametrize("side", SIDES)
def test_provider_tool_search_without_deferred_tools_changes_nothing(side: str) -> None:
    model = ScriptedChatModel(responses=["plain"])  # provider unknown: fine, nothing deferred

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    agent = build(side, model, [ping], middleware=[lc_mw.ProviderToolSearchMiddleware()])
    assert run(agent, "invoke")["messages"][-1].content == "plain"
    assert model.calls[0].tool_names == ["ping"]
    assert "defer_loading" not in str(model.calls[0].tools)


@pytest.mark.parametrize("side", SIDES)
def test_provider_tool_search_errors(side: str) -> None:
    unknown = lc_mw.ProviderToolSearchMiddleware(searchable_tools=["nope"])
    anthropic = AnthropicScripted(responses=["x"], bound=[])
    agent = build(side, anthropic, catalog_tools(), middleware=[unknown])
    with pytest.raises(
        ValueError,
        match="ProviderToolSearchMiddleware: searchable_tools references tool\\(s\\) not bound "
        "to the model: nope",
    ):
        run(agent, "invoke")
    scripted = ScriptedChatModel(responses=["x"])
    deferring = lc_mw.ProviderToolSearchMiddleware(searchable_tools=["get_weather"])
    agent = build(side, scripted, catalog_tools(), middleware=[deferring])
    with pytest.raises(ValueError, match="ProviderToolSearchMiddleware "):
        run(agent, "invoke")
    assert scripted.calls == []


# --- ToolCallLimitMiddleware (deeper) -------------------------------------------------


def limited_run(side: str, exit_behavior: str) -> tuple[list[str], dict[str, Any]]:
    ran: list[str] = []

    @tool
    def search(q: str) -> str:
        """Search."""
        ran.append(q)
        return f"hit {q}"

    model = ScriptedChatModel(
        responses=[
            calls_tool(call("search", {"q": "a"}, "c1"), call("search", {"q": "b"}, "c2")),
            "stopped",
        ]
    )
    limit = lc_mw.ToolCallLimitMiddleware(
        tool_name="search", run_limit=1, exit_behavior=exit_behavior
    )
    return ran, run(build(side, model, [search], middleware=[limit]), "invoke")


def test_tool_call_limit_continue_matches_langchain() -> None:
    outcomes = {}
    for side in SIDES:
        ran, result = limited_run(side, "continue")
        assert ran == ["a"]
        outcomes[side] = [
            (type(m).__name__, m.content, getattr(m, "status", None)) for m in result["messages"]
        ]
    assert outcomes["funcware"] == outcomes["langchain"]
    assert outcomes["funcware"][-1][1] == "stopped"


@pytest.mark.parametrize("side", SIDES)
def test_tool_call_limit_error_raises_langchains_error(side: str) -> None:
    with pytest.raises(lc_tcl.ToolCallLimitExceededError):
        limited_run(side, "error")
