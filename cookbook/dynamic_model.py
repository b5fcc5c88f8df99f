"""Dynamic model: answer with a larger model once the conversation gets long.

Guarantee: calls with ``threshold`` or more messages go to the large model, the
others to the agent's model.

When to use: most turns are easy and a small, fast, cheap model does them well; long
conversations need a model with a bigger context window or better recall. Pick the model
per call instead of per agent.

``use_large_model_when_long(large, threshold=...)`` returns a ``wrap_model_call``
middleware (a decorated function closed over its settings). Before each call it counts
``request.messages`` and, at ``threshold`` or more, hands ``handler`` the request with
``request.override(model=large)``. The agent's own model serves every other call. Tools,
prompt and settings are bound to whichever model is used. The demo keeps the
conversation in a checkpointer, so it grows by two messages a turn.

How to adapt: decide on something else — the estimated token count
(``count_tokens_approximately`` from ``langchain_core.messages.utils``), the user's plan
in ``request.runtime.context``, a "hard" flag set in state by an earlier hook, or the
presence of images; choose among more than two models; change ``model_settings`` with
the model (``request.override(model=large, model_settings={"temperature": 0})``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from funcware import AgentMiddleware, ModelRequest, ModelResponse, create_agent, wrap_model_call
from funcware.testing import ScriptedChatModel


def use_large_model_when_long(
    large: BaseChatModel, *, threshold: int
) -> AgentMiddleware[Any, Any, Any]:
    """A middleware that sends calls with ``threshold`` or more messages to ``large``."""

    @wrap_model_call(reads=["request.messages"], writes=["request.model"])
    def choose_model(
        request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelResponse[Any]:
        if len(request.messages) >= threshold:
            return handler(request.override(model=large))
        return handler(request)

    return choose_model


def demo() -> tuple[Any, dict[str, Any]]:
    """Three turns in one thread: the first two go to the small model, the third to the large."""
    small = ScriptedChatModel(
        responses=["(small model) Hi! How can I help?", "(small model) Owls eat mice."]
    )
    large = ScriptedChatModel(
        responses=["(large model) So far we covered greetings and what owls eat."]
    )
    agent = create_agent(
        small,
        middleware=[use_large_model_when_long(large, threshold=5)],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "owls"}}
    for question in ("Hello!", "What do owls eat?", "Summarise our conversation."):
        state = agent.invoke({"messages": [HumanMessage(question)]}, config)

    assert [len(call.messages) for call in small.calls] == [1, 3]
    assert [len(call.messages) for call in large.calls] == [5]
    return agent, state


if __name__ == "__main__":
    print(demo()[1]["messages"][-1].content)
