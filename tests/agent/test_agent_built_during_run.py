"""An agent built while another run is in progress starts clean.

Modelled on deepagents' rubric grader: a middleware builds its grader agent lazily, inside
its ``after_agent`` hook (so while the outer run is in progress), and the grader calls a
tool behind human approval. The grader must keep nothing of the run it was built in: not
its ``thread_id`` or checkpoint namespace, not langgraph's internal keys. Otherwise the
approval is lost on resume: the tool never runs and the grader still answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness import Driver, tool_calls
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt
from typing_extensions import NotRequired

from funcware import (
    AgentMiddleware,
    AgentState,
    ToolCallRequest,
    create_agent,
    wrap_tool_call,
)
from funcware.testing import ScriptedChatModel


class GradedState(AgentState[Any]):
    verdict: NotRequired[str]


@wrap_tool_call
def ask_reviewer(
    request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]
) -> ToolMessage | Command[Any]:
    """Run the tool only if a reviewer approves it."""
    decision = interrupt({"tool": request.tool_call["name"], "args": request.tool_call["args"]})
    if decision == "approve":
        return handler(request)
    return ToolMessage("rejected by the reviewer", tool_call_id=request.tool_call["id"])


class Grader(AgentMiddleware[GradedState, Any, Any]):
    """Grades the answer with an agent of its own, built on first use (inside a run)."""

    state_schema = GradedState

    def __init__(self, checks_ran: list[str]) -> None:
        self.grader: Any = None

        @tool
        def run_checks(path: str) -> str:
            """Run the project's checks on ``path``."""
            checks_ran.append(path)
            return "all checks pass"

        self.run_checks = run_checks

    def _grader(self) -> Any:
        if self.grader is None:
            model = ScriptedChatModel(
                responses=[tool_calls(("run_checks", {"path": "src"})), "graded"]
            )
            self.grader = create_agent(model, [self.run_checks], middleware=[ask_reviewer])
        return self.grader

    @staticmethod
    def _verdict(result: dict[str, Any]) -> dict[str, Any]:
        passed = any(
            isinstance(m, ToolMessage) and m.content == "all checks pass"
            for m in result["messages"]
        )
        return {"verdict": "satisfied" if passed else "needs_revision"}

    def after_agent(self, state: GradedState, runtime: Any) -> dict[str, Any]:
        return self._verdict(self._grader().invoke({"messages": [HumanMessage("grade it")]}))

    async def aafter_agent(self, state: GradedState, runtime: Any) -> dict[str, Any]:
        result = await self._grader().ainvoke({"messages": [HumanMessage("grade it")]})
        return self._verdict(result)


def test_a_grader_built_inside_a_hook_runs_its_approved_tool(driver: Driver) -> None:
    checks_ran: list[str] = []
    grader = Grader(checks_ran)
    agent = create_agent(
        ScriptedChatModel(responses=["I fixed it."]),
        middleware=[grader],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "outer"}}

    paused = driver.invoke(agent, {"messages": [HumanMessage("fix it")]}, config)
    assert [i.value for i in paused["__interrupt__"]] == [
        {"tool": "run_checks", "args": {"path": "src"}}
    ]
    assert checks_ran == []

    done = driver.invoke(agent, Command(resume="approve"), config)
    assert "__interrupt__" not in done
    assert checks_ran == ["src"]
    assert done["verdict"] == "satisfied"
    assert isinstance(done["messages"][-1], AIMessage)


def test_an_agent_built_inside_a_run_keeps_nothing_of_that_run(driver: Driver) -> None:
    checks_ran: list[str] = []
    grader = Grader(checks_ran)
    agent = create_agent(
        ScriptedChatModel(responses=["I fixed it."]),
        middleware=[grader],
        checkpointer=InMemorySaver(),
    )
    driver.invoke(
        agent, {"messages": [HumanMessage("fix it")]}, {"configurable": {"thread_id": "outer"}}
    )

    built = grader.grader.config
    assert built.get("configurable", {}) == {}
    assert "callbacks" not in built
    assert "checkpoint_ns" not in built.get("metadata", {})
    assert built["recursion_limit"] == agent.config["recursion_limit"]
    assert built["metadata"]["ls_integration"] == agent.config["metadata"]["ls_integration"]
