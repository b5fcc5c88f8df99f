"""A graph the run-level control test serves on LangGraph Server (``run_control``).

The model answers every call with one message naming the middleware that touched the
request, so what ran shows in the thread's messages: ``tracer`` (on, may be switched off),
``audit`` (registered off, switched on by a run that adds it), ``access`` (required) and
``greeting`` (a ``before_agent`` node hook: switching it off needs another graph).
``wrapped`` (``wrap_agent_call``) adds a last message to each finished run's result, so
the client sees that the run went through it. ``pause`` interrupts after the model, so a run pauses
and the client resumes it.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from funcware import (
    AgentRequest,
    AgentResponse,
    AgentState,
    after_model,
    before_agent,
    create_agent,
    wrap_agent_call,
    wrap_model_call,
)
from funcware.testing import ScriptedChatModel


def _marked(request: Any, mark: str) -> Any:
    first = request.messages[0]
    text = f"{first.content} [{mark}]"
    marked = first.model_copy(update={"content": text})
    return request.override(messages=[marked, *request.messages[1:]])


@wrap_model_call(per_run="required")
def access(request: Any, handler: Any) -> Any:
    return handler(_marked(request, "access"))


@wrap_model_call(per_run="on")
def tracer(request: Any, handler: Any) -> Any:
    return handler(_marked(request, "tracer"))


@wrap_model_call(per_run="off")
def audit(request: Any, handler: Any) -> Any:
    return handler(_marked(request, "audit"))


@before_agent
def greeting(state: AgentState[Any]) -> dict[str, Any]:
    return {"messages": [AIMessage("welcome")]}


@wrap_agent_call
def wrapped(request: AgentRequest, handler: Any) -> AgentResponse:
    response = handler(request)
    if response.interrupted:
        return response
    state = dict(response.result)
    state["messages"] = [*state["messages"], AIMessage("through wrap_agent_call")]
    return AgentResponse(state)


@after_model
def pause(state: AgentState[Any]) -> None:
    from langgraph.types import interrupt

    if "pause" in str(state["messages"][0].content):
        interrupt("continue?")


def _reply(messages: list[BaseMessage]) -> AIMessage:
    return AIMessage(f"model saw: {messages[0].content}")


run_control = create_agent(
    ScriptedChatModel(respond=_reply),
    middleware=[wrapped, access, tracer, audit, greeting, pause],
)
