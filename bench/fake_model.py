"""The chat model and the tool every implementation runs against: deterministic, cheap, offline.

:class:`BenchChatModel` is stateless: it answers with one ``add`` tool call until the
conversation holds ``tool_steps`` tool results, then with ``"done"``. So any number of
invocations of one agent give the same trace, with no script to run out and no sleeps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool, tool

__all__ = ["BenchChatModel", "ConvertingChatModel", "add", "many_tools"]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _tool_name(item: Any) -> str:
    if isinstance(item, dict):
        return str(item.get("name") or item.get("function", {}).get("name", "?"))
    return str(getattr(item, "name", None) or getattr(item, "__name__", "?"))


def many_tools(count: int) -> list[BaseTool]:
    """``add`` and ``count - 1`` more tools, each with its own name and argument schema."""

    def make(index: int) -> BaseTool:
        def lookup(key: str, limit: int = 10) -> str:
            return f"{index}:{key}:{limit}"

        lookup.__doc__ = f"Look a key up in table {index}; at most `limit` rows."
        return tool(f"lookup_{index}")(lookup)

    return [add, *(make(i) for i in range(1, count))]


class BenchChatModel(BaseChatModel):
    """A tool call per step until ``tool_steps`` tool results are in, then ``"done"``."""

    tool_steps: int = 0

    @property
    def _llm_type(self) -> str:
        return "funcware-bench"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind the tool names only (no schema conversion: keep the model cheap)."""
        return self.bind(tools=[_tool_name(t) for t in tools], tool_choice=tool_choice, **kwargs)

    def _answer(self, messages: list[BaseMessage]) -> ChatResult:
        done = sum(1 for m in messages if isinstance(m, ToolMessage))
        if done < self.tool_steps:
            call = {"name": "add", "args": {"a": done, "b": 1}, "id": f"call_{done}"}
            message = AIMessage(content="", tool_calls=[call])
        else:
            message = AIMessage(content="done")
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._answer(messages)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._answer(messages)


class ConvertingChatModel(BenchChatModel):
    """:class:`BenchChatModel` whose ``bind_tools`` converts every tool to the OpenAI
    function format (``convert_to_openai_tool``), as real chat-model providers do."""

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind the tools' OpenAI schemas, converted on every call of ``bind_tools``."""
        from langchain_core.utils.function_calling import convert_to_openai_tool

        schemas = [convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=schemas, tool_choice=tool_choice, **kwargs)
