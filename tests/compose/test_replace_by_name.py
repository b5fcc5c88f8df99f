"""Replace by name: ``replace(m)`` takes the place of the member of the same name (or
``name=``) in ``compose()`` and ``create_agent``, nested composites included; the order
checks run on the list as replaced; a duplicate nothing asked to replace is still refused."""

from __future__ import annotations

from typing import Any

import pytest
from harness import Driver
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from funcware import (
    AgentMiddleware,
    BrokenStackError,
    DuplicateMiddlewareError,
    MiddlewareOrderError,
    before_model,
    compose,
    create_agent,
    replace,
    wrap_model_call,
)
from funcware.testing import ScriptedChatModel


class Summarize(AgentMiddleware):
    """A default stack's summarizer, configured by a label it writes into the prompt."""

    def __init__(self, label: str) -> None:
        self.label = label

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        return handler(request.override(system_prompt=f"summarized by {self.label}"))


@before_model
def audit(state: Any) -> None:
    return None


def defaults() -> list[Any]:
    return [Summarize("default"), audit]


def labels(members: Any) -> list[str]:
    return [getattr(m, "label", m.name) for m in members]


@pytest.mark.parametrize("checkpointer", ["memory"], indirect=True)
@pytest.mark.parametrize("streamed", [False, True], ids=["invoke", "stream"])
def test_the_replacement_runs_in_the_place_of_the_default(
    driver: Driver, checkpointer: BaseCheckpointSaver[Any], thread: dict[str, Any], streamed: bool
) -> None:
    model = ScriptedChatModel(responses=["ok"])
    agent = create_agent(
        model, middleware=[*defaults(), replace(Summarize("mine"))], checkpointer=checkpointer
    )
    assert labels(agent.plan.middleware) == ["mine", "audit"]
    question = {"messages": [HumanMessage("hi")]}
    if streamed:
        driver.stream(agent, question, thread)
    else:
        driver.invoke(agent, question, thread)
    assert model.calls[0].messages[0].content == "summarized by mine"
    assert driver.get_state(agent, thread).values["messages"][-1].content == "ok"


def test_a_replacement_may_come_first_and_reach_into_a_composite() -> None:
    stack = compose(*defaults(), name="defaults")
    agent = create_agent(
        ScriptedChatModel(responses=["ok"]), middleware=[replace(Summarize("mine")), stack]
    )
    assert labels(agent.plan.middleware) == ["mine", "audit"]


def test_compose_replaces_too() -> None:
    assert labels(compose(*defaults(), replace(Summarize("mine"))).members) == ["mine", "audit"]


def test_name_picks_a_member_of_another_name() -> None:
    @before_model(name="my_audit")
    def my_audit(state: Any) -> None:
        return None

    agent = create_agent(
        ScriptedChatModel(responses=["ok"]),
        middleware=[*defaults(), replace(my_audit, name="audit")],
    )
    assert labels(agent.plan.middleware) == ["default", "my_audit"]
    assert "my_audit.before_model" in agent.get_graph().nodes


def test_a_duplicate_nothing_asked_to_replace_is_still_refused() -> None:
    with pytest.raises(DuplicateMiddlewareError, match=r"list it as funcware\.replace\(\.\.\.\)"):
        create_agent(ScriptedChatModel(responses=["ok"]), middleware=[*defaults(), Summarize("x")])


def test_a_replacement_that_finds_nothing_names_what_the_list_holds() -> None:
    with pytest.raises(BrokenStackError) as raised:
        create_agent(
            ScriptedChatModel(responses=["ok"]),
            middleware=[*defaults(), replace(Summarize("x"), name="Summarise")],
        )
    text = str(raised.value)
    assert text.startswith("create_agent(middleware=[...])'s middleware[2], replace('Summarize' (")
    assert "test_replace_by_name.py:" in text
    assert "no middleware in the list has that name (its middleware: 'Summarize', 'audit')" in text


def test_two_replacements_for_one_name_are_refused() -> None:
    with pytest.raises(BrokenStackError, match=r"which replace\('Summarize' .* already replaces"):
        compose(*defaults(), replace(Summarize("a")), replace(Summarize("b")))


def test_replace_takes_one_middleware() -> None:
    with pytest.raises(TypeError, match=r"replace\(\) takes one middleware"):
        compose(*defaults(), replace(compose(Summarize("a"), name="Summarize")))
    with pytest.raises(TypeError, match=r"replace\(name=''\) must be a non-empty str"):
        replace(audit, name="")


def test_the_order_checks_run_on_the_list_as_replaced() -> None:
    @wrap_model_call(name="Summarize", inside=["cache"])
    def summarize_inside_cache(request: Any, handler: Any) -> Any:
        return handler(request)

    @wrap_model_call(name="cache")
    def cache(request: Any, handler: Any) -> Any:
        return handler(request)

    stack = [*defaults(), cache]
    with pytest.raises(MiddlewareOrderError, match=r"'Summarize'"):
        create_agent(
            ScriptedChatModel(responses=["ok"]),
            middleware=[*stack, replace(summarize_inside_cache)],
        )
    agent = create_agent(
        ScriptedChatModel(responses=["ok"]),
        middleware=[*stack, replace(summarize_inside_cache)],
        order="auto",
    )
    assert [m.name for m in agent.plan.middleware].index("cache") < [
        m.name for m in agent.plan.middleware
    ].index("Summarize")
