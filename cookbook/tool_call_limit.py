"""Tool-call limit: cap the tool calls of one run; calls over the cap are refused.

Guarantee: at most ``limit`` tool calls are executed per run; every call over it is
answered with a refusal and never runs.

When to use: bound the cost and the side effects of a run (paid APIs, writes, slow
searches), or stop a model that keeps calling tools instead of answering.

``ToolCallLimit`` keeps the run's count in the state (``run_tool_calls``, through its
``state_schema``), resets it in ``before_agent`` and checks it in ``after_model``, where
the model's tool calls are known but not yet executed. It counts the calls the agent is
about to run: those of the model's latest answer (the last ``AIMessage``, wherever other
hooks' messages put it) that no ``ToolMessage`` answers yet — a call a reviewer already
rejected will not run, so it costs nothing. Calls within the budget go on to
the tools; each call over it gets an error ``ToolMessage`` right away. The agent only
runs the calls that have no answer yet, so refused calls never execute, and the model
reads the refusal and can answer with what it has. With ``exit_behavior="end"`` the run
stops instead: every call of that turn is answered with the refusal, a final
``AIMessage`` says why, and the hook jumps to ``"end"`` (declared with ``hook_config``).
Counting after the model (not in a ``wrap_tool_call``) keeps the count exact when one
turn asks for several tools at once, since those run in parallel on the same state.

How to adapt: count per tool (a ``dict[str, int]`` field) to limit one expensive tool;
keep a second counter that is not reset to cap a whole thread (with a checkpointer);
count only tools with side effects; change the refusal text your model reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.tools import tool
from langgraph.runtime import Runtime

from funcware import AgentMiddleware, AgentState, create_agent, hook_config
from funcware.testing import ScriptedChatModel


class ToolCallLimitState(AgentState[Any], total=False):
    run_tool_calls: int


def pending_calls(messages: Sequence[AnyMessage]) -> list[ToolCall]:
    """The calls of the model's latest answer (the last ``AIMessage``) that no
    ``ToolMessage`` answers yet: the calls the agent is about to run."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AIMessage):
            answered = {m.tool_call_id for m in messages[index + 1 :] if isinstance(m, ToolMessage)}
            return [c for c in message.tool_calls if c["id"] not in answered]
    return []


class ToolCallLimit(AgentMiddleware[ToolCallLimitState, Any]):
    """Allows ``limit`` tool calls per run; refuses the rest (or ends the run).

    Guarantee: at most ``limit`` tool calls are executed per run.
    """

    state_schema = ToolCallLimitState
    reads = ("state.messages", "state.run_tool_calls", "messages.latest")
    writes = ("state.messages", "state.run_tool_calls", "messages.answer", "messages.append")

    def __init__(self, limit: int, exit_behavior: Literal["continue", "end"] = "continue") -> None:
        self.limit = limit
        self.exit_behavior = exit_behavior

    def refusal(self, name: str, call_id: str | None) -> ToolMessage:
        """The answer a refused call gets."""
        return ToolMessage(
            f"Tool call limit reached ({self.limit} per run): {name!r} was not run. "
            "Answer with the information you already have.",
            name=name,
            tool_call_id=call_id or "",
            status="error",
        )

    def before_agent(self, state: ToolCallLimitState, runtime: Runtime[Any]) -> dict[str, Any]:
        return {"run_tool_calls": 0}

    @hook_config(can_jump_to=["end"])
    def after_model(
        self, state: ToolCallLimitState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        calls = pending_calls(state["messages"])
        if not calls:
            return None
        used = state.get("run_tool_calls", 0)
        allowed = max(self.limit - used, 0)
        if len(calls) <= allowed:
            return {"run_tool_calls": used + len(calls)}
        if self.exit_behavior == "end":
            refusals = [self.refusal(c["name"], c["id"]) for c in calls]
            notice = AIMessage(f"Stopping: the limit of {self.limit} tool calls was reached.")
            return {"messages": [*refusals, notice], "jump_to": "end"}
        refused = [self.refusal(c["name"], c["id"]) for c in calls[allowed:]]
        return {"messages": refused, "run_tool_calls": used + allowed}


@tool
def search(query: str) -> str:
    """Search the (pretend) web."""
    return f"Results for {query!r}."


def demo() -> tuple[Any, dict[str, Any]]:
    """Limit 2: the model asks for three searches; the third is refused, then it answers."""
    searches = [
        AIMessage("", tool_calls=[{"name": "search", "args": {"query": q}, "id": f"s{i}"}])
        for i, q in enumerate(["owls", "owl diet", "owl lifespan"], start=1)
    ]
    model = ScriptedChatModel(responses=[*searches, "Owls are nocturnal and eat mice."])
    agent = create_agent(model, [search], middleware=[ToolCallLimit(limit=2)])
    state = agent.invoke({"messages": [HumanMessage("Tell me all about owls.")]})
    outcomes = [m.status for m in state["messages"] if isinstance(m, ToolMessage)]
    assert outcomes == ["success", "success", "error"] and state["run_tool_calls"] == 2
    return agent, state


if __name__ == "__main__":
    print(demo()[1]["messages"][-1].content)
