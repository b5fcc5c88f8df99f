"""Test helpers: ``ScriptedChatModel``, a chat model that replays a script offline."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, is_dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, Field, PrivateAttr, TypeAdapter

from funcware.guards.release import AManager, Manager, Messages, Stop
from funcware.hooks.wording import a, plural

__all__ = ["RecordedCall", "ScriptExhaustedError", "ScriptedChatModel", "StructuredAnswer"]


class ScriptExhaustedError(RuntimeError):
    """The model was called more times than it has scripted responses."""

    __module__ = "funcware.testing"  # where it is documented and imported from


@dataclass
class RecordedCall:
    """One request the model received."""

    messages: list[BaseMessage]
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: Any = None
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools bound for this call."""
        return [t.get("function", t).get("name", "?") for t in self.tools]

    @property
    def response_format(self) -> Any:
        """The provider-native ``response_format`` bound for this call, if any."""
        return self.settings.get("response_format")

    @property
    def system_prompt(self) -> str | None:
        """Text of the system message sent, if any."""
        first = self.messages[0] if self.messages else None
        return first.text if first is not None and first.type == "system" else None


@dataclass(frozen=True)
class StructuredAnswer:
    """A scripted structured answer, given the way the call asks for it.

    If the call bound a provider-native ``response_format``, the model answers with
    ``data`` as JSON text; otherwise it calls the structured-output tool named ``tool``
    (default: the class name of ``data``) with ``data`` as arguments. ``data`` is a
    pydantic model, a dataclass instance or a dict (then ``tool`` is needed for tools).
    """

    data: Any
    tool: str | None = None
    id: str | None = None
    """The tool call id (default ``"structured_<n>"``, n the call's index)."""

    def as_json(self) -> Any:
        """``data`` as JSON-compatible values."""
        return TypeAdapter(type(self.data)).dump_python(self.data, mode="json")

    def message(self, index: int, call: RecordedCall) -> AIMessage:
        """The AI message answering ``call`` (the ``index``-th) with this data."""
        if call.response_format is not None:
            return AIMessage(content=json.dumps(self.as_json()))
        name = self.tool or (None if isinstance(self.data, dict) else type(self.data).__name__)
        if name is None or name not in call.tool_names:
            raise ValueError(
                f"ScriptedChatModel response #{index} is a StructuredAnswer for tool {name!r}, "
                f"but call #{index} bound no provider response_format and no such tool "
                f"(bound tools: {call.tool_names}). Pass StructuredAnswer(data, tool='...') "
                "with one of those names, or give the agent a response_format."
            )
        tool_call = {"name": name, "args": self.as_json(), "id": self.id or f"structured_{index}"}
        return AIMessage(content="", tool_calls=[tool_call])


def _as_message(scripted: Any, index: int, call: RecordedCall) -> AIMessage:
    """Scripted response #``index`` as the AI message answering ``call``."""
    if not isinstance(scripted, StructuredAnswer) and (
        (isinstance(scripted, BaseModel) and not isinstance(scripted, BaseMessage))
        or (is_dataclass(scripted) and not isinstance(scripted, type))
    ):
        scripted = StructuredAnswer(scripted)
    if isinstance(scripted, StructuredAnswer):
        return scripted.message(index, call)
    if isinstance(scripted, str):
        return AIMessage(content=scripted)
    if isinstance(scripted, AIMessage):
        return scripted.model_copy(deep=True)
    raise TypeError(
        f"ScriptedChatModel response #{index} is a {type(scripted).__name__}; "
        "script AIMessage, str, StructuredAnswer (or pydantic/dataclass instances) "
        "or exception instances."
    )


class ScriptedChatModel(BaseChatModel):
    """Replays ``responses`` in order, one per call, and records every request.

    A response may be an ``AIMessage`` (with ``tool_calls``), a ``str`` (an ``AIMessage``
    with that content), an exception instance (raised, to test retries and fallbacks), or
    a structured answer: a :class:`StructuredAnswer`, or a pydantic model / dataclass
    instance (its structured-output tool called, or its JSON sent when the call bound a
    provider-native ``response_format``).
    Calling it once more than scripted raises :class:`ScriptExhaustedError`, unless
    ``respond`` is given: then every call past the script is answered by
    ``respond(messages)`` (the messages the model received, system message first), which
    returns an ``AIMessage`` or a ``str`` — for long-lived processes such as a server,
    where calls from many conversations interleave and no fixed order can be scripted.
    Each call is recorded in :attr:`calls` (messages, tools, tool_choice, settings).

    Example, a tool call and then the answer::

        model = ScriptedChatModel(
            responses=[
                AIMessage("", tool_calls=[{"name": "add", "args": {"a": 2, "b": 3}, "id": "1"}]),
                "2 + 3 = 5",
                TimeoutError("a third call fails"),
            ]
        )
        agent = create_agent(model, [add])
        agent.invoke({"messages": [HumanMessage("What is 2 + 3?")]})
        assert model.calls[1].messages[-1].content == "5"  # the tool's result came back
    """

    responses: list[Any] = Field(default_factory=list)
    """The script: ``AIMessage``, ``str``, structured answers or exceptions, in call order."""

    respond: Callable[[list[BaseMessage]], AIMessage | str] | None = None
    """Answers each call once ``responses`` is used up; ``None``: such a call raises."""

    _calls: list[RecordedCall] = PrivateAttr(default_factory=list)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def calls(self) -> list[RecordedCall]:
        """Every request received so far, in order."""
        return list(self._calls)

    @property
    def remaining(self) -> int:
        """How many scripted responses are left."""
        return len(self.responses) - len(self._calls)

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools (converted to OpenAI schemas, as a real provider would receive them)."""
        schemas = [convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=schemas, tool_choice=tool_choice, **kwargs)

    def _next(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> ChatResult:
        recorded = RecordedCall(
            messages=[m.model_copy(deep=True) for m in messages],
            tools=list(kwargs.pop("tools", None) or []),
            tool_choice=kwargs.pop("tool_choice", None),
            settings=kwargs,
        )
        with self._lock:
            index = len(self._calls)
            self._calls.append(recorded)
        if index >= len(self.responses) and self.respond is not None:
            answer: Any = self.respond(messages)
            if not isinstance(answer, (AIMessage, str)):
                raise TypeError(
                    f"ScriptedChatModel's respond() returned {a(type(answer).__name__)} for "
                    f"call #{index}; return an AIMessage or a str (raise to simulate an error)."
                )
            scripted: Any = answer
        elif index >= len(self.responses):
            raise ScriptExhaustedError(
                f"ScriptedChatModel was called {plural(index + 1, 'time')} but scripted with "
                f"{plural(len(self.responses), 'response')}; add more to responses=[...] "
                "or answer the rest with respond=."
            )
        else:
            scripted = self.responses[index]
        if isinstance(scripted, BaseException):
            raise scripted
        message = _as_message(scripted, index, recorded)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self, messages: Messages, stop: Stop = None, run_manager: Manager = None, **kwargs: Any
    ) -> ChatResult:
        return self._next(messages, kwargs)

    async def _agenerate(
        self, messages: Messages, stop: Stop = None, run_manager: AManager = None, **kwargs: Any
    ) -> ChatResult:
        return self._next(messages, kwargs)
