"""Putting a guarded answer on the stream: a chat model run that replays chunks it is given.

langgraph's ``stream_mode="messages"``, ``astream_events`` and ``stream_events(version="v3")``
all listen to chat model runs. To stream a message the guards have finished with, or text a
sliding check has released, funcware runs :class:`StreamRelease`, a chat model whose
"generation" is those chunks: every stream mode then sees an ordinary model stream, and the
message it aggregates to is the one the state keeps.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.tool import ToolCallChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict

__all__ = [
    "AManager",
    "Manager",
    "Messages",
    "Stop",
    "StreamRelease",
    "as_chunk",
    "chunks_to_message",
    "tool_call_chunks",
]

Messages = list[BaseMessage]
"""The messages a chat model's ``_generate``, ``_stream`` and their async twins are given.
With :data:`Stop`, :data:`Manager` and :data:`AManager`: the signatures of those overrides,
which :class:`StreamRelease` and the chat models of ``funcware.testing`` share."""
Stop = list[str] | None
"""The stop sequences of a chat model call."""
Manager = CallbackManagerForLLMRun | None
"""The callback manager of a sync chat model run."""
AManager = AsyncCallbackManagerForLLMRun | None
"""The callback manager of an async chat model run."""


def tool_call_chunks(message: AIMessage) -> list[ToolCallChunk]:
    """``message``'s tool calls as the chunks a provider streams (arguments as JSON text)."""
    return [
        {
            "name": call["name"],
            "args": json.dumps(call["args"]),
            "id": call["id"],
            "index": index,
            "type": "tool_call_chunk",
        }
        for index, call in enumerate(message.tool_calls)
    ]


def as_chunk(message: AIMessage) -> AIMessageChunk:
    """``message`` as one chunk: its content, tool calls (as chunks), id, metadata."""
    return AIMessageChunk(
        content=message.content,
        chunk_position="last",
        id=message.id,
        name=message.name,
        additional_kwargs=dict(message.additional_kwargs),
        response_metadata=dict(message.response_metadata),
        usage_metadata=message.usage_metadata,
        tool_call_chunks=tool_call_chunks(message),
    )


def chunks_to_message(chunks: Iterable[AIMessageChunk]) -> AIMessage:
    """The message a sequence of chunks adds up to."""
    total: AIMessageChunk | None = None
    for chunk in chunks:
        total = chunk if total is None else total + chunk
    if total is None:
        return AIMessage(content="")
    message = AIMessage(
        content=total.content,
        id=total.id,
        name=total.name,
        additional_kwargs=total.additional_kwargs,
        response_metadata=total.response_metadata,
        usage_metadata=total.usage_metadata,
        tool_calls=total.tool_calls,
        invalid_tool_calls=total.invalid_tool_calls,
    )
    return message


class StreamRelease(BaseChatModel):
    """A chat model that "generates" the chunks it is given, sync or async (used once)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    chunks: Any = None
    """An iterable of ``AIMessageChunk`` (sync runs)."""
    achunks: Any = None
    """An async iterable of ``AIMessageChunk`` (async runs)."""

    @property
    def _llm_type(self) -> str:
        return "funcware-stream-release"

    def _generate(
        self, messages: Messages, stop: Stop = None, run_manager: Manager = None, **kwargs: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=chunks_to_message(self.chunks))])

    async def _agenerate(
        self, messages: Messages, stop: Stop = None, run_manager: AManager = None, **kwargs: Any
    ) -> ChatResult:
        collected = [chunk async for chunk in self.achunks]
        return ChatResult(generations=[ChatGeneration(message=chunks_to_message(collected))])

    def _stream(
        self, messages: Messages, stop: Stop = None, run_manager: Manager = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in self.chunks:
            yield ChatGenerationChunk(message=chunk)

    async def _astream(
        self, messages: Messages, stop: Stop = None, run_manager: AManager = None, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        async for chunk in self.achunks:
            yield ChatGenerationChunk(message=chunk)
