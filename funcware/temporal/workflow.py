"""``AgentWorkflow``: one thread of a funcware agent as a Temporal workflow.

It runs the agent served under a graph name (:func:`~funcware.temporal.graph.plugin`) with
the checkpoints kept in the workflow. When a hook or tool calls ``interrupt()`` the
workflow waits, holding no worker, until a decision arrives: the update ``resume`` (which
answers once the workflow accepted it) or the signal ``resume_signal``, sent through any
client; whichever worker picks the workflow up then continues the run. The query
``pending`` shows what the interrupts ask (``None`` while nothing waits).
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from langchain_core.messages import convert_to_messages
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command
    from temporalio.langgraph import graph

    from funcware.temporal.graph import agent_for

__all__ = ["AgentWorkflow"]

_WAITING = object()


def _with_stable_ids(value: Any) -> Any:
    """The input, its messages made messages (from tuples or dicts) with ids from
    ``workflow.uuid4()`` where they have none (the graph would draw random ones, which a
    replay would not draw again)."""
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
        return value
    messages = convert_to_messages(value["messages"])
    for message in messages:
        if message.id is None:
            message.id = str(workflow.uuid4())
    return {**value, "messages": messages}


@workflow.defn(name="funcware.AgentWorkflow")
class AgentWorkflow:
    """Runs ``agent_for(graph)`` on ``input``; answers its interrupts from updates or signals."""

    def __init__(self) -> None:
        self._pending: list[dict[str, Any]] | None = None
        self._decision: Any = _WAITING

    @workflow.query
    def pending(self) -> list[dict[str, Any]] | None:
        """The open interrupts (``{"id", "value"}`` each), or ``None``."""
        return self._pending

    @workflow.update
    async def resume(self, decision: Any) -> str:
        """Answer the open interrupts with ``decision`` (what ``Command(resume=...)`` takes)."""
        self._decision = decision
        return "accepted"

    @resume.validator
    def _only_when_waiting(self, decision: Any) -> None:
        if self._pending is None:
            raise ValueError("no interrupt is waiting for a decision in this run")

    @workflow.signal
    def resume_signal(self, decision: Any) -> None:
        """The same as the update ``resume``, for clients that cannot wait for an answer."""
        if self._pending is not None:
            self._decision = decision

    @workflow.run
    async def run(self, graph_name: str, input: dict[str, Any]) -> dict[str, Any]:
        """Run the agent to its end; the result is its final state (its output schema)."""
        graph(graph_name)  # the plugin's per-run setup; fails early for an unknown name
        agent = agent_for(graph_name).copy({"checkpointer": InMemorySaver()})
        config = {"configurable": {"thread_id": workflow.info().workflow_id}}
        result = await agent.ainvoke(_with_stable_ids(input), config)
        while "__interrupt__" in result:
            self._pending = [{"id": i.id, "value": i.value} for i in result["__interrupt__"]]
            await workflow.wait_condition(lambda: self._decision is not _WAITING)
            decision, self._decision, self._pending = self._decision, _WAITING, None
            result = await agent.ainvoke(Command(resume=decision), config)
        return dict(result)
