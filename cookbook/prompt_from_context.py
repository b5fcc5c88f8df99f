"""Prompt from context: build the system prompt per run from ``runtime.context``.

Guarantee: every model call of a run started with ``context=`` has a system
prompt that names the caller.

When to use: the prompt depends on who is asking or where (user name, language, plan,
tenant, today's date) and that information comes from the caller, not the conversation.

The agent declares ``context_schema=UserContext`` (a dataclass); each run passes its own
``context=UserContext(...)`` to ``invoke``. A ``@dynamic_prompt`` function receives the
``ModelRequest`` before every model call, reads ``request.runtime.context`` and returns the
prompt (a ``str`` or a ``SystemMessage``), which replaces the system message for that call
only. The static ``system_prompt`` given to ``create_agent`` is still there, as
``request.system_prompt``, so the function can extend it rather than start over. Context
is read-only and is not stored in the state: it is right for facts about the caller,
wrong for facts that change during the run (keep those in state). A run started
without ``context=`` gets the static prompt alone.

How to adapt: add fields to ``UserContext`` (timezone, permissions); read
``request.state`` as well (e.g. mention a summary kept in state); return a
``SystemMessage`` with content blocks when the provider supports prompt caching.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.messages import HumanMessage

from funcware import ModelRequest, create_agent, dynamic_prompt
from funcware.testing import ScriptedChatModel


@dataclass(frozen=True)
class UserContext:
    """What the caller tells the agent about the user, per run."""

    user_name: str
    language: str = "English"
    expertise: str = "beginner"


# it replaces the system message with a new string (from its text; its blocks are lost)
@dynamic_prompt(writes=["request.system_message"])
def prompt_from_context(request: ModelRequest[UserContext]) -> str:
    """The static prompt plus who the user is, in which language to answer, and how."""
    context = request.runtime.context
    base = request.system_prompt or "You are a helpful assistant."
    if context is None:  # invoked without context=...: keep the static prompt
        return base
    return (
        f"{base}\n"
        f"You are talking to {context.user_name}. Always answer in {context.language}, "
        f"at a level suited to a {context.expertise}."
    )


def demo() -> tuple[Any, dict[str, Any]]:
    """One agent, two callers: each model call gets a prompt written for its caller."""
    model = ScriptedChatModel(
        responses=["Bonjour Ada ! Un graphe est ...", "Hallo Bo! Ein Graph ist ..."]
    )
    agent = create_agent(
        model,
        system_prompt="You are a patient maths tutor.",
        middleware=[prompt_from_context],
        context_schema=UserContext,
    )
    question = {"messages": [HumanMessage("What is a graph?")]}
    agent.invoke(question, context=UserContext("Ada", language="French"))
    state = agent.invoke(question, context=UserContext("Bo", "German", expertise="expert"))

    first, second = (call.system_prompt or "" for call in model.calls)
    assert first.startswith("You are a patient maths tutor.") and "Ada" in first
    assert "answer in German" in second and "expert" in second
    return agent, state


if __name__ == "__main__":
    print(demo()[1]["messages"][-1].content)
