"""funcware — decorator-first, functional middleware for LangGraph agents.

Write hooks as plain functions (``@before_model``, ``@wrap_model_call``, ...) or as
``AgentMiddleware`` subclasses, combine them with ``compose()``, run them with
``create_agent()``. Names and semantics follow LangChain v1's ``langchain.agents.middleware``.
"""

from langgraph.runtime import Runtime

from .compose import (
    ComposedMiddleware,
    Explanation,
    MiddlewareOrderError,
    MiddlewareOrderWarning,
    UndeclaredEffectError,
    compose,
    create_agent,
    explain,
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

__all__ = [
    "AgentMiddleware",
    "AgentState",
    "ComposedMiddleware",
    "Explanation",
    "ExtendedModelResponse",
    "InputAgentState",
    "JumpTo",
    "MiddlewareOrderError",
    "MiddlewareOrderWarning",
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
    "UndeclaredEffectError",
    "after_agent",
    "after_model",
    "before_agent",
    "before_model",
    "compose",
    "create_agent",
    "dynamic_prompt",
    "explain",
    "hook_config",
    "wrap_model_call",
    "wrap_tool_call",
]
