"""Routed fallback: a model router and a model fallback, ordered by a declared constraint.

Guarantee: when the routed model raises, the backup answers instead of the run
failing.

When to use: pick a model per call (a cheap one for short chats, a larger one for long
ones) and still answer when the picked model fails. Both layers write ``request.model``,
so their order decides what happens: with the fallback outside the router, the router
puts its own pick back on every fallback attempt and the backup is never asked.

Each layer says what it touches (``writes=["request.model"]``; the fallback also reads
``model.error``). With nothing saying which goes first, ``create_agent`` warns of the
wrong order, the fallback outside the router (``MiddlewareOrderWarning``, see
:func:`unordered_warning`); the fix is a constraint: the fallback declares
``inside=["route_by_length"]``. Then a list in the wrong order is refused with an order
that works (``MiddlewareOrderError``), and ``order="auto"`` puts it right.

How to adapt: route on anything in the request (``runtime.context``, the tools offered);
fall back only on errors a second provider can fix; run with ``effects="strict"`` in tests
to check that each layer does only what it declares.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage

from funcware import (
    MiddlewareOrderError,
    MiddlewareOrderWarning,
    ModelRequest,
    ModelResponse,
    create_agent,
    wrap_model_call,
)
from funcware.testing import ScriptedChatModel

Handler = Callable[[ModelRequest[Any]], ModelResponse[Any]]


def route_by_length(small: BaseChatModel, large: BaseChatModel, threshold: int) -> Any:
    """Send the call to ``large`` once the conversation has ``threshold`` messages."""

    @wrap_model_call(reads=["request.messages"], writes=["request.model"])
    def route_by_length(request: ModelRequest[Any], handler: Handler) -> ModelResponse[Any]:
        model = large if len(request.messages) >= threshold else small
        return handler(request.override(model=model))

    return route_by_length


def fall_back_to(backup: BaseChatModel, *, ordered: bool = True) -> Any:
    """Ask ``backup`` when the model inside raises; must sit inside the router."""

    def fall_back(request: ModelRequest[Any], handler: Handler) -> ModelResponse[Any]:
        try:
            return handler(request)
        except Exception:
            return handler(request.override(model=backup))

    inside = ["route_by_length"] if ordered else None
    return wrap_model_call(
        reads=["model.error"], writes=["request.model", "handler.retry"], inside=inside
    )(fall_back)


def _models() -> tuple[ScriptedChatModel, ScriptedChatModel, ScriptedChatModel]:
    small = ScriptedChatModel(responses=[RuntimeError("small model overloaded")])
    large = ScriptedChatModel(responses=["(large model) unused"])
    backup = ScriptedChatModel(responses=["(backup model) Owls eat mice."])
    return small, large, backup


def unordered_warning() -> str:
    """The warning for the two layers without the constraint, the fallback outside."""
    small, large, backup = _models()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        create_agent(
            small,
            middleware=[fall_back_to(backup, ordered=False), route_by_length(small, large, 5)],
        )
    return next(str(w.message) for w in caught if issubclass(w.category, MiddlewareOrderWarning))


def wrong_order_error() -> str:
    """The error for the constrained layers listed fallback first."""
    small, large, backup = _models()
    try:
        create_agent(small, middleware=[fall_back_to(backup), route_by_length(small, large, 5)])
    except MiddlewareOrderError as exc:
        return str(exc)
    raise AssertionError("the wrong order was accepted")


def highlights(agent: Any, state: dict[str, Any]) -> list[str]:
    """The warning without the constraint, and the error for the wrong order, for the tour."""
    warning = unordered_warning().split(": ", 1)[1].split(". Fix")[0]
    error = wrong_order_error().splitlines()
    return [f"{'unordered':<15} warns: {warning}", f"{'wrong order':<15} {error[-1].strip()}"]


def demo() -> tuple[Any, dict[str, Any]]:
    """The small model fails; the fallback, inside the router, asks the backup."""
    small, large, backup = _models()
    agent = create_agent(small, middleware=[route_by_length(small, large, 5), fall_back_to(backup)])
    state = agent.invoke({"messages": [HumanMessage("What do owls eat?")]})
    assert state["messages"][-1].content == "(backup model) Owls eat mice."
    assert len(small.calls) == 1 and len(backup.calls) == 1 and not large.calls
    return agent, state


if __name__ == "__main__":
    print(demo()[1]["messages"][-1].content)
    print(unordered_warning())
