"""deepagents' rubric grader with a tool behind human approval, on funcware as on LangChain.

``RubricMiddleware`` builds its grader agent lazily, inside its ``after_agent`` hook, while
the outer run is in progress; the grader's tool waits for a reviewer
(``HumanInTheLoopMiddleware``). Approving must run the tool and the verdict must follow
from it, on funcware as on LangChain: an agent built during a run keeps nothing of that
run's config.

Skipped with a reason when deepagents is not installed (it needs Python 3.11+); with
``FUNCWARE_REQUIRE_DEEPAGENTS=1`` (CI) a missing deepagents is a failure instead.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from support import require_deepagents

import funcware
from funcware.testing import ScriptedChatModel

rubric = require_deepagents("deepagents.middleware.rubric")
from langchain.agents import create_agent as langchain_create_agent  # noqa: E402
from langchain.agents.middleware import HumanInTheLoopMiddleware  # noqa: E402

BUILDERS = {"funcware": funcware.create_agent, "langchain": langchain_create_agent}


def _call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])


def _graded_run(
    builder: str, decision: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> tuple[list[str], dict[str, Any]]:
    """The checks the grader ran, and the final state, after the reviewer's ``decision``."""
    create_agent = BUILDERS[builder]
    monkeypatch.setattr(rubric, "create_agent", create_agent)
    ran: list[str] = []

    @tool
    def run_checks(path: str) -> str:
        """Run the project's checks on ``path``."""
        ran.append(path)
        return "all checks pass"

    grader_model = ScriptedChatModel(
        responses=[
            _call("run_checks", {"path": "src"}, "c1"),
            _call(
                "GraderResponse",
                {
                    "result": "satisfied",
                    "explanation": "the checks pass",
                    "criteria": [{"name": "the checks pass", "passed": True}],
                },
                "g1",
            ),
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LangChain marks the middleware as beta
        grader = rubric.RubricMiddleware(
            model=grader_model,
            tools=[run_checks],
            grader_middleware=[HumanInTheLoopMiddleware(interrupt_on={"run_checks": True})],
        )
    agent = create_agent(
        ScriptedChatModel(responses=["I fixed it."]),
        [],
        middleware=[grader],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": f"rubric-{builder}"}}
    paused = agent.invoke({"messages": [HumanMessage("fix it")], "rubric": "checks pass"}, config)
    [request] = paused["__interrupt__"]
    assert request.value["action_requests"][0]["name"] == "run_checks"
    assert ran == []

    done = agent.invoke(Command(resume={"decisions": [decision]}), config)
    assert "__interrupt__" not in done
    return ran, agent.get_state(config).values


@pytest.mark.parametrize("builder", ["funcware", "langchain"])
def test_an_approved_grader_tool_runs_before_the_verdict(
    builder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran, state = _graded_run(builder, {"type": "approve"}, monkeypatch)

    assert ran == ["src"]
    assert state["_rubric_status"] == "satisfied"
    assert [e["result"] for e in state["_rubric_evaluations"]] == ["satisfied"]


def test_funcware_and_langchain_end_the_approved_run_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    outcomes = {
        builder: _graded_run(builder, {"type": "approve"}, monkeypatch)
        for builder in ("funcware", "langchain")
    }
    summaries = {
        builder: (ran, state["_rubric_status"], [m.type for m in state["messages"]])
        for builder, (ran, state) in outcomes.items()
    }
    assert summaries["funcware"] == summaries["langchain"]
