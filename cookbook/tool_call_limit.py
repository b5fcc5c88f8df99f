"""Tool-call limit: cap the tool calls of one run; calls over the cap are refused.

Guarantee: at most ``limit`` tool calls are executed per run; every call over it is
answered with a refusal and never runs, and the refusal is in place before any
``after_model`` hook runs, so a reviewer (``ApproveToolCalls``) in any order is never
asked about a call this limit refuses.

When to use: bound the cost and the side effects of a run (paid APIs, writes, slow
searches), or stop a model that keeps calling tools instead of answering.

``ToolCallLimit`` keeps the run's count in the state (``run_tool_calls``, through its
``state_schema``), resets it in ``before_agent`` and checks it in ``wrap_model_call``, right
after the model answers and before anything else sees the answer. Calls within the budget
go on; each call over it gets an error ``ToolMessage`` through the wrap's
``Command(update=...)``, which lands right after the model's answer. Every ``after_model``
hook, whatever its place in the list, then sees those calls as answered: the agent runs
only the calls that have no answer yet, and an approval gate asks only about calls that
will run. The model reads the refusal and can answer with what it has. With
``exit_behavior="end"`` the run stops instead: every call of that turn is answered with the
refusal and a final ``AIMessage`` says why, so the agent has nothing left to run and ends.
Counting the model's whole answer at once keeps the count exact when one turn asks for
several tools, since those run in parallel on the same state. The limit decides before a
reviewer does, so a call a reviewer later rejects still used its place in the budget.

``limit`` must be a non-negative ``int`` and ``exit_behavior`` ``"continue"`` or ``"end"``;
anything else is refused when the middleware is made (never read as "no limit").

How to adapt: count per tool (a ``dict[str, int]`` field) to limit one expensive tool;
keep a second counter that is not reset to cap a whole thread (with a checkpointer);
count only tools with side effects; change the refusal text your model reads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.runtime import Runtime
from langgraph.types import Command

from funcware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    create_agent,
)
from funcware.testing import ScriptedChatModel


class ToolCallLimitState(AgentState[Any], total=False):
    run_tool_calls: int


class ToolCallLimit(AgentMiddleware[ToolCallLimitState, Any]):
    """Allows ``limit`` tool calls per run; refuses the rest (or ends the run).

    Guarantee: at most ``limit`` tool calls are executed per run, and a call over it is
    refused before any ``after_model`` hook (an approval gate) sees it.
    """

    state_schema = ToolCallLimitState
    reads = ("state.run_tool_calls", "model.result")
    writes = ("state.messages", "state.run_tool_calls", "messages.answer", "messages.append")

    def __init__(self, limit: int, exit_behavior: Literal["continue", "end"] = "continue") -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValueError(
                f"ToolCallLimit(limit={limit!r}): give a whole number of tool calls, 0 or more."
            )
        if exit_behavior not in ("continue", "end"):
            raise ValueError(
                f"ToolCallLimit(exit_behavior={exit_behavior!r}): use 'continue' (refuse the "
                "calls over the limit, let the model answer) or 'end' (stop the run)."
            )
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

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        response = handler(request)
        answers = [m for m in response.result if isinstance(m, AIMessage)]
        if not answers:
            return response
        answered = {m.tool_call_id for m in response.result if isinstance(m, ToolMessage)}
        calls = [c for c in answers[-1].tool_calls if c["id"] not in answered]
        if not calls:
            return response
        used = int(request.state.get("run_tool_calls", 0))  # type: ignore[call-overload]
        allowed = max(self.limit - used, 0)
        if len(calls) <= allowed:
            update: dict[str, Any] = {"run_tool_calls": used + len(calls)}
        elif self.exit_behavior == "end":
            refusals = [self.refusal(c["name"], c["id"]) for c in calls]
            notice = AIMessage(f"Stopping: the limit of {self.limit} tool calls was reached.")
            update = {"messages": [*refusals, notice], "run_tool_calls": used}
        else:
            refused = [self.refusal(c["name"], c["id"]) for c in calls[allowed:]]
            update = {"messages": refused, "run_tool_calls": used + allowed}
        return ExtendedModelResponse(response, Command(update=update))


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
