"""The sliding window: release checked text once it is far enough behind the newest token."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Sequence

from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.messages.tool import ToolCallChunk

from funcware.guards.policy import SlidingWindow
from funcware.guards.release import as_chunk

__all__ = ["SlidingText", "combine", "sliding_achunks", "sliding_chunks"]

_CUT_TRIES = 8
"""How many cut points to try before holding the text for one more chunk."""


def combine(windows: Sequence[SlidingWindow]) -> SlidingWindow:
    """One window for several guards: their checks in turn (first given first), widest span."""
    if len(windows) == 1:
        return windows[0]
    checks = tuple(w.check for w in windows)

    def check(text: str) -> str:
        for one in checks:
            text = one(text)
        return text

    return SlidingWindow(chars=max(w.chars for w in windows), check=check)


class SlidingText:
    """Text fed piece by piece; :meth:`feed` returns what may be released, checked.

    A cut at ``k`` is taken only when checking ``text[:k]`` and ``text[k:]`` apart gives
    what checking ``text`` gives, so a match is never split; held text is at least
    ``chars`` long until :meth:`finish`.
    """

    def __init__(self, window: SlidingWindow) -> None:
        self.chars = window.chars
        self.check: Callable[[str], str] = window.check
        self.pending = ""

    def _cuts(self, limit: int) -> Iterator[int]:
        yield limit
        tried = 1
        for index in range(limit - 1, 0, -1):
            if tried >= _CUT_TRIES:
                return
            if self.pending[index - 1].isspace() != self.pending[index].isspace():
                tried += 1
                yield index

    def feed(self, text: str) -> str:
        """Add ``text``; return the checked text now safe to release (often ``""``)."""
        self.pending += text
        limit = len(self.pending) - self.chars
        if limit <= 0:
            return ""
        whole = self.check(self.pending)
        for cut in self._cuts(limit):
            head = self.check(self.pending[:cut])
            rest = self.pending[cut:]
            if head + self.check(rest) == whole:
                self.pending = rest
                return head
        return ""

    def finish(self) -> str:
        """Everything still held, checked."""
        out = self.check(self.pending) if self.pending else ""
        self.pending = ""
        return out


class _Assembler:
    """Turns raw chunks into released ones: text through the window, the rest held."""

    def __init__(self, window: SlidingWindow) -> None:
        self.text = SlidingText(window)
        self.held: AIMessageChunk | None = None
        self.id: str | None = None

    def take(self, chunk: AIMessageChunk | AIMessage) -> AIMessageChunk | None:
        if not isinstance(chunk, AIMessageChunk):  # a model that cannot stream gives it whole
            chunk = as_chunk(chunk).model_copy(update={"chunk_position": None})
        self.id = self.id or chunk.id
        rest = chunk.model_copy(update={"content": ""})
        self.held = rest if self.held is None else self.held + rest
        piece = self.text.feed(chunk.text)
        return AIMessageChunk(content=piece, id=self.id) if piece else None

    def last(self) -> AIMessageChunk:
        final = self.text.finish()
        if self.held is None:
            return AIMessageChunk(content=final, id=self.id, chunk_position="last")
        calls: list[ToolCallChunk] = []
        for call in self.held.tool_call_chunks:
            args = call.get("args")
            calls.append({**call, "args": self.text.check(args)} if args else call)
        update = {"content": final, "id": self.id, "chunk_position": "last"}
        if calls:  # tool-call arguments pass through the check too, whole
            fields = self.held.model_dump(
                exclude={"tool_calls", "invalid_tool_calls", "tool_call_chunks", "type"}
            )
            return AIMessageChunk(**{**fields, **update}, tool_call_chunks=calls)
        return self.held.model_copy(update=update)


def sliding_chunks(
    source: Iterator[AIMessageChunk], window: SlidingWindow
) -> Iterator[AIMessageChunk]:
    """The released chunks of a streamed answer (sync)."""
    assembler = _Assembler(window)
    for chunk in source:
        released = assembler.take(chunk)
        if released is not None:
            yield released
    yield assembler.last()


async def sliding_achunks(
    source: AsyncIterator[AIMessageChunk], window: SlidingWindow
) -> AsyncIterator[AIMessageChunk]:
    """The released chunks of a streamed answer (async)."""
    assembler = _Assembler(window)
    async for chunk in source:
        released = assembler.take(chunk)
        if released is not None:
            yield released
    yield assembler.last()
