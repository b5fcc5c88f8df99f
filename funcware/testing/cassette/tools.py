"""Tool results on a cassette: a ``wrap_tool_call`` middleware that records or replays them.

A tool call is matched by its name, arguments and call id (the ids come from the recorded
model answers, so they repeat on replay), in any order: parallel tool calls finish in any
order. A recorded result without a message id gets one derived from its call id, so a
replayed run's messages are identical to the recorded run's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.types import Command

from funcware.hooks.middleware import AgentMiddleware
from funcware.hooks.types import ToolCallRequest
from funcware.testing.cassette.canonical import dump_message, jsonable, load_message
from funcware.testing.cassette.store import Deck, Tape

__all__ = ["RecordToolResults", "ReplayToolResults"]

Handler = Callable[[ToolCallRequest], ToolMessage | Command[Any]]
AsyncHandler = Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]


def _request(request: ToolCallRequest) -> dict[str, Any]:
    call = request.tool_call
    return {"name": call["name"], "args": jsonable(call["args"]), "id": call.get("id")}


class RecordToolResults(AgentMiddleware):
    """Runs each tool and records its result message on the cassette."""

    reads = ()
    writes = ("tool.result",)

    def __init__(self, tape: Tape) -> None:
        self._tape = tape

    def _keep(self, index: int, request: ToolCallRequest, result: Any) -> None:
        if not isinstance(result, ToolMessage):
            raise TypeError(
                f"Cassette cannot record the result of tool {request.tool_call['name']!r}: it "
                f"is {type(result).__name__}, and a cassette replays ToolMessages only. Record "
                "the model alone (leave out record_tools()) for tools that return a Command."
            )
        if result.id is None:
            result.id = f"cassette-tool-{request.tool_call.get('id')}"
        self._tape.fill("tool_calls", index, _request(request), dump_message(result))

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Handler
    ) -> ToolMessage | Command[Any]:
        """Run the tool, then record its result."""
        index = self._tape.reserve("tool_calls")
        result = handler(request)
        self._keep(index, request, result)
        return result

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: AsyncHandler
    ) -> ToolMessage | Command[Any]:
        """Async :meth:`wrap_tool_call`."""
        index = self._tape.reserve("tool_calls")
        result = await handler(request)
        self._keep(index, request, result)
        return result


class ReplayToolResults(AgentMiddleware):
    """Answers each tool call with its recorded result; the tool itself never runs."""

    reads = ()
    writes = ("tool.result", "handler.skip")

    def __init__(self, deck: Deck) -> None:
        self._deck = deck

    def _answer(self, request: ToolCallRequest) -> ToolMessage:
        message = load_message(self._deck.take(_request(request))["response"])
        assert isinstance(message, ToolMessage)
        return message

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Handler
    ) -> ToolMessage | Command[Any]:
        """The recorded result of this call."""
        return self._answer(request)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: AsyncHandler
    ) -> ToolMessage | Command[Any]:
        """Async :meth:`wrap_tool_call`."""
        return self._answer(request)
