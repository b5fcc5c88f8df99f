"""Declared effects and ordering constraints, checked (and sorted) at build time.

Covers each declaration keyword on decorators and classes, each constraint kind
(outside, inside, requires, position), each error and warning text, ``order="auto"``
(with hypothesis: the result satisfies every constraint, is stable, and fails exactly on
cycles, naming the cycle), ``explain()``'s effects lines and ``Explanation.conflicts``.
"""

from __future__ import annotations

import graphlib
import itertools
import re
import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from support import hi

from funcware import (
    AgentMiddleware,
    AgentState,
    MiddlewareOrderError,
    MiddlewareOrderWarning,
    after_agent,
    after_model,
    before_agent,
    before_model,
    compose,
    create_agent,
    dynamic_prompt,
    explain,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.effects.declarations import declarations
from funcware.effects.ordering import CycleError, stable_order


def model() -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage("ok")] * 10))


def wrap(name: str, **declared: Any) -> Any:
    def layer(request: Any, handler: Any) -> Any:
        return handler(request)

    return wrap_model_call(name=name, **declared)(layer)


# -- declarations ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "decorator",
    [before_agent, before_model, after_model, after_agent],
)
def test_node_decorators_take_every_declaration_keyword(decorator: Any) -> None:
    @decorator(
        reads=["state.messages"],
        writes=["state.count", "interrupt"],
        outside=["b"],
        inside=["c"],
        requires=["d"],
        position="outermost",
    )
    def hook(state: Any) -> None:
        return None

    decl = declarations(hook)
    assert decl is not None
    assert decl.reads == {"state.messages"}
    assert decl.writes == {"state.count", "interrupt"}
    assert (decl.outside, decl.inside, decl.requires) == (("b",), ("c",), ("d",))
    assert decl.position == "outermost"
    assert type(hook).writes == decl.writes  # kept as class attributes of the same names


def test_every_effect_kind_is_accepted_where_it_applies() -> None:
    model_effects = [
        "request.model",
        "request.messages",
        "request.system_message",
        "request.tools",
        "request.tool_choice",
        "request.response_format",
        "request.model_settings",
        "model.result",
        "handler.retry",
        "handler.skip",
        "interrupt",
        "state.x",
    ]
    m = wrap("m", writes=model_effects, reads=["request.messages", "model.result"])
    assert declarations(m).writes == set(model_effects)  # type: ignore[union-attr]

    @wrap_tool_call(writes=["tool.args", "tool.result", "handler.retry", "handler.skip"])
    def t(request: Any, handler: Any) -> Any:
        return handler(request)

    assert declarations(t).writes == {  # type: ignore[union-attr]
        "tool.args",
        "tool.result",
        "handler.retry",
        "handler.skip",
    }


def test_an_unknown_effect_name_is_an_error_naming_the_closest() -> None:
    with pytest.raises(
        ValueError,
        match=r"'request.modle' in writes= is not an effect name\. Did you mean 'request.model'\?",
    ):
        wrap("m", writes=["request.modle"])
    with pytest.raises(
        ValueError, match=r"'tool.arg' in reads= is not an effect name\. Did you mean 'tool.args'\?"
    ):

        @wrap_tool_call(reads=["tool.arg"])
        def t(request: Any, handler: Any) -> Any:
            return handler(request)

    with pytest.raises(ValueError, match=r"'state\.' in writes= is not an effect name"):
        wrap("m", writes=["state."])


def test_an_effect_a_hook_cannot_have_is_an_error() -> None:
    with pytest.raises(
        ValueError, match=r"a before_model hook cannot have writes=\['request.model'\]"
    ):

        @before_model(writes=["request.model"])
        def hook(state: Any) -> None:
            return None

    with pytest.raises(
        ValueError, match=r"a wrap_tool_call hook cannot have writes=\['model.result'\]"
    ):

        @wrap_tool_call(writes=["model.result"])
        def t(request: Any, handler: Any) -> Any:
            return handler(request)


