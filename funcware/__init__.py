"""funcware — decorator-first, functional middleware for LangGraph agents.

Write hooks as plain functions (``@before_model``, ``@wrap_model_call``, ...) or as
``AgentMiddleware`` subclasses, combine them with ``compose()``, run them with
``create_agent()``. Names and semantics follow LangChain v1's ``langchain.agents.middleware``.
"""

from importlib.metadata import PackageNotFoundError, version

from langgraph.runtime import Runtime

from .compose import ComposedMiddleware, Explanation, compose, create_agent, explain
from .compose.bridge import BridgeSettings, configure_bridge
from .errors import (
    BrokenStackError,
    InvalidJumpError,
    MissingCheckpointerError,
    UnknownNodeError,
    UnknownStateKeyError,
)
from .hooks import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    InputAgentState,
    JumpTo,
    ModelCallResult,
    ModelRequest,
    ModelResponse,
    OmitFromInput,
    OmitFromOutput,
    OmitFromSchema,
    OutputAgentState,
    PrivateStateAttr,
    ToolCallRequest,
    ToolRuntime,
    after_agent,
    after_model,
    before_agent,
    before_model,
    dynamic_prompt,
    hook_config,
    wrap_model_call,
    wrap_tool_call,
)

try:
    __version__ = version("funcware")
except PackageNotFoundError:  # imported from a checkout that was never installed
    __version__ = "0+unknown"

__all__ = [
    "AgentMiddleware",
    "AgentState",
    "BridgeSettings",
    "BrokenStackError",
    "ComposedMiddleware",
    "Explanation",
    "ExtendedModelResponse",
    "InputAgentState",
    "InvalidJumpError",
    "JumpTo",
    "MissingCheckpointerError",
    "ModelCallResult",
    "ModelRequest",
    "ModelResponse",
    "OmitFromInput",
    "OmitFromOutput",
    "OmitFromSchema",
    "OutputAgentState",
    "PrivateStateAttr",
    "Runtime",
    "ToolCallRequest",
    "ToolRuntime",
    "UnknownNodeError",
    "UnknownStateKeyError",
    "__version__",
    "after_agent",
    "after_model",
    "before_agent",
    "before_model",
    "compose",
    "configure_bridge",
    "create_agent",
    "dynamic_prompt",
    "explain",
    "hook_config",
    "wrap_model_call",
    "wrap_tool_call",
]
