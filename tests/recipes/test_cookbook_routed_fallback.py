"""The routed-fallback recipe: a model router and a fallback ordered by a declared constraint."""

from __future__ import annotations

from funcware.cookbook import routed_fallback


def test_the_unconstrained_pair_warns_naming_both() -> None:
    text = routed_fallback.unordered_warning()
    assert "middleware 'fall_back' (" in text and "and 'route_by_length' (" in text
    assert (
        "'route_by_length' sits inside 'fall_back' and sets request.model on every call "
        "without reading it, so the fallback request.model 'fall_back' retries with is "
        "replaced and never reaches the model"
    ) in text


def test_the_wrong_order_is_refused_with_the_fix() -> None:
    text = routed_fallback.wrong_order_error()
    assert "middleware 'fall_back' (" in text
    assert "must sit inside 'route_by_length'" in text
    assert "an order that satisfies every constraint: [route_by_length, fall_back]" in text


def test_the_demo_falls_back_inside_the_router() -> None:
    agent, state = routed_fallback.demo()
    assert state["messages"][-1].content == "(backup model) Owls eat mice."
    assert [m.name for m in agent.plan.middleware] == [
        "route_by_length",
        "fall_back",
    ]
