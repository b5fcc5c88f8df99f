"""Tool types under the names ``langchain.tools`` and ``langchain.tools.tool_node`` export.

From langchain-core (``tool``, ``BaseTool``, ...) and langgraph (``ToolRuntime``,
``ToolCallRequest``, ...), so ``from langchain.tools import tool, ToolRuntime`` and
``from langchain.tools.tool_node import ToolCallRequest`` both port to ``funcware.tools``.
"""

from langchain_core.tools import (
    BaseTool,
    InjectedToolArg,
    InjectedToolCallId,
    ToolException,
    tool,
)
from langgraph.prebuilt import InjectedState, InjectedStore, ToolRuntime
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolCallWithContext, ToolCallWrapper

__all__ = [
    "BaseTool",
    "InjectedState",
    "InjectedStore",
    "InjectedToolArg",
    "InjectedToolCallId",
    "ToolCallRequest",
    "ToolCallWithContext",
    "ToolCallWrapper",
    "ToolException",
    "ToolRuntime",
    "tool",
]
