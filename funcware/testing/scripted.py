"""Test helpers: ``ScriptedChatModel``, a chat model that replays a script offline."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import PrivateAttr

from funcware.hooks.wording import a, plural

__all__ = ["RecordedCall", "ScriptExhaustedError", "ScriptedChatModel"]


class ScriptExhaustedError(RuntimeError):
    """The model was called more times than it has scripted responses."""


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
    def system_prompt(self) -> str | None:
        """Text of the system message sent, if any."""
        first = self.messages[0] if self.messages else None
        return first.text if first is not None and first.type == "system" else None


class ScriptedChatModel(BaseChatModel):
    """Replays ``responses`` in order, one per call, and records every request.

    A response may be an ``AIMessage`` (with ``tool_calls``), a ``str`` (an ``AIMessage``
    with that content) or an exception instance (raised, to test retries and fallbacks).
    Calling it once more than scripted raises :class:`ScriptExhaustedError`. Each call is
    recorded in :attr:`calls` (messages, tools, tool_choice, settings).

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

    responses: list[Any]
    """The script: ``AIMessage``, ``str`` or exception instances, in call order."""

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
        with self._lock:
            index = len(self._calls)
            self._calls.append(
                RecordedCall(
                    messages=[m.model_copy(deep=True) for m in messages],
                    tools=list(kwargs.pop("tools", None) or []),
                    tool_choice=kwargs.pop("tool_choice", None),
                    settings=kwargs,
                )
            )
        if index >= len(self.responses):
            raise ScriptExhaustedError(
                f"ScriptedChatModel was called {plural(index + 1, 'time')} but scripted with "
                f"{plural(len(self.responses), 'response')}; add more to responses=[...]."
            )
        scripted = self.responses[index]
        if isinstance(scripted, BaseException):
            raise scripted
        if isinstance(scripted, str):
            message = AIMessage(content=scripted)
        elif isinstance(scripted, AIMessage):
            message = scripted.model_copy(deep=True)
        else:
            raise TypeError(
                f"ScriptedChatModel response #{index} is {a(type(scripted).__name__)}; "
                "script AIMessage, str or exception instances."
            )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._next(messages, kwargs)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._next(messages, kwargs)
