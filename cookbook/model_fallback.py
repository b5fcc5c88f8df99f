"""Model fallback: when the primary model raises, ask the next model in a list instead.

Guarantee: when the model raises one of ``fall_back_on``, each fallback model is
asked, in order, before the run fails.

When to use: keep an agent answering through a provider outage, or put a cheap model
first and a stronger one behind it for the calls the cheap one fails.

``ModelFallback`` calls ``handler`` with the request as it is (the agent's own model);
if that raises one of ``fall_back_on``, it calls ``handler`` again with
``request.override(model=fallback)`` for each fallback in turn. ``override`` returns a
new request, so nothing else sees the swap: tools, prompt and settings travel with it
and are bound to the fallback model the same way. If every model fails, the last
error is raised; each earlier one is its ``__context__``, so the traceback shows them all.

How to adapt: compose it with a retry (``compose(ModelFallback(...), ModelRetry(...))``
retries each model before moving on); fall back only on errors a second provider can fix
(outages, rate limits), not on bad requests; change ``model_settings`` too when the
fallback needs different ones (``request.override(model=..., model_settings={...})``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langgraph.errors import GraphBubbleUp

from funcware import AgentMiddleware, AgentState, ModelRequest, ModelResponse, create_agent
from funcware.testing import ScriptedChatModel


class ModelFallback(AgentMiddleware[AgentState[Any], Any]):
    """Tries each fallback model, in order, when the model before it raises."""

    reads = ("model.error",)
    writes = ("request.model", "handler.retry")

    def __init__(
        self,
        *fallbacks: BaseChatModel,
        fall_back_on: tuple[type[Exception], ...] = (Exception,),
    ) -> None:
        if not fallbacks:
            raise ValueError("ModelFallback needs at least one fallback model")
        self.fallbacks = fallbacks
        self.fall_back_on = fall_back_on

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        return self._try(request, handler, list(self.fallbacks))

    def _try(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
        fallbacks: list[BaseChatModel],
    ) -> ModelResponse[Any]:
        try:
            return handler(request)
        except GraphBubbleUp:
            raise
        except self.fall_back_on:
            if not fallbacks:
                raise
            # Called inside ``except``: a later error keeps this one as its context.
            return self._try(request.override(model=fallbacks[0]), handler, fallbacks[1:])


def demo() -> tuple[Any, dict[str, Any]]:
    """The primary model is down; the backup answers the question."""
    primary = ScriptedChatModel(responses=[ConnectionError("primary provider is down")])
    backup = ScriptedChatModel(responses=["(backup model) Paris is the capital of France."])
    agent = create_agent(primary, middleware=[ModelFallback(backup)])
    state = agent.invoke({"messages": [HumanMessage("What is the capital of France?")]})
    assert len(primary.calls) == 1 and len(backup.calls) == 1
    return agent, state


if __name__ == "__main__":
    print(demo()[1]["messages"][-1].content)
