"""A deepagents ``task`` subagent keeps the parent's PII guard (the ``deepagents`` extra).

deepagents builds its subagents with ``create_agent`` when the deep agent is made and
starts them from its ``task`` tool; with deepagents pointed at funcware's ``create_agent``
(as in ``tests/interop/test_deepagents.py``), a ``PIIRedaction`` given to the deep agent
(it declares ``subagents="inherit"``) also guards each subagent's model calls and answer:
a customer's e-mail address a subagent's tool returns never reaches its model, and its
report comes back redacted; without the declaration it does not. LangChain's own
``PIIMiddleware``, given the attribute ``subagents = "inherit"``, is inherited the same way.

Skipped with a reason when deepagents is not installed (it needs Python 3.11+); with
``FUNCWARE_REQUIRE_DEEPAGENTS=1`` (CI) a missing deepagents is a failure instead.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from support import build_deep_agents_on_funcware, require_deepagents

import funcware
from funcware.cookbook.pii_redaction import PIIRedaction
from funcware.observe import record
from funcware.testing import ScriptedChatModel

deepagents = require_deepagents()

EMAIL = "jane.doe@example.com"


@pytest.fixture
def on_funcware(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """deepagents builds with funcware's create_agent; the agents it built."""
    return build_deep_agents_on_funcware(monkeypatch)


@tool
def lookup_customer(customer_id: str) -> str:
    """Fetch a customer's record from the CRM."""
    return f"Customer {customer_id}: Jane Doe, {EMAIL}, plan: premium."


def _call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])


def _deep_agent(guard: Any) -> tuple[Any, ScriptedChatModel]:
    """A deep agent whose ``researcher`` subagent looks the customer up; its model."""
    parent_model = ScriptedChatModel(
        responses=[
            _call(
                "task", {"description": "Look up customer 42", "subagent_type": "researcher"}, "t1"
            ),
            "Done.",
        ]
    )
    researcher_model = ScriptedChatModel(
        responses=[
            _call("lookup_customer", {"customer_id": "42"}, "l1"),
            f"Customer 42 is Jane Doe ({EMAIL}), premium plan.",
        ]
    )
    agent = deepagents.create_deep_agent(
        model=parent_model,
        middleware=[guard],
        subagents=[
            {
                "name": "researcher",
                "description": "Looks customers up.",
                "system_prompt": "You look customers up in the CRM.",
                "model": researcher_model,
                "tools": [lookup_customer],
            }
        ],
    )
    return agent, researcher_model


def _seen_by(model: ScriptedChatModel) -> str:
    return " ".join(str(m.text) for call in model.calls for m in call.messages)


def _report(result: dict[str, Any]) -> str:
    reply = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    return str(reply.text)


def _under(layer: Any, ancestor: Any) -> bool:
    parent = layer.parent
    while parent is not None and parent is not ancestor:
        parent = parent.parent
    return parent is ancestor


def _guard() -> PIIRedaction:
    # Tool results left as they are: the report reaches the parent as the subagent gave it.
    return PIIRedaction("email", apply_to_output=True)


def test_a_task_subagent_keeps_the_parents_pii_guard(on_funcware: list[Any]) -> None:
    agent, researcher_model = _deep_agent(_guard())

    result = agent.invoke({"messages": [HumanMessage("Who is customer 42?")]})

    assert len(researcher_model.calls) == 2  # the subagent ran, and saw its tool's result
    assert "Jane Doe" in _seen_by(researcher_model)
    assert EMAIL not in _seen_by(researcher_model)
    assert "[REDACTED_EMAIL]" in _seen_by(researcher_model)
    assert _report(result) == "Customer 42 is Jane Doe ([REDACTED_EMAIL]), premium plan."
    assert result["messages"][-1].content == "Done."


async def test_a_task_subagent_keeps_the_parents_pii_guard_async(on_funcware: list[Any]) -> None:
    agent, researcher_model = _deep_agent(_guard())

    result = await agent.ainvoke({"messages": [HumanMessage("Who is customer 42?")]})

    assert len(researcher_model.calls) == 2
    assert EMAIL not in _seen_by(researcher_model)
    assert _report(result) == "Customer 42 is Jane Doe ([REDACTED_EMAIL]), premium plan."


def test_without_the_declaration_the_task_subagent_runs_unguarded(
    on_funcware: list[Any],
) -> None:
    guard = _guard()
    guard.subagents = None
    agent, researcher_model = _deep_agent(guard)

    result = agent.invoke({"messages": [HumanMessage("Who is customer 42?")]})

    assert EMAIL in _seen_by(researcher_model)
    assert EMAIL in _report(result)


def test_the_record_nests_the_task_subagents_run_under_the_deep_agent(
    on_funcware: list[Any],
) -> None:
    guard = _guard()
    agent, _ = _deep_agent(guard)

    with record() as run:
        agent.invoke({"messages": [HumanMessage("Who is customer 42?")]})

    nested = next(layer for layer in run if layer.hook == "agent")
    assert nested.middleware == "researcher"
    inner = {f"{layer.middleware}.{layer.hook}" for layer in run if _under(layer, nested)}
    assert {f"{guard.name}.before_model", f"{guard.name}.wrap_model_call"} <= inner
    assert f"subagents     inherit {guard.name}" in str(funcware.explain(on_funcware[-1]))


def test_langchains_pii_middleware_declared_inherit_guards_the_task_subagent(
    on_funcware: list[Any],
) -> None:
    from langchain.agents.middleware import PIIMiddleware

    guard = PIIMiddleware("email", strategy="redact", apply_to_tool_results=True)
    guard.subagents = "inherit"  # type: ignore[attr-defined]  # LangChain's, declared
    agent, researcher_model = _deep_agent(guard)

    agent.invoke({"messages": [HumanMessage("Who is customer 42?")]})

    assert len(researcher_model.calls) == 2
    assert EMAIL not in _seen_by(researcher_model)
    assert "[REDACTED_EMAIL]" in _seen_by(researcher_model)
