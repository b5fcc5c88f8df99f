"""Two middleware declaring one state field with types that nest merge, as LangChain builds.

Modelled on deepagents-code: its goal tools declare ``rubric: NotRequired[str | None]``
and deepagents' rubric middleware ``rubric: NotRequired[str]``. One type holds the other,
so the agent builds with the wider one (whatever the order), runs both middleware's code,
and warns about nothing; types that do not nest (``int`` beside ``str``) build too, as
LangChain builds them (the later declaration wins), with one warning naming both middleware.
"""

from __future__ import annotations

import warnings
from typing import Annotated, Any

import pytest
from langchain_core.messages import HumanMessage
from typing_extensions import NotRequired, get_type_hints

from funcware import AgentMiddleware, AgentState, PrivateStateAttr, compose, create_agent
from funcware.errors import StateSchemaConflictWarning
from funcware.testing import ScriptedChatModel


class GoalToolState(AgentState[Any]):
    rubric: NotRequired[str | None]


class RubricState(AgentState[Any]):
    rubric: NotRequired[str]
    _active_rubric: NotRequired[Annotated[str, PrivateStateAttr]]


class ResumeState(AgentState[Any]):
    _active_rubric: NotRequired[Annotated[str | None, PrivateStateAttr]]


class CountState(AgentState[Any]):
    rubric: NotRequired[int]


class GoalTools(AgentMiddleware[GoalToolState, Any, Any]):
    """Clears the rubric once the goal is met (writes ``None``)."""

    state_schema = GoalToolState

    def after_agent(self, state: GoalToolState, runtime: Any) -> dict[str, Any]:
        return {"rubric": None}


class Rubric(AgentMiddleware[RubricState, Any, Any]):
    """Reads the rubric the caller passed (a ``str``)."""

    state_schema = RubricState

    def __init__(self) -> None:
        self.seen: list[str | None] = []

    def before_agent(self, state: RubricState, runtime: Any) -> dict[str, Any]:
        self.seen.append(state.get("rubric"))
        return {"_active_rubric": state.get("rubric", "")}


class Resume(AgentMiddleware[ResumeState, Any, Any]):
    state_schema = ResumeState


class Counter(AgentMiddleware[CountState, Any, Any]):
    state_schema = CountState


@pytest.mark.parametrize("goal_first", [True, False])
def test_t_beside_optional_t_merges_to_the_wider_type(goal_first: bool) -> None:
    rubric, goal = Rubric(), GoalTools()
    middleware: list[Any] = [goal, rubric, Resume()] if goal_first else [Resume(), rubric, goal]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agent = create_agent(ScriptedChatModel(responses=["done"]), middleware=middleware)

    hints = get_type_hints(agent.builder.state_schema, include_extras=True)
    assert hints["rubric"] == NotRequired[str | None]
    assert hints["_active_rubric"] == NotRequired[Annotated[str | None, PrivateStateAttr]]
    result = agent.invoke({"messages": [HumanMessage("go")], "rubric": "tests pass"})
    assert rubric.seen == ["tests pass"]
    assert result["rubric"] is None  # the goal tools' write
    assert "_active_rubric" not in result  # still private


def test_compose_merges_them_too() -> None:
    merged = compose(GoalTools(), Rubric()).state_schema
    assert get_type_hints(merged, include_extras=True)["rubric"] == NotRequired[str | None]


def test_types_that_do_not_nest_build_with_one_warning_naming_both() -> None:
    with pytest.warns(StateSchemaConflictWarning, match="State field 'rubric'") as caught:
        agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[Rubric(), Counter()])
    (warning,) = caught
    message = str(warning.message)
    assert "'Rubric'" in message and "'Counter'" in message
    assert "<class 'str'>" in message and "<class 'int'>" in message
    assert get_type_hints(agent.builder.state_schema)["rubric"] is int  # the later one
    result = agent.invoke({"messages": [HumanMessage("go")], "rubric": 3})
    assert result["rubric"] == 3 and result["messages"][-1].content == "ok"