def test_bad_keyword_values_are_errors() -> None:
    with pytest.raises(ValueError, match=r"position='middle' is not a position"):
        wrap("m", position="middle")
    with pytest.raises(TypeError, match=r"outside= takes middleware names or classes, got 3"):
        wrap("m", outside=[3])
    with pytest.raises(TypeError, match=r"writes= takes a list, got 5"):
        wrap("m", writes=5)


def test_dynamic_prompt_declares_its_system_message_write() -> None:
    @dynamic_prompt(reads=["state.messages"])
    def prompt(request: Any) -> str:
        return "be brief"

    assert declarations(prompt).writes == {"request.system_message"}  # type: ignore[union-attr]


class Router(AgentMiddleware[AgentState[Any], Any]):
    writes = ("request.model",)
    outside = ("Fallback",)

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        return handler(request)


class Fallback(AgentMiddleware[AgentState[Any], Any]):
    writes = ("request.model", "handler.retry")

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        return handler(request)


def test_class_attributes_declare_and_are_checked() -> None:
    decl = declarations(Router())
    assert decl is not None and decl.writes == {"request.model"}
    assert decl.outside == ("Fallback",)

    class Bad(AgentMiddleware[AgentState[Any], Any]):
        writes = ("request.modl",)

    with pytest.raises(
        ValueError,
        match=r"middleware 'Bad' \(.*test_effects_order.py:\d+\): 'request.modl' in writes= "
        r"is not an effect name\. Did you mean 'request.model'",
    ):
        create_agent(model(), middleware=[Bad()])


def test_undeclared_middleware_have_no_declaration() -> None:
    assert declarations(wrap("plain")) is None
    assert declarations(Fallback()) is not None


def test_compose_unites_its_members_declarations() -> None:
    a = wrap("a", writes=["request.model"], reads=["state.x"], outside=["b"])
    b = wrap("b", writes=["request.tools"], inside=["elsewhere"], requires=["needed"])
    both = compose(a, b)
    decl = declarations(both)
    assert decl is not None
    assert decl.writes == {"request.model", "request.tools"}
    assert decl.reads == {"state.x"}
    assert decl.outside == ()  # settled inside the composite
    assert decl.inside == ("elsewhere",) and decl.requires == ("needed",)
    assert declarations(compose(wrap("p"), wrap("q"))) is None


# -- constraints and their errors --------------------------------------------------------


def order_error(middleware: list[Any], **options: Any) -> str:
    with pytest.raises(MiddlewareOrderError) as info:
        create_agent(model(), middleware=middleware, **options)
    assert isinstance(info.value, ValueError)
    return str(info.value)


def test_outside_violation_names_both_with_file_line_and_an_order() -> None:
    fallback, router = Fallback(), Router()
    text = order_error([fallback, wrap("x"), router])
    assert text.startswith("create_agent cannot use this middleware order:")
    assert re.search(
        r"middleware 'Router' \(.*test_effects_order\.py:\d+\) must sit outside 'Fallback' "
        r"\(.*test_effects_order\.py:\d+\) \(it declares outside=\['Fallback'\]\), but it comes "
        r"after it in the list",
        text,
    )
    assert "an order that satisfies every constraint: [Router, Fallback, x]" in text


def test_inside_violation() -> None:
    inner = wrap("inner", inside=["outer"])
    text = order_error([inner, wrap("outer")])
    assert "middleware 'inner' (" in text
    assert "must sit inside 'outer' (" in text
    assert "(it declares inside=['outer']), but it comes before it in the list" in text
    assert "[outer, inner]" in text


def test_a_class_reference_matches_instances() -> None:
    inner = wrap("inner", inside=[Router])
    text = order_error([inner, Router()])
    assert "must sit inside 'Router'" in text


def test_requires_names_what_is_missing() -> None:
    text = order_error([wrap("a", requires=["auth"])])
    assert "middleware 'a' (" in text
    assert "requires 'auth' (it declares requires=['auth']), but no middleware of that name" in text
    create_agent(model(), middleware=[wrap("a", requires=["auth"]), wrap("auth")])


