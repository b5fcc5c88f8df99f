"""Helpers the tests import: a sync/async ``Driver``, scripted tool calls, message texts.

``Driver`` runs an agent with the sync API or the async one on an event loop it is given
(the ``driver`` fixture in ``tests/conftest.py`` makes one per mode). ``StreamingScriptedModel``
streams one chunk per word, then the tool calls.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage

from funcware.guards.release import tool_call_chunks
from funcware.testing import StreamingScriptedChatModel

T = TypeVar("T")


# -- running agents sync or async ---------------------------------------------------


@dataclass
class Driver:
    """Runs agents with the sync API (``mode == "sync"``) or the async one on ``loop``."""

    mode: str
    loop: asyncio.AbstractEventLoop | None = None

    @property
    def is_async(self) -> bool:
        return self.mode == "async"

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on this driver's loop (async drivers only)."""
        assert self.loop is not None, "run() needs an async driver"
        return self.loop.run_until_complete(coro)

    def invoke(self, agent: Any, input: Any, config: Any = None, **kwargs: Any) -> Any:
        if self.is_async:
            return self.run(agent.ainvoke(input, config, **kwargs))
        return agent.invoke(input, config, **kwargs)

    def stream(self, agent: Any, input: Any, config: Any = None, **kwargs: Any) -> list[Any]:
        if not self.is_async:
            return list(agent.stream(input, config, **kwargs))

        async def collect() -> list[Any]:
            return [chunk async for chunk in agent.astream(input, config, **kwargs)]

        return self.run(collect())

    def get_state(self, agent: Any, config: Any) -> Any:
        if self.is_async:
            return self.run(agent.aget_state(config))
        return agent.get_state(config)


# -- models and messages ------------------------------------------------------------


def tool_calls(*calls: tuple[str, dict[str, Any]], text: str = "") -> AIMessage:
    """An ``AIMessage`` calling ``(name, args)`` tools, with ids ``call-0``, ``call-1``, ..."""
    return AIMessage(
        content=text,
        tool_calls=[
            {"name": name, "args": args, "id": f"call-{index}", "type": "tool_call"}
            for index, (name, args) in enumerate(calls)
        ],
    )


def contents(messages: list[BaseMessage]) -> list[str]:
    """The text of each message, for compact assertions on a conversation."""
    return [m.text for m in messages]


class StreamingScriptedModel(StreamingScriptedChatModel):
    """The kit's streaming scripted model, one chunk per word (and space), then tool calls."""

    def _chunks(self, message: AIMessage) -> Iterator[AIMessageChunk]:
        for word in re.split(r"(\s)", message.text) if message.text else []:
            yield AIMessageChunk(content=word, id=message.id)
        if message.tool_calls:
            calls = tool_call_chunks(message)
            yield AIMessageChunk(content="", id=message.id, tool_call_chunks=calls)
