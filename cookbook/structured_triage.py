"""Structured triage: the agent answers with a typed record, and middleware shapes and checks it.

Guarantee: a triage with a priority outside 1-3 never ends the run.

When to use: the caller needs data, not prose (a ticket's priority and team, an
extraction, a verdict), and some rules about that data depend on the run: which outcomes
this caller may get, which values are allowed.

``create_agent(response_format=ToolStrategy(Triage | Escalation))`` gives the model one
structured-output tool per outcome; its call is validated into the dataclass and returned
as the result's ``structured_response`` (a bad call is sent back to the model to fix).
Two hooks work on top of it:

- ``outcomes_for_caller`` (``wrap_model_call``) narrows the union per call with
  ``request.override(response_format=ToolStrategy(Triage))`` when ``runtime.context`` says
  the caller may not escalate, so the model is only offered the ``Triage`` tool. A wrap
  may narrow the agent's format, never add a schema it did not declare.
- ``priority_policy`` (``after_model``, may jump to the model) reads the structured answer
  from the state; a priority outside the team's scale is answered with a correction and
  the model is asked again, so the rule the schema cannot express still holds.

How to adapt: use pydantic models for field constraints the schema can carry (then the
``handle_errors`` retry does the work of ``priority_policy``); pass a plain schema instead
of ``ToolStrategy`` to let the agent use the provider's native JSON mode where the model
supports it; set ``tool_message_content`` for what the transcript shows after the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import AIMessage, HumanMessage

from funcware import (
    AgentState,
    ModelRequest,
    ModelResponse,
    ToolStrategy,
    after_model,
    create_agent,
    wrap_model_call,
)
from funcware.testing import ScriptedChatModel, StructuredAnswer


@dataclass
class Triage:
    """Route a support ticket to a team with a priority from 1 (urgent) to 3 (low)."""

    team: Literal["billing", "shipping", "accounts"]
    priority: int
    summary: str


@dataclass
class Escalation:
    """Hand the ticket to a human supervisor, saying why."""

    reason: str


@dataclass
class Caller:
    """The run's context: who is asking."""

    can_escalate: bool = False


@wrap_model_call(writes=["request.response_format"])
def outcomes_for_caller(
    request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
) -> ModelResponse[Any]:
    """Offer the ``Escalation`` outcome only to callers allowed to escalate."""
    context = request.runtime.context if request.runtime is not None else None
    if context is None or not context.can_escalate:
        request = request.override(response_format=ToolStrategy(Triage))
    return handler(request)


@after_model(
    can_jump_to=["model"],
    reads=["state.structured_response"],
    writes=["state.messages", "messages.append"],
)
def priority_policy(state: AgentState[Any]) -> dict[str, Any] | None:
    """Send a triage with a priority outside 1-3 back to the model with a correction."""
    answer = state.get("structured_response")
    if isinstance(answer, Triage) and not 1 <= answer.priority <= 3:
        note = f"Priority {answer.priority} is not on our scale; use 1, 2 or 3."
        return {"messages": [HumanMessage(note)], "jump_to": "model"}
    return None


def build(model: Any) -> Any:
    """The triage agent around ``model``."""
    return create_agent(
        model,
        system_prompt="Triage the customer's ticket.",
        middleware=[outcomes_for_caller, priority_policy],
        response_format=ToolStrategy(Triage | Escalation),
        context_schema=Caller,
    )


def demo() -> tuple[Any, dict[str, Any]]:
    """A first triage breaks the priority rule and is corrected; only Triage is offered."""
    model = ScriptedChatModel(
        responses=[
            StructuredAnswer(Triage("billing", 5, "Charged twice for one order"), id="t1"),
            StructuredAnswer(Triage("billing", 1, "Charged twice for one order"), id="t2"),
        ]
    )
    agent = build(model)
    state = agent.invoke(
        {"messages": [HumanMessage("I was charged twice for order 1042!")]},
        context=Caller(can_escalate=False),
    )
    assert state["structured_response"] == Triage("billing", 1, "Charged twice for one order")
    assert [call.tool_names for call in model.calls] == [["Triage"], ["Triage"]]
    assert isinstance(state["messages"][-2], AIMessage)
    return agent, state


if __name__ == "__main__":
    print(demo()[1]["structured_response"])