def test_position_outermost_and_innermost() -> None:
    text = order_error([wrap("x"), wrap("first", position="outermost")])
    assert "'first' (" in text and "must sit outside 'x'" in text
    assert "(it declares position='outermost')" in text
    text = order_error([wrap("last", position="innermost"), wrap("x")])
    assert "must sit inside 'x'" in text and "position='innermost'" in text
    create_agent(
        model(),
        middleware=[
            wrap("first", position="outermost"),
            wrap("x"),
            wrap("last", position="innermost"),
        ],
    )


def test_every_problem_is_listed_at_once() -> None:
    text = order_error([wrap("b", inside=["a"]), wrap("a"), wrap("c", requires=["zz"])])
    assert text.count("\n  - ") == 3  # requires, inside, and the satisfying order


def test_a_cycle_names_its_members() -> None:
    text = order_error(
        [wrap("a", outside=["b"]), wrap("b", outside=["c"]), wrap("c", outside=["a"])]
    )
    assert (
        "the ordering constraints form a cycle, so no order satisfies them: a -> b -> c -> a"
        in text
    )
    assert "'c' outside 'a' ('c' declares outside=['a'])" in text


def test_compose_checks_its_members_when_called_alone_and_the_agent_checks_the_list() -> None:
    both = compose(wrap("b", inside=["a"]), wrap("a"))  # a value: nothing is checked yet
    with pytest.raises(
        MiddlewareOrderError, match=r"^compose\(\) cannot use this middleware order"
    ):
        both.before_model({"messages": []}, None)  # its own hooks run: its members checked
    with pytest.raises(
        MiddlewareOrderError, match=r"^create_agent cannot use this middleware order"
    ):
        create_agent(model(), middleware=[both])


def test_constraints_on_absent_middleware_are_ignored() -> None:
    create_agent(model(), middleware=[wrap("a", outside=["not-here"], inside=[Router])])


def test_bad_order_and_effects_values() -> None:
    with pytest.raises(
        ValueError, match=r"create_agent\(\) got order='sorted'; use one of 'check', 'auto'"
    ):
        create_agent(model(), order="sorted")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"got effects='loud'; use one of 'warn', 'strict'"):
        create_agent(model(), effects="loud")  # type: ignore[arg-type]


# -- conflicts: listed, not warned; hazards: warned ----------------------------------------


