"""Outer wins: two wrap layers write the same state key; the outer value is kept.

Guarantee: the state keeps the outer layer's verdict on the model's last answer.

When to use: layered checks where an inner layer gives a provisional answer and an
outer one the final word — a quick filter inside a thorough review, a cache inside a
router — and both record their result in the same state field.

Each layer returns ``ExtendedModelResponse(response, Command(update=...))``. funcware
collects the updates inner first, outer last, and merges them: on a plain key (no
reducer) the outermost layer's value wins, so ``verdict`` ends up as the outer
layer's; on ``messages`` (which has the ``add_messages`` reducer) every layer's value
is kept, in order — the model's answer, then the inner layer's note, then the outer's.
``compose(outer, inner)`` makes the nesting explicit: the first argument is outermost,
exactly as in ``create_agent(middleware=[outer, inner])``. (LangChain applies such
commands as separate writes, so two layers writing one plain key fail there.) Since the
order is the point, ``final_review`` declares ``outside=["quick_filter"]``: both write
``state.verdict``, and a list with them the other way round is refused.

How to adapt: give the key a reducer (``Annotated[list[str], operator.add]``) to keep
every layer's value instead of the outer one. Messages a wrap layer adds come after the
model's answer: when that answer has tool calls, a trailing ``AIMessage`` would hide
them, so write notes to a field of your own in that case.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.types import Command

from funcware import (
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    compose,
    create_agent,
    wrap_model_call,
)
from funcware.testing import ScriptedChatModel

BANNED = ("guaranteed", "risk-free")


class ReviewState(AgentState, total=False):
    verdict: str


def _answer_text(response: ModelResponse[Any]) -> str:
    return " ".join(m.text for m in response.result if isinstance(m, AIMessage))


@wrap_model_call(
    state_schema=ReviewState,
    reads=["model.result"],
    writes=["state.verdict", "state.messages", "messages.append"],
)
def quick_filter(
    request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
) -> ExtendedModelResponse[Any]:
    """Inner layer: a cheap word check; its verdict is only provisional."""
    response = handler(request)
    hits = [word for word in BANNED if word in _answer_text(response).lower()]
    verdict = f"flagged: {', '.join(hits)}" if hits else "provisionally fine"
    note = AIMessage(f"[quick_filter] {verdict}", name="quick_filter")
    return ExtendedModelResponse(response, Command(update={"verdict": verdict, "messages": [note]}))


@wrap_model_call(
    state_schema=ReviewState,
    reads=["model.result"],
    writes=["state.verdict", "state.messages", "messages.append"],
    outside=["quick_filter"],  # the final word: its verdict must be the one kept
)
def final_review(
    request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
) -> ExtendedModelResponse[Any]:
    """Outer layer: the final word on the answer (here: it must mention the risk)."""
    response = handler(request)
    verdict = "approved" if "risk" in _answer_text(response).lower() else "needs a risk notice"
    note = AIMessage(f"[final_review] {verdict}", name="final_review")
    return ExtendedModelResponse(response, Command(update={"verdict": verdict, "messages": [note]}))


review = compose(final_review, quick_filter, name="review")
"""``final_review`` outside, ``quick_filter`` inside."""


def demo() -> tuple[Any, dict[str, Any]]:
    """Both layers set ``verdict``; the outer layer's value is the one in the state."""
    model = ScriptedChatModel(
        responses=["Index funds suit long horizons; all investing carries risk of loss."]
    )
    agent = create_agent(model, middleware=[review])
    state = agent.invoke({"messages": [HumanMessage("Should I buy index funds?")]})
    return agent, state


if __name__ == "__main__":
    print(demo()[1]["verdict"])
