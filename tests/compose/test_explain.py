"""explain(): the pipeline description, the Mermaid diagram, the CLI, and up-front checks."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.tools import tool
from typing_extensions import NotRequired

import funcware
from funcware import (
    AgentMiddleware,
    AgentState,
    PrivateStateAttr,
    after_agent,
    after_model,
    before_model,
    compose,
    create_agent,
    explain,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.__main__ import main as funcware_main
from funcware.errors import BrokenStackError, StateSchemaConflictWarning
from funcware.testing import ScriptedChatModel


class CountState(AgentState):
    calls: NotRequired[int]
    secret: NotRequired[Annotated[int, PrivateStateAttr]]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@before_model(can_jump_to=["end"], state_schema=CountState)
def limit(state: Any) -> None:
    return None


@wrap_model_call
def outer(request: Any, handler: Any) -> Any:
    return handler(request)


@wrap_model_call
def inner(request: Any, handler: Any) -> Any:
    return handler(request)


@wrap_tool_call(tools=[add])
def monitor(request: Any, handler: Any) -> Any:
    return handler(request)


@after_model
def first_after(state: Any) -> None:
    return None


@after_model
def second_after(state: Any) -> None:
    return None


@after_agent
def goodbye(state: Any) -> None:
    return None


STACK = [limit, compose(outer, inner), monitor, first_after, second_after, goodbye]


def _line(text: str, title: str) -> str:
    return next(line for line in text.splitlines() if line.strip().startswith(title))


def test_explain_lists_order_onions_jumps_tools_and_state() -> None:
    text = str(explain(STACK))
    assert text.splitlines()[0].startswith("7 middleware: limit, outer, inner, monitor")
    assert _line(text, "before_model").endswith("limit [may jump to end]")
    assert _line(text, "model call").endswith("outer ( inner ( model ) )")
    assert _line(text, "after_model").endswith("second_after -> first_after")
    assert _line(text, "tool call").endswith("monitor ( tool )")
    assert _line(text, "after_agent").endswith("goodbye")
    assert "add (middleware 'monitor')" in _line(text, "tools")
    state = _line(text, "state")
    assert "calls: int [limit]" in state
    assert "secret: int (private) [limit]" in state


def test_explain_of_an_agent_includes_agent_tools() -> None:
    schema_tool = {"type": "function", "function": {"name": "weather", "parameters": {}}}
    agent = create_agent(ScriptedChatModel(responses=[]), [schema_tool], middleware=STACK)
    tools = _line(str(explain(agent)), "tools")
    assert "weather (the agent)" in tools and "add (middleware 'monitor')" in tools


def test_mermaid_draws_wrap_nesting_and_jumps() -> None:
    diagram = explain(STACK).mermaid()
    lines = diagram.splitlines()
    assert lines[0] == "flowchart TD"
    outer_box = next(i for i, line in enumerate(lines) if '"outer.wrap_model_call"' in line)
    inner_box = next(i for i, line in enumerate(lines) if '"inner.wrap_model_call"' in line)
    model = next(i for i, line in enumerate(lines) if "((model))" in line)
    assert outer_box < inner_box < model
    assert any("jump end" in line for line in lines)
    assert any("tool calls" in line for line in lines)


def test_a_single_middleware_can_be_explained() -> None:
    assert "limit [may jump to end]" in str(explain(limit))


def test_explain_reports_problems_instead_of_raising() -> None:
    clash = before_model(lambda state: None, name="limit")
    explanation = explain([limit, clash])
    assert any("two middleware are named 'limit'" in p for p in explanation.plan.problems)
    assert "PROBLEM:" in str(explanation)


def test_create_agent_refuses_a_broken_stack_listing_every_problem() -> None:
    class Clashing(AgentState):
        calls: NotRequired[str]

    @before_model(state_schema=Clashing, name="other")
    def other(state: Any) -> None:
        return None

    @before_model(can_jump_to=["tools"], name="jumper")
    def jumper(state: Any) -> None:
        return None

    duplicate = before_model(lambda state: None, name="limit")
    with (
        pytest.warns(StateSchemaConflictWarning, match="State field 'calls'.*'other'"),
        pytest.raises(BrokenStackError) as error,
    ):
        create_agent(ScriptedChatModel(responses=[]), middleware=[limit, duplicate, other, jumper])
    message = str(error.value)
    assert "two middleware are named 'limit'" in message
    assert "State field 'calls'" not in message  # built as LangChain builds it, with a warning
    assert "may jump to 'tools', but the agent has no tools node" in message
    assert isinstance(error.value, ValueError)


def test_cli_explains_a_module_attribute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "my_stack.py").write_text(
        textwrap.dedent(
            """
            from funcware import before_model, wrap_model_call

            @before_model(can_jump_to=["end"])
            def stop(state):
                return None

            @wrap_model_call
            def log(request, handler):
                return handler(request)

            middleware = [stop, log]
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_stack", raising=False)
    assert funcware_main(["explain", "my_stack:middleware"]) == 0
    printed = capsys.readouterr().out
    assert "stop [may jump to end]" in printed and "log ( model )" in printed
    assert funcware_main(["explain", "my_stack:middleware", "--mermaid"]) == 0
    assert capsys.readouterr().out.startswith("flowchart TD")


def test_cli_rejects_a_target_without_attribute(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        funcware_main(["explain", "just_a_module"])
    assert caught.value.code == 2
    assert "expected module:attribute" in capsys.readouterr().err


def test_explain_refuses_a_foreign_graph() -> None:
    from langgraph.graph import StateGraph

    graph = StateGraph(AgentState)
    graph.add_node("n", lambda state: {})
    graph.set_entry_point("n")
    with pytest.raises(TypeError, match="did not build"):
        explain(graph.compile())


def test_class_middleware_in_explain() -> None:
    class Audit(AgentMiddleware):
        def after_agent(self, state: Any, runtime: Any) -> None:
            return None

    assert _line(str(explain([goodbye, Audit()])), "after_agent").endswith("Audit -> goodbye")


def test_a_bad_tool_names_where_it_came_from() -> None:
    bringer = before_model(lambda state: None, name="bringer", tools=[42])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"tools\[0\] of middleware 'bringer' .* is 42 \(int\)"):
        create_agent(ScriptedChatModel(responses=[]), middleware=[bringer])
    with pytest.raises(
        TypeError, match=r"create_agent\(tools=\[\.\.\.\]\)'s tools\[0\] is 'x' \(str\)"
    ):
        create_agent(ScriptedChatModel(responses=[]), ["x"])  # type: ignore[list-item]


# -- python -m funcware explain, given something wrong ---------------------------


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("no_such_module_xyz:middleware", "cannot import 'no_such_module_xyz'"),
        ("funcware:middlewar", "'funcware' has no attribute 'middlewar'"),
        ("funcware:__version__", "explain() got '"),
        ("no-colon", "expected module:attribute"),
    ],
)
def test_explain_from_the_shell_says_what_is_wrong_without_a_traceback(
    target: str, says: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "funcware", "explain", target],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert says in done.stderr and "Traceback" not in done.stderr


def test_explain_of_something_that_is_no_middleware_says_what_it_takes() -> None:
    with pytest.raises(TypeError, match=r"explain\(\) got 42 \(int\); it takes a middleware"):
        funcware.explain(42)
    with pytest.raises(TypeError, match=r"explain\(\[\.\.\.\]\)\[1\] is None"):
        funcware.explain([before_model(lambda state: None), None])
