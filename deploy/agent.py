"""A funcware agent served by LangGraph Server: ``langgraph dev --config deploy/langgraph.json``.

``langgraph.json`` names the graph ``assistant``: the compiled agent ``agent`` below, built
once when the server imports this file. The server brings its own checkpointer and store,
so the agent is compiled without one; threads, interrupts and history are the server's.

It runs offline: the model is funcware's ``ScriptedChatModel`` answering every call by a
rule (``reply``) instead of a fixed script, since calls from many threads interleave on a
server. To go live, pass a real chat model instead; nothing else changes.

What each part shows through the server's API:

- ``context_schema=Caller``: every run passes ``context={"user_id": ..., "language": ...}``;
  the server checks it is an object, pydantic checks the fields when the run starts.
- ``check_access`` (``before_agent``) raises for a blocked user (``PermissionError``) or
  an empty ``user_id`` (``ValueError``): the run fails and the client gets the server's
  error report. ``langgraph.json`` sets ``FUNCWARE_ERROR_NOTES=message``, so funcware's
  note (middleware, hook, file:line) is in the error's message and repr, which the server
  passes on (the message only for the builtin types it deems safe, such as ``ValueError``).
- ``personal_prompt`` (``dynamic_prompt``) writes the system prompt from the context.
- ``report_progress`` (``before_model``) writes to the ``custom`` stream.
- ``UsageCounter`` keeps a public state field (``model_calls``) and a private one
  (``billed_to``, absent from the input and output schemas).
- ``ApproveToolCalls`` (the cookbook's ``human_approval`` recipe) interrupts the run before
  ``send_email``; the client resumes it with approve, edit or reject decisions.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import BaseModel, ConfigDict

from funcware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    PrivateStateAttr,
    Runtime,
    before_agent,
    before_model,
    create_agent,
    dynamic_prompt,
)
from funcware.cookbook.human_approval import ApproveToolCalls
from funcware.testing import ScriptedChatModel

BLOCKED_USERS = frozenset({"mallory"})
"""Users ``check_access`` turns away."""


class Caller(BaseModel):
    """Who is asking, given by the client with every run (``context=``)."""

    model_config = ConfigDict(frozen=True)

    user_id: str
    language: Literal["English", "French", "German"] = "English"


class UsageState(AgentState, total=False):
    """``model_calls`` is returned to clients; ``billed_to`` stays inside the agent."""

    model_calls: int
    billed_to: Annotated[str, PrivateStateAttr]


@before_agent
def check_access(state: AgentState, runtime: Runtime[Caller]) -> None:
    """Refuse runs without a caller, a caller without a name, and blocked callers."""
    if runtime.context is None:
        raise ValueError("this agent needs a caller: pass context={'user_id': ...} to the run")
    if not runtime.context.user_id.strip():
        raise ValueError("user_id is empty: pass the caller's id as context={'user_id': ...}")
    if runtime.context.user_id in BLOCKED_USERS:
        raise PermissionError(f"user {runtime.context.user_id!r} may not use this assistant")


@dynamic_prompt
def personal_prompt(request: ModelRequest[Caller]) -> str:
    """The system prompt for this caller."""
    base = "You are an office assistant."
    caller = request.runtime.context
    if caller is None:
        return base
    return f"{base} The user is {caller.user_id}; answer in {caller.language}."


@before_model
def report_progress(state: AgentState, runtime: Runtime[Caller]) -> None:
    """Tell the client, on the ``custom`` stream, that a model call is about to start."""
    user = runtime.context.user_id if runtime.context is not None else None
    runtime.stream_writer({"event": "model_call", "user": user, "messages": len(state["messages"])})


class UsageCounter(AgentMiddleware[UsageState, Caller]):
    """Counts model calls (public) and records whom to bill (private)."""

    state_schema = UsageState

    def after_model(self, state: UsageState, runtime: Runtime[Caller]) -> dict[str, Any]:
        caller = runtime.context
        return {
            "model_calls": state.get("model_calls", 0) + 1,
            "billed_to": caller.user_id if caller is not None else "",
        }


@tool
def send_email(to: str, subject: str) -> str:
    """Send an e-mail (needs a person's approval)."""
    return f"E-mail '{subject}' sent to {to}."


@tool
def get_weather(city: str) -> str:
    """Today's weather in a city (read-only, no approval)."""
    return f"Sunny in {city}."


_SAID = {"English": "You said", "French": "Vous avez dit", "German": "Sie sagten"}


def reply(messages: list[BaseMessage]) -> AIMessage:
    """The offline model: call a tool the user asks for, report tool results, else echo.

    ``email <address> about <subject>`` calls ``send_email``; ``weather in <city>`` calls
    ``get_weather``; after tool results it reports them; anything else is echoed in the
    language the system prompt asks for.
    """
    last = messages[-1]
    if isinstance(last, ToolMessage):
        results: list[str] = []
        for message in reversed(messages):
            if not isinstance(message, ToolMessage):
                break
            results.insert(0, message.text)
        return AIMessage("Done. " + " ".join(results))
    text = last.text.strip()
    call_id = f"call-{len(messages)}"
    if match := re.fullmatch(r"email (\S+) about (.+)", text, re.IGNORECASE):
        args = {"to": match[1], "subject": match[2]}
        return AIMessage("", tool_calls=[{"name": "send_email", "args": args, "id": call_id}])
    if match := re.fullmatch(r"weather in (.+)", text, re.IGNORECASE):
        args = {"city": match[1]}
        return AIMessage("", tool_calls=[{"name": "get_weather", "args": args, "id": call_id}])
    prompt = messages[0].text if messages[0].type == "system" else ""
    language = next((lang for lang in _SAID if f"answer in {lang}" in prompt), "English")
    return AIMessage(f"{_SAID[language]}: {text}")


agent = create_agent(
    ScriptedChatModel(respond=reply),
    [send_email, get_weather],
    middleware=[
        check_access,
        personal_prompt,
        report_progress,
        UsageCounter(),
        ApproveToolCalls(needs_approval={"send_email"}),
    ],
    context_schema=Caller,
    name="assistant",
)
"""The graph LangGraph Server serves (``langgraph.json``: ``./agent.py:agent``)."""
