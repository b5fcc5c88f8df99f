"""``run.subagents``: nested named agents (``create_agent(name=...)``, run from a tool, say)
as their own stream handles (v3 streaming), as LangChain's agents give them; built on
langgraph's :class:`~langgraph.stream.SubgraphTransformer`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langgraph.stream import AsyncSubgraphRunStream, SubgraphRunStream, SubgraphTransformer

if TYPE_CHECKING:
    from langchain_protocol.protocol import LifecycleCause

__all__ = ["AsyncSubagentRunStream", "SubagentRunStream", "SubagentTransformer"]


class SubagentRunStream(SubgraphRunStream):
    """A nested named agent's run: ``name`` is its ``lc_agent_name``, ``cause`` its tool call."""

    cause: LifecycleCause | None = None
    """``{"type": "toolCall", "tool_call_id": ...}`` when the triggering tool call is known."""

    @property
    def name(self) -> str | None:
        """The nested agent's name."""
        return self.graph_name


class AsyncSubagentRunStream(AsyncSubgraphRunStream):
    """Async :class:`SubagentRunStream`."""

    cause: LifecycleCause | None = None
    """``{"type": "toolCall", "tool_call_id": ...}`` when the triggering tool call is known."""

    @property
    def name(self) -> str | None:
        """The nested agent's name."""
        return self.graph_name


class SubagentTransformer(SubgraphTransformer):
    """Projects direct child runs that carry an ``lc_agent_name`` onto ``run.subagents``.

    Unnamed nested runs are left to ``run.subgraphs`` alone; a named one appears on both.
    Native (``run.subagents``) and usable on the sync lane, like its base.
    """

    def init(self) -> dict[str, Any]:
        return {"subagents": self._log}

    def _on_started(
        self, ns: tuple[str, ...], graph_name: str | None, trigger_call_id: str | None
    ) -> None:
        if self._lc_by_ns.get(ns) is None or self._mux is None or ns in self._handles:
            return
        try:
            child = self._mux._make_child(ns)
        except RuntimeError:  # the mux is closing: nothing to feed
            return
        kind = AsyncSubagentRunStream if child.is_async else SubagentRunStream
        handle = kind(mux=child, path=ns, graph_name=graph_name, trigger_call_id=trigger_call_id)
        handle.cause = self._pending_cause
        self._handles[ns] = handle
        self._log.push(handle)
