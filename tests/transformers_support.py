"""Stream transformers the stream and interop tests share: a word scrubber and a method log.

``Scrubber`` rewrites a word out of every streamed message before the built-in projections;
``MethodLog`` projects each event's method onto ``run.extensions['methods']``; ``Redacting``
is a middleware that brings ``Scrubber``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from langchain_core.messages import BaseMessage
from langgraph.stream import ProtocolEvent, StreamChannel, StreamTransformer

from funcware import AgentMiddleware


def _scrub(value: Any, word: str) -> Any:
    if isinstance(value, BaseMessage) and isinstance(value.content, str):
        return value.model_copy(update={"content": value.content.replace(word, "[gone]")})
    if isinstance(value, dict):
        return {k: _scrub(v, word) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_scrub(v, word) for v in value)
    return value


class Scrubber(StreamTransformer):
    """Rewrites a word out of every streamed message, before the built-in projections."""

    before_builtins: ClassVar[bool] = True
    required_stream_modes: ClassVar[tuple[str, ...]] = ("messages", "values", "tools")

    def __init__(self, scope: tuple[str, ...] = (), *, word: str = "secret") -> None:
        super().__init__(scope)
        self.word = word

    def init(self) -> dict[str, Any]:
        return {}

    def process(self, event: ProtocolEvent) -> bool:
        event["params"]["data"] = _scrub(event["params"]["data"], self.word)
        return True


class MethodLog(StreamTransformer):
    """Projects the method of every event it sees onto ``run.extensions['methods']``."""

    required_stream_modes: ClassVar[tuple[str, ...]] = ("updates",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self.channel: StreamChannel[str] = StreamChannel()

    def init(self) -> dict[str, Any]:
        return {"methods": self.channel}

    def process(self, event: ProtocolEvent) -> bool:
        self.channel.push(event["method"])
        return True


class Redacting(AgentMiddleware):
    transformers = (Scrubber,)
