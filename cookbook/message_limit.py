"""Message limit: end the run once the conversation reaches a length (jump to end).

Guarantee: no model call starts once the conversation holds ``MAX_MESSAGES``
messages.

When to use: guard against runaway tool loops, or cap the cost of one conversation.
The check runs before every model call; when the history is too long it returns
``{"jump_to": "end"}``, which skips the model and goes to the ``after_agent`` hooks.

How to adapt: change ``MAX_MESSAGES``; count only AI messages, or tokens, instead of
all messages; append an explanatory ``AIMessage`` in the same update so the user
sees why the run stopped.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from funcware import AgentState, before_model, create_agent
from funcware.testing import ScriptedChatModel

MAX_MESSAGES = 4


@before_model(
    can_jump_to=["end"],
    reads=["state.messages", "messages.history"],
    writes=["state.messages", "messages.append"],
)
def message_limit(state: AgentState) -> dict[str, Any] | None:
    """Stop before the model once the history holds ``MAX_MESSAGES`` messages."""
    if len(state["messages"]) >= MAX_MESSAGES:
        notice = AIMessage(f"Stopping: the conversation reached {MAX_MESSAGES} messages.")
        return {"messages": [notice], "jump_to": "end"}
    return None


@tool
def lookup(topic: str) -> str:
    """Look a topic up in the (pretend) knowledge base."""
    return f"Notes about {topic}."


def demo() -> tuple[Any, dict[str, Any]]:
    """A model that would keep calling tools forever is stopped by the limit."""
    loop = [
        AIMessage("", tool_calls=[{"name": "lookup", "args": {"topic": f"t{i}"}, "id": f"c{i}"}])
        for i in range(5)
    ]
    agent = create_agent(ScriptedChatModel(responses=loop), [lookup], middleware=[message_limit])
    state = agent.invoke({"messages": [HumanMessage("Research everything.")]})
    return agent, state


if __name__ == "__main__":
    print(demo()[1]["messages"][-1].content)
