"""Middleware declared ``subagents="inherit"`` holds in the agents started during the run.

A funcware agent invoked inside a tool of a parent whose PII redaction is inherited never
sends its model the raw value and answers redacted, sync and async; without the
declaration it does not; a subagent with a middleware of the same name keeps its own (no
second copy), and one it registered off by default is switched on; an inherited
``per_run="required"`` guard cannot be switched off by the subagent's run; an agent with
no middleware, a grandchild and an agent used as a graph node inherit too; only agents
that hand something down get the extra run wrap, and runs that hand nothing down load
nothing more; ``explain()`` says what is handed down and what a run inherits; the run
record nests the subagent's run under the parent's.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.config import get_config

import funcware
from funcware import RunConfigError, wrap_model_call
from funcware.cookbook.pii_redaction import PIIRedaction
from funcware.observe import record
from funcware.subagents import Hand, inherits
from funcware.testing import ScriptedChatModel

EMAIL = "alice@example.com"


def _call(name: str, args: dict[str, Any], call_id: str = "c1") -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])


def _parent(
    sub: Any, middleware: list[Any], *, configurable: dict[str, Any] | None = None
) -> tuple[Any, list[dict[str, Any]]]:
    """A parent agent whose one tool asks ``sub``; and the configs the tool saw."""
    seen: list[dict[str, Any]] = []

    @tool
    def ask_helper(topic: str) -> str:
        """Ask the helper agent to write to the customer about ``topic``."""
        seen.append(get_config())
        config = {"configurable": configurable} if configurable else None
        question = HumanMessage(f"write to {EMAIL} about {topic}")  # the tool adds the address
        return str(sub.invoke({"messages": [question]}, config)["messages"][-1].text)

    model = ScriptedChatModel(responses=[_call("ask_helper", {"topic": "billing"}), "ok"] * 2)
    return funcware.create_agent(model, [ask_helper], middleware=middleware), seen


def _async_parent(sub: Any, middleware: list[Any]) -> Any:
    @tool
    async def ask_helper(topic: str) -> str:
        """Ask the helper agent to write to the customer about ``topic``."""
        question = HumanMessage(f"write to {EMAIL} about {topic}")
        result = await sub.ainvoke({"messages": [question]})
        return str(result["messages"][-1].text)

    model = ScriptedChatModel(responses=[_call("ask_helper", {"topic": "billing"}), "ok"])
    return funcware.create_agent(model, [ask_helper], middleware=middleware)


def _helper(name: str = "helper", middleware: list[Any] | None = None) -> tuple[Any, Any]:
    model = ScriptedChatModel(responses=[f"I wrote to {EMAIL}"] * 3)
    return funcware.create_agent(model, middleware=middleware or [], name=name), model


def _redaction() -> PIIRedaction:
    """E-mail addresses redacted in input and answers; tool results left as they are, so
    the subagent's answer reaches the parent's state as the subagent gave it."""
    return PIIRedaction("email", apply_to_output=True)


def _seen_by(model: ScriptedChatModel) -> str:
    return " ".join(str(m.text) for call in model.calls for m in call.messages)


def test_the_pii_redaction_recipe_declares_it() -> None:
    assert inherits(PIIRedaction("email"))


def test_a_funcware_agent_used_as_a_tool_keeps_the_parents_pii_guard() -> None:
    sub, sub_model = _helper()
    parent, _ = _parent(sub, [_redaction()])

    result = parent.invoke({"messages": [HumanMessage("go")]})

    assert EMAIL not in _seen_by(sub_model)  # the subagent's model never saw it
    assert "[REDACTED_EMAIL]" in _seen_by(sub_model)
    reply = result["messages"][2]
    assert reply.type == "tool" and reply.text == "I wrote to [REDACTED_EMAIL]"  # its answer


async def test_a_funcware_agent_used_as_a_tool_keeps_the_guard_async() -> None:
    sub, sub_model = _helper()
    parent = _async_parent(sub, [_redaction()])

    result = await parent.ainvoke({"messages": [HumanMessage("go")]})

    assert EMAIL not in _seen_by(sub_model)
    assert "[REDACTED_EMAIL]" in _seen_by(sub_model)
    assert EMAIL not in str(result["messages"][2].text)


def test_without_the_declaration_the_subagent_runs_its_own_stack() -> None:
    guard = _redaction()
    guard.subagents = None
    sub, sub_model = _helper()
    parent, _ = _parent(sub, [guard])

    result = parent.invoke({"messages": [HumanMessage("go")]})

    assert EMAIL in _seen_by(sub_model)
    assert EMAIL in str(result["messages"][2].text)


def test_a_decorated_middleware_declares_it_with_the_option() -> None:
    sent: list[str] = []

    @wrap_model_call(subagents="inherit")
    def audit(request: Any, handler: Any) -> Any:
        sent.append(str(request.messages[-1].text))
        return handler(request)

    sub, _ = _helper()
    parent, _ = _parent(sub, [audit])
    parent.invoke({"messages": [HumanMessage("go")]})

    assert f"write to {EMAIL} about billing" in sent  # the subagent's model call
    assert inherits(audit)


def test_the_option_takes_only_inherit() -> None:
    with pytest.raises(TypeError, match="subagents='inherit'"):

        @wrap_model_call(subagents="yes")  # type: ignore[call-overload]
        def audit(request: Any, handler: Any) -> Any:
            return handler(request)


def test_a_subagent_with_a_middleware_of_the_same_name_keeps_its_own() -> None:
    own = PIIRedaction("email", strategy="hash")  # same name, another strategy
    sub, sub_model = _helper(middleware=[own])
    parent, _ = _parent(sub, [_redaction()])

    parent.invoke({"messages": [HumanMessage("go")]})

    seen = _seen_by(sub_model)
    assert "<email_hash:" in seen and "[REDACTED_EMAIL]" not in seen  # one copy: its own


def test_an_inherited_required_guard_cannot_be_switched_off_by_the_subagents_run() -> None:
    guard = _redaction()
    guard.per_run = "required"  # type: ignore[attr-defined]
    sub, _ = _helper()
    parent, _ = _parent(sub, [guard], configurable={"funcware": {"disable": [guard.name]}})

    with pytest.raises(RunConfigError, match="per_run='required'"):
        parent.invoke({"messages": [HumanMessage("go")]})


def test_an_inherited_guard_not_required_may_be_switched_off_by_name() -> None:
    sub, sub_model = _helper()
    guard = _redaction()
    parent, _ = _parent(sub, [guard], configurable={"funcware": {"disable": [guard.name]}})

    parent.invoke({"messages": [HumanMessage("go")]})

    assert EMAIL in _seen_by(sub_model)


def test_a_guard_the_parents_run_switches_off_is_not_handed_down() -> None:
    sub, sub_model = _helper()
    guard = _redaction()
    parent, _ = _parent(sub, [guard])

    parent.invoke(
        {"messages": [HumanMessage("go")]},
        {"configurable": {"funcware": {"disable": [guard.name]}}},
    )

    assert EMAIL in _seen_by(sub_model)


def test_a_grandchild_inherits_through_its_parent() -> None:
    grandchild, grandchild_model = _helper("grandchild")
    child, _ = _parent(grandchild, [])
    parent, _ = _parent(child, [_redaction()])

    parent.invoke({"messages": [HumanMessage("go")]})

    assert grandchild_model.calls and EMAIL not in _seen_by(grandchild_model)


def test_repeated_runs_reuse_the_stack_built_for_the_subagent() -> None:
    sub, sub_model = _helper()
    parent, _ = _parent(sub, [_redaction()])
    parent.invoke({"messages": [HumanMessage("go")]})
    chooser = next(w for w in sub.run_wraps if hasattr(w, "chooser")).chooser()
    built = dict(chooser._stacks)

    parent.invoke({"messages": [HumanMessage("again")]})

    assert dict(chooser._stacks) == built and len(built) == 1
    assert EMAIL not in _seen_by(sub_model)


def test_only_agents_that_hand_something_down_get_the_hand_wrap() -> None:
    plain, _ = _helper()
    guarded, _ = _helper(middleware=[_redaction()])

    assert not any(isinstance(w, Hand) for w in plain.run_wraps)
    assert any(isinstance(w, Hand) for w in guarded.run_wraps)


def test_runs_that_hand_nothing_down_load_nothing_more() -> None:
    from fresh_python import run_python

    loaded = run_python(
        """
        import json, sys
        from langchain_core.messages import AIMessage, HumanMessage
        from langchain_core.tools import tool
        import funcware
        from funcware.testing import ScriptedChatModel

        sub = funcware.create_agent(ScriptedChatModel(responses=["hi"]))

        @tool
        def ask(q: str) -> str:
            \"\"\"Ask.\"\"\"
            return sub.invoke({"messages": [HumanMessage(q)]})["messages"][-1].text

        call = {"name": "ask", "args": {"q": "?"}, "id": "c1"}
        model = ScriptedChatModel(responses=[AIMessage("", tool_calls=[call]), "ok"])
        funcware.create_agent(model, [ask]).invoke({"messages": [HumanMessage("go")]})
        print(json.dumps({"inherit": "funcware.subagents.inherit" in sys.modules}))
        """
    )

    assert loaded == {"inherit": False}


def test_explain_names_what_is_handed_down_and_what_a_run_inherits() -> None:
    sub, _ = _helper()
    guard = _redaction()
    parent, seen = _parent(sub, [guard])
    parent.invoke({"messages": [HumanMessage("go")]})

    assert f"subagents     inherit {guard.name}" in str(funcware.explain(parent))
    inside = funcware.explain(sub, run=seen[0])  # the config of a run in progress
    assert inside.inherited == (guard.name,)
    assert guard.name in [m.name for m in inside.plan.middleware]
    assert f"inherited     {guard.name} (from the parent run)" in str(inside)
    assert not funcware.explain(sub).inherited


def test_the_run_record_nests_the_subagents_run_under_the_parents() -> None:
    sub, _ = _helper("helper")
    guard = _redaction()
    parent, _ = _parent(sub, [guard])

    with record() as run:
        parent.invoke({"messages": [HumanMessage("go")]})

    layers = list(run)
    agent = next(layer for layer in layers if layer.hook == "agent")
    assert agent.middleware == "helper" and agent.outcome == "passed"
    assert agent.parent is not None and agent.parent.hook == "wrap_tool_call"  # the parent's
    inner = [layer for layer in layers if layer.parent is agent]
    assert {f"{layer.middleware}.{layer.hook}" for layer in inner} >= {
        f"{guard.name}.before_model",
        f"{guard.name}.wrap_model_call",
    }
    assert "  helper.agent · passed" in "\n".join(run.lines(timings=False))


def test_a_single_agents_record_has_no_agent_layer() -> None:
    agent, _ = _helper(middleware=[_redaction()])

    with record() as run:
        agent.invoke({"messages": [HumanMessage("hi")]})

    assert all(layer.hook != "agent" for layer in run)


def test_a_subagents_own_copy_that_is_off_by_default_is_switched_on() -> None:
    ran: list[str] = []

    def audit(who: str, **options: Any) -> Any:
        @wrap_model_call(name="audit", **options)
        def layer(request: Any, handler: Any) -> Any:
            ran.append(who)
            return handler(request)

        return layer

    # Both kinds of "off": kept in the graph and skipped (wrap-only), or left out of it.
    for own in (audit("own", per_run="off"), PIIRedaction("email", strategy="hash")):
        own.per_run = "off"  # type: ignore[union-attr]
        ran.clear()
        sub, sub_model = _helper(middleware=[own])
        handed = audit("parent", subagents="inherit") if own.name == "audit" else _redaction()
        parent, _ = _parent(sub, [handed])

        parent.invoke({"messages": [HumanMessage("go")]})

        if own.name == "audit":
            assert ran == ["parent", "own", "parent"]  # the subagent's call: its own copy
        else:
            assert "<email_hash:" in _seen_by(sub_model)  # its own copy, switched on


def test_a_funcware_agent_as_a_node_of_a_graph_a_tool_runs_inherits_too() -> None:
    from langgraph.graph import END, START, MessagesState, StateGraph

    sub, sub_model = _helper()
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(MessagesState)
    builder.add_node("helper", sub)
    builder.add_edge(START, "helper")
    builder.add_edge("helper", END)
    team = builder.compile()
    parent, _ = _parent(team, [_redaction()])

    parent.invoke({"messages": [HumanMessage("go")]})

    assert sub_model.calls and EMAIL not in _seen_by(sub_model)