def build_warnings(middleware: list[Any], **options: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        create_agent(model(), middleware=middleware, **options)
    return [str(w.message) for w in caught if issubclass(w.category, MiddlewareOrderWarning)]


def conflicts(middleware: list[Any]) -> list[str]:
    """The conflicts ``explain()`` lists for an agent of ``middleware`` (built silently)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", MiddlewareOrderWarning)
        agent = create_agent(model(), middleware=middleware)
    return [c.message for c in explain(agent).conflicts]


def test_a_write_write_conflict_is_listed_with_both_fixes_but_not_warned() -> None:
    # Two writers of one field in an undeclared order: the order is not said, not wrong.
    (text,) = conflicts(
        [wrap("router", writes=["state.route"]), wrap("fallback", writes=["state.route"])]
    )
    assert re.match(
        r"middleware 'router' \(.*:\d+\) and 'fallback' \(.*:\d+\): both write state.route, "
        r"and no constraint says which goes first \(now 'router' sits outside 'fallback'\)\. "
        r"Declare the order you mean: declare outside=\['fallback'\] on 'router'; for a "
        r"middleware you did not write, list funcware.effects.declare\(router, "
        r"outside=\['fallback'\]\) in its place, or the other way round",
        text,
    )


def test_a_write_read_conflict_is_listed() -> None:
    (text,) = conflicts(
        [wrap("reader", reads=["request.tools"]), wrap("writer", writes=["request.tools"])]
    )
    assert "'writer' writes request.tools, which 'reader' reads" in text


def test_a_hazard_warns_once_pointing_at_the_caller() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        create_agent(
            model(),
            middleware=[
                wrap("fallback", reads=["model.error"], writes=["request.model", "handler.retry"]),
                wrap("router", writes=["request.model"]),
            ],
        )
    (warning,) = [w for w in caught if issubclass(w.category, MiddlewareOrderWarning)]
    assert warning.filename == __file__
    assert "'router' sits inside 'fallback' and sets request.model on every call" in str(
        warning.message
    )


def test_the_merged_messages_channel_alone_is_no_conflict() -> None:
    """Every hook reads ``messages`` and its reducer merges writes: no conflict for it alone."""
    both = [wrap(n, reads=["state.messages"], writes=["state.messages"]) for n in "ab"]
    assert conflicts(both) == []
    (text,) = conflicts([wrap(n, writes=["state.messages", "state.x"]) for n in "ab"])
    assert "both write state.x," in text


def test_a_constraint_even_through_others_silences_the_conflict() -> None:
    a = wrap("a", writes=["state.x"], outside=["m"])
    m = wrap("m", outside=["b"])
    b = wrap("b", writes=["state.x"])
    assert conflicts([a, m, b]) == []


def test_undeclared_and_behaviour_effects_never_conflict() -> None:
    behaviours = [wrap(n, writes=["handler.retry", "interrupt"]) for n in "ab"]
    assert conflicts(behaviours) == []
    assert conflicts([wrap("a", writes=["request.model"]), wrap("plain")]) == []


def test_strict_effects_make_a_hazard_an_error_but_not_a_conflict() -> None:
    fallback = wrap("fallback", reads=["model.error"], writes=["request.model", "handler.retry"])
    text = order_error([fallback, wrap("router", writes=["request.model"])], effects="strict")
    assert "sets request.model on every call" in text and "(an error with effects='strict')" in text
    writers = [wrap(n, writes=["state.x"]) for n in "ab"]
    create_agent(model(), middleware=writers, effects="strict")


def test_compose_is_silent_and_the_agent_warns_once() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        both = compose(
            wrap("a", reads=["model.error"], writes=["handler.retry"]),
            wrap("b", writes=["model.error.recover"]),
        )
    assert [w for w in caught if issubclass(w.category, MiddlewareOrderWarning)] == []
    assert len(build_warnings([both])) == 1


# -- order="auto" ---------------------------------------------------------------------


def test_auto_sorts_and_explain_says_what_moved() -> None:
    fallback, router = Fallback(), Router()
    agent = create_agent(model(), middleware=[wrap("x"), fallback, router], order="auto")
    assert [m.name for m in explain(agent).plan.middleware] == ["x", "Router", "Fallback"]
    text = str(explain(agent))
    assert (
        "moved         'Router' moved outside 'Fallback' ('Router' declares outside=['Fallback'])"
        in text
    )
    assert agent.invoke(hi())["messages"][-1].content == "ok"


def test_auto_keeps_a_satisfying_order() -> None:
    items = [wrap("a", outside=["c"]), wrap("b"), wrap("c")]
    agent = create_agent(model(), middleware=items, order="auto")
    assert [m.name for m in explain(agent).plan.middleware] == ["a", "b", "c"]
    assert "moved" not in str(explain(agent))


def test_auto_fails_on_a_cycle() -> None:
    text = order_error([wrap("a", inside=["b"]), wrap("b", inside=["a"])], order="auto")
    assert "form a cycle" in text
    assert "a -> b -> a" in text or "b -> a -> b" in text


def test_compose_auto() -> None:
    both = compose(wrap("b", inside=["a"]), wrap("a"), order="auto")
    assert [m.name for m in both.members] == ["a", "b"]


edges_strategy = st.integers(min_value=1, max_value=8).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda e: e[0] != e[1]),
            max_size=12,
        ),
    )
)


def ancestors(n: int, edges: list[tuple[int, int]]) -> list[set[int]]:
    """For each node, the nodes that must come before it (transitively)."""
    before: list[set[int]] = [set() for _ in range(n)]
    changed = True
    while changed:
        changed = False
        for a, b in edges:
            new = {a} | before[a]
            if not new <= before[b]:
                before[b] |= new
                changed = True
    return before


@settings(max_examples=300, deadline=None)
@given(edges_strategy)
def test_stable_order_properties(case: tuple[int, list[tuple[int, int]]]) -> None:
    n, edges = case
    sorter: graphlib.TopologicalSorter[int] = graphlib.TopologicalSorter(
        {i: set() for i in range(n)}
    )
    for a, b in edges:
        sorter.add(b, a)
    try:
        sorter.prepare()
        has_cycle = False
    except graphlib.CycleError:
        has_cycle = True
    try:
        order, _ = stable_order(n, edges)
    except CycleError as exc:
        assert has_cycle
        cycle = exc.cycle
        assert len(set(cycle)) == len(cycle) >= 2
        for a, b in zip(cycle, [*cycle[1:], cycle[0]], strict=True):
            assert (a, b) in edges  # every named step is a declared edge
        return
    assert not has_cycle
    assert sorted(order) == list(range(n))
    pos = {item: i for i, item in enumerate(order)}
    assert all(pos[a] < pos[b] for a, b in edges)  # satisfies every constraint
    if all(a < b for a, b in edges):
        assert order == list(range(n))  # a satisfying order is kept as given
    before = ancestors(n, edges)
    for x in range(n):
        for y in range(x + 1, n):
            if pos[y] < pos[x]:  # y moved ahead of x: only to precede something not after x
                assert any(y in before[z] for z in range(x + 1))


@settings(max_examples=100, deadline=None)
@given(edges_strategy)
def test_auto_on_real_middleware_satisfies_the_constraints(
    case: tuple[int, list[tuple[int, int]]],
) -> None:
    n, edges = case
    outside: dict[int, list[str]] = {i: [] for i in range(n)}
    for a, b in edges:
        outside[a].append(f"m{b}")
    items = [wrap(f"m{i}", outside=outside[i]) for i in range(n)]
    try:
        agent = create_agent(model(), middleware=items, order="auto")
    except MiddlewareOrderError as exc:
        assert "form a cycle" in str(exc)
        members = re.search(r"satisfies them: ([\w >-]+) \(", str(exc))
        assert members is not None
        names = members.group(1).split(" -> ")
        assert names[0] == names[-1]
        for a, b in itertools.pairwise(names):
            assert (int(a[1:]), int(b[1:])) in edges
        return
    got = [m.name for m in explain(agent).plan.middleware]
    for a, b in edges:
        assert got.index(f"m{a}") < got.index(f"m{b}")


# -- explain ----------------------------------------------------------------------------------


def test_explain_shows_declarations_placement_and_conflicts() -> None:
    a = wrap("a", writes=["state.x"], reads=["request.messages"])
    b = wrap("b", writes=["state.x"], position="innermost")
    c = wrap("c")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MiddlewareOrderWarning)
        explanation = explain([a, c, b])
    text = str(explanation)
    assert "effects       a: reads=[request.messages] writes=[state.x]" in text
    assert "effects       c: undeclared (not checked)" in text
    assert "placed        b at 3: inside 'a' (it declares position='innermost')" in text
    assert "placed        a at 1: outside 'b' ('b' declares position='innermost')" in text
    assert explanation.conflicts == []  # the position orders them

    explanation = explain([wrap("p", writes=["state.y"]), wrap("q", writes=["state.y"])])
    (conflict,) = explanation.conflicts
    assert (conflict.outer, conflict.inner, conflict.kind, conflict.effects) == (
        "p",
        "q",
        "write/write",
        ("state.y",),
    )
    assert f"CONFLICT: {conflict.message}" in str(explanation)


def test_explain_lists_order_problems_without_raising() -> None:
    text = str(explain([wrap("b", inside=["a"]), wrap("a")]))
    assert "PROBLEM: middleware 'b' (" in text


def test_explain_without_declarations_is_unchanged() -> None:
    assert "effects" not in str(explain([wrap("p"), wrap("q")]))
