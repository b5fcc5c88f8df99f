"""funcware — decorator-first, functional middleware for LangGraph agents.

Write hooks as plain functions (``@before_model``, ``@wrap_model_call``, ...) or as
``AgentMiddleware`` subclasses, combine them with ``compose()``, run them with
``create_agent()``. Names and semantics follow LangChain v1's ``langchain.agents.middleware``.
"""

from importlib.metadata import PackageNotFoundError, version

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
    run_error,
)
from .compose.threads.bridge import BridgeSettings, configure_bridge
from .errors import (
    BrokenStackError,
    FuncwareDeprecationWarning,
    InvalidJumpError,
    MissingCheckpointerError,
    UnknownNodeError,
    UnknownStateKeyError,
)
from .hooks import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    HookTimeoutError,
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
    SlidingWindow,
    StreamPolicy,
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
from .structured_output import (
    AutoStrategy,
    MultipleStructuredOutputsError,
    OutputToolBinding,
    ProviderStrategy,
    ProviderStrategyBinding,
    ResponseFormat,
    StructuredOutputError,
    StructuredOutputValidationError,
    ToolStrategy,
)

try:
    __version__ = version("funcware")
except PackageNotFoundError:  # imported from a checkout that was never installed
    __version__ = "0+unknown"

__all__ = [
    "AgentMiddleware",
    "AgentState",
    "AutoStrategy",
    "BridgeSettings",
    "BrokenStackError",
    "ComposedMiddleware",
    "Explanation",
    "ExtendedModelResponse",
    "FuncwareDeprecationWarning",
    "HookTimeoutError",
    "InputAgentState",
    "InvalidJumpError",
    "JumpTo",
    "MiddlewareOrderError",
    "MiddlewareOrderWarning",
    "MissingCheckpointerError",
    "ModelCallResult",
    "ModelRequest",
    "ModelResponse",
    "MultipleStructuredOutputsError",
    "OmitFromInput",
    "OmitFromOutput",
    "OmitFromSchema",
    "OutputAgentState",
    "OutputToolBinding",
    "PrivateStateAttr",
    "ProviderStrategy",
    "ProviderStrategyBinding",
    "ResponseFormat",
    "Runtime",
    "SlidingWindow",
    "StreamPolicy",
    "StructuredOutputError",
    "StructuredOutputValidationError",
    "ToolCallRequest",
    "ToolRuntime",
    "ToolStrategy",
    "UndeclaredEffectError",
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
    "run_error",
    "wrap_model_call",
    "wrap_tool_call",
]
