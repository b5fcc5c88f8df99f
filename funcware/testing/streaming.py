"""``StreamingScriptedChatModel``: a ``ScriptedChatModel`` that streams its answers in chunks."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk

from funcware.guards.release import AManager, Manager, Messages, Stop, tool_call_chunks
from funcware.testing.scripted import ScriptedChatModel

__all__ = ["StreamingScriptedChatModel"]


class StreamingScriptedChatModel(ScriptedChatModel):
    """Replays its script like ``ScriptedChatModel``, but streams each answer.

    The text arrives ``chunk_size`` characters at a time, then each tool call as one
    tool-call chunk, as a provider's stream would; ``invoke`` still returns the whole
    message. For example, to see what ``stream_mode="messages"`` delivers::

        model = StreamingScriptedChatModel(responses=["Hello there"], chunk_size=4)
        agent = create_agent(model, [])
        [chunk.text for chunk, _ in agent.stream(inputs, stream_mode="messages")]
        # ['Hell', 'o th', 'ere', '']
    """

    chunk_size: int = 4
    """Characters of text per streamed chunk."""

    def _chunks(self, message: AIMessage) -> Iterator[AIMessageChunk]:
        """The chunks ``message`` streams as: text pieces, then its tool calls."""
        text, size = message.text, max(1, self.chunk_size)
        for start in range(0, len(text), size):
            yield AIMessageChunk(content=text[start : start + size], id=message.id)
        if message.tool_calls:
            yield AIMessageChunk(
                content="", id=message.id, tool_call_chunks=tool_call_chunks(message)
            )

    def _stream(
        self, messages: Messages, stop: Stop = None, run_manager: Manager = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        message = self._next(messages, kwargs).generations[0].message
        assert isinstance(message, AIMessage)
        for chunk in self._chunks(message):
            yield ChatGenerationChunk(message=chunk)

    async def _astream(
        self, messages: Messages, stop: Stop = None, run_manager: AManager = None, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._stream(messages, stop, None, **kwargs):
            yield chunk
