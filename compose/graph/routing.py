"""Where the agent goes next: the conditional edges out of hook nodes that jump, and out of
the model and tool steps (loaded when the graph has one)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph._internal._runnable import RunnableCallable
from langgraph.graph import StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Send

from funcware.compose.graph.places import Places

__all__ = [
    "after_model_route",
    "after_tools_route",
    "jump_route",
    "structured_retry_route",
    "wire_loop",
]


def jump_route(places: Places, default: str) -> Callable[[Mapping[str, Any]], str]:
    """Edge out of a hook node that declared jumps: the jump target, else ``default``."""

    def route(state: Mapping[str, Any]) -> str:
        return places.resolve(state.get("jump_to")) or default

    return route


def _last_ai(messages: list[Any]) -> tuple[AIMessage | None, list[ToolMessage]]:
    """The last AI message and the tool messages after it."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], AIMessage):
            replies = [m for m in messages[index + 1 :] if isinstance(m, ToolMessage)]
            return messages[index], replies
    return None, []


def after_model_route(
    places: Places, structured: frozenset[str] = frozenset()
) -> Callable[[Mapping[str, Any]], Any]:
    """Edge out of the model step: a jump; else each pending tool call to ``tools``; else exit.

    Calls of the ``structured`` output tools are answered in the model step and never go
    to ``tools``. When every call is answered, exit if a structured response was just
    produced, else loop back to the model (a hook or a retry message answered them).
    """

    def route(state: Mapping[str, Any]) -> str | list[Send]:
        jumped = places.resolve(state.get("jump_to"))
        if jumped is not None:
            return jumped
        ai, replies = _last_ai(state["messages"])
        if ai is None or not ai.tool_calls:
            return places.exit
        answered = {m.tool_call_id for m in replies}
        pending = [
            call
            for call in ai.tool_calls
            if call["id"] not in answered and call["name"] not in structured
        ]
        if pending:
            # ToolNode reads a list as tool calls only when each says it is one.
            return [Send("tools", [{**call, "type": "tool_call"}]) for call in pending]
        if state.get("structured_response") is not None:
            return places.exit
        return places.loop_entry

    return route


def after_tools_route(
    places: Places,
    return_direct: frozenset[str],
    executable: frozenset[str],
    structured: frozenset[str] = frozenset(),
) -> Callable[[Mapping[str, Any]], str]:
    """Edge out of ``tools``: exit if every tool that ran is ``return_direct``, or if a
    structured-output call was answered without error; else loop back to the model.

    What ran is read from the tool messages (a wrap may have answered with another
    tool's result) and counts only tools the tool node executes, not schema-only ones.
    """

    def ran_only_direct(ai: AIMessage, replies: list[ToolMessage]) -> bool:
        ran = {m.tool_call_id: m.name for m in replies if m.name in executable}
        names = [
            name
            for call in ai.tool_calls
            if (name := ran.get(call["id"] or "", call["name"])) in executable
        ]
        return bool(names) and all(name in return_direct for name in names)

    def route(state: Mapping[str, Any]) -> str:
        ai, replies = _last_ai(state["messages"])
        if ai is None:
            return places.loop_entry
        if return_direct and ran_only_direct(ai, replies):
            return places.exit
        if structured and any(m.name in structured and m.status != "error" for m in replies):
            return places.exit
        return places.loop_entry

    return route


def structured_retry_route(places: Places) -> Callable[[Mapping[str, Any]], str]:
    """Edge out of the model step of a tool-less agent with structured-output tools:
    a jump; else exit once a structured response is produced; else back to the model."""

    def route(state: Mapping[str, Any]) -> str:
        jumped = places.resolve(state.get("jump_to"))
        if jumped is not None:
            return jumped
        if state.get("structured_response") is not None:
            return places.exit
        return places.loop_entry

    return route


def wire_loop(
    graph: StateGraph[Any, Any, Any, Any],
    places: Places,
    loop_exit: str,
    tool_node: ToolNode | None,
    structured: frozenset[str],
    model_wraps: bool,
) -> None:
    """The edges out of the loop's last node (``loop_exit``) and the tools node, for an
    agent with tools or structured output (``structured``: its output tools)."""
    if tool_node is None:  # structured output: answered in the model step, or asked again
        graph.add_conditional_edges(
            loop_exit,
            edge(structured_retry_route(places)),
            sorted({places.loop_entry, places.exit}),
        )
        return
    return_direct = frozenset(n for n, t in tool_node.tools_by_name.items() if t.return_direct)
    executable = frozenset(tool_node.tools_by_name)
    graph.add_conditional_edges(
        "tools",
        edge(after_tools_route(places, return_direct, executable, structured)),
        sorted(
            {places.loop_entry, places.exit} if return_direct or structured else {places.loop_entry}
        ),
    )
    # Back to the loop entry only when something past the model can answer its tool calls
    # (an after_model hook, a model wrap, structured output), as LangChain draws it.
    can_loop = loop_exit != "model" or model_wraps or bool(structured)
    graph.add_conditional_edges(
        loop_exit,
        edge(after_model_route(places, structured)),
        sorted({"tools", places.exit, *([places.loop_entry] if can_loop else [])}),
    )


def edge(route: Callable[..., Any]) -> RunnableCallable:
    """A routing function as an untraced runnable (no callback run per decision)."""
    return RunnableCallable(route, trace=False)
