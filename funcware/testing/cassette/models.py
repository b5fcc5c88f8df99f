"""The two chat models a cassette hands out: one that records a real model, one that replays.

Both present a request the same way (see :mod:`.canonical`): the messages sent, the tools
bound (as OpenAI schemas, before any provider-specific conversion), ``tool_choice`` and
the other call settings. The recorder calls the real model with its callbacks detached, so
the agent's stream sees one model call, the recorder's, carrying the real model's chunks.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, cast

from langchain_core.language_models import BaseChatModel, LangSmithParams, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableBinding, RunnableConfig
from langchain_core.tools import BaseTool
from pydantic import Field, PrivateAttr

from funcware.guards.release import AManager, Manager, Messages, Stop, as_chunk, chunks_to_message
from funcware.testing.cassette.canonical import (
    canonical_request,
    canonical_tools,
    dump_message,
    load_message,
)
from funcware.testing.cassette.store import Deck, Tape

__all__ = ["RecordingChatModel", "ReplayChatModel"]

_BOUND = "funcware_cassette_bound"
"""The binding kwarg that carries the canonical tools, tool_choice and settings."""

_DETACHED: RunnableConfig = {"callbacks": [], "run_name": "cassette.recorded_model"}

ToolLike = dict[str, Any] | type | Callable[..., Any] | BaseTool


def _ls_params(recorded: dict[str, Any], stop: list[str] | None) -> LangSmithParams:
    """The recorded model's tracing parameters, so record and replay trace alike."""
    return cast("LangSmithParams", {**recorded, **({"ls_stop": stop} if stop else {})})


def _request(
    messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
) -> dict[str, Any]:
    """The canonical request of a call to ``_generate``/``_stream`` with ``kwargs``."""
    bound = kwargs.pop(_BOUND, None) or {
        "tools": canonical_tools(kwargs.get("tools") or []),
        "tool_choice": kwargs.get("tool_choice"),
        "settings": {},
        "provider": ["tools", "tool_choice"],
    }
    # Every other kwarg is a setting, also one bound on top of bind_tools' binding.
    extra = {k: v for k, v in kwargs.items() if k not in bound["provider"]}
    settings = {**bound["settings"], **extra, "stop": stop}
    return canonical_request(messages, bound["tools"], bound["tool_choice"], settings)


class RecordingChatModel(BaseChatModel):
    """Calls ``model`` and records each request with its answer (and streamed chunks)."""

    model: BaseChatModel
    """The real chat model."""

    recorded_ls_params: dict[str, Any] = Field(default_factory=dict)
    """The real model's LangSmith parameters (provider, model name), reported as its own."""

    _tape: Tape = PrivateAttr()

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        return _ls_params(self.recorded_ls_params, stop)

    @property
    def _llm_type(self) -> str:
        return f"cassette-recording-{self.model._llm_type}"

    def bind_tools(
        self,
        tools: Sequence[ToolLike],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind through the real model's own ``bind_tools``, keeping the canonical form."""
        provider = self.model.bind_tools(tools, tool_choice=tool_choice, **kwargs)
        if not (isinstance(provider, RunnableBinding) and provider.bound is self.model):
            raise TypeError(
                f"Cassette cannot record {type(self.model).__name__}: its bind_tools() "
                f"returned {type(provider).__name__}, not a binding of the model itself, "
                "so the recorded call would not be the call the model makes."
            )
        bound = {
            "tools": canonical_tools(tools),
            "tool_choice": tool_choice,
            "settings": kwargs,
            "provider": list(provider.kwargs),
        }
        return self.bind(**provider.kwargs, **{_BOUND: bound})

    def _start(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> tuple[int, dict[str, Any]]:
        request = _request(messages, stop, kwargs)
        return self._tape.reserve("calls"), request

    def _keep(self, index: int, request: dict[str, Any], response: dict[str, Any]) -> None:
        self._tape.fill("calls", index, request, response, model=type(self.model).__name__)

    def _generate(
        self, messages: Messages, stop: Stop = None, run_manager: Manager = None, **kwargs: Any
    ) -> ChatResult:
        index, request = self._start(messages, stop, kwargs)
        answer = self.model.invoke(messages, _DETACHED, stop=stop, **kwargs)
        self._keep(index, request, {"message": dump_message(answer)})
        return ChatResult(generations=[ChatGeneration(message=answer)])

    async def _agenerate(
        self, messages: Messages, stop: Stop = None, run_manager: AManager = None, **kwargs: Any
    ) -> ChatResult:
        index, request = self._start(messages, stop, kwargs)
        answer = await self.model.ainvoke(messages, _DETACHED, stop=stop, **kwargs)
        self._keep(index, request, {"message": dump_message(answer)})
        return ChatResult(generations=[ChatGeneration(message=answer)])

    def _stream(
        self, messages: Messages, stop: Stop = None, run_manager: Manager = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        index, request = self._start(messages, stop, kwargs)
        chunks = []
        for piece in self.model.stream(messages, _DETACHED, stop=stop, **kwargs):
            chunk = _as_chunk(piece)
            chunks.append(dump_message(chunk))
            yield ChatGenerationChunk(message=chunk)
        self._keep(index, request, {"chunks": chunks})

    async def _astream(
        self, messages: Messages, stop: Stop = None, run_manager: AManager = None, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        index, request = self._start(messages, stop, kwargs)
        chunks = []
        async for piece in self.model.astream(messages, _DETACHED, stop=stop, **kwargs):
            chunk = _as_chunk(piece)
            chunks.append(dump_message(chunk))
            yield ChatGenerationChunk(message=chunk)
        self._keep(index, request, {"chunks": chunks})


def _as_chunk(message: BaseMessage) -> AIMessageChunk:
    """``message`` as a chunk (a model that cannot stream answers whole)."""
    if isinstance(message, AIMessageChunk):
        return message
    if not isinstance(message, AIMessage):
        raise TypeError(f"A chat model answered with {type(message).__name__}, not an AIMessage.")
    return as_chunk(message)


def _chunks(response: dict[str, Any]) -> list[AIMessageChunk]:
    """The answer as chunks: as recorded, or the whole message as one last chunk."""
    if "chunks" in response:
        return [_as_chunk(load_message(c)) for c in response["chunks"]]
    return [_as_chunk(load_message(response["message"]))]


def _message(response: dict[str, Any]) -> BaseMessage:
    """The answer as one message: as recorded, or its chunks added up."""
    if "message" in response:
        return load_message(response["message"])
    return chunks_to_message(_chunks(response))


class ReplayChatModel(BaseChatModel):
    """Answers every call from a cassette, offline; a call that was not recorded raises."""

    recorded_ls_params: dict[str, Any] = Field(default_factory=dict)
    """The recorded model's LangSmith parameters (provider, model name)."""

    _deck: Deck = PrivateAttr()

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        return _ls_params(self.recorded_ls_params, stop)

    @property
    def _llm_type(self) -> str:
        return "cassette-replay"

    def bind_tools(
        self,
        tools: Sequence[ToolLike],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind the tools in the canonical form the recording compares against."""
        bound = {
            "tools": canonical_tools(tools),
            "tool_choice": tool_choice,
            "settings": kwargs,
            "provider": [],
        }
        return self.bind(**{_BOUND: bound})

    def _answer(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        response: dict[str, Any] = self._deck.take(_request(messages, stop, kwargs))["response"]
        return response

    def _generate(
        self, messages: Messages, stop: Stop = None, run_manager: Manager = None, **kwargs: Any
    ) -> ChatResult:
        message = _message(self._answer(messages, stop, kwargs))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self, messages: Messages, stop: Stop = None, run_manager: Manager = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in _chunks(self._answer(messages, stop, kwargs)):
            yield ChatGenerationChunk(message=chunk)
