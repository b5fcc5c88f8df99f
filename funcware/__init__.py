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
    DoubleCallWarning,
    InvalidJumpError,
    MissingCheckpointerError,
    UnknownNodeError,
    UnknownStateKeyError,
    UnknownStateKeyWarning,
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
    TracePolicy,
    after_agent,
    after_model,
    before_agent,
    before_model,
    configure_trace_policy,
    dynamic_prompt,
    hook_config,
    internal_call_metadata,
    omit_payload,
    resolve_trace_policy,
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
    "DoubleCallWarning",
    "Explanation",
    "ExtendedModelResponse",
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
    "TracePolicy",
    "UndeclaredEffectError",
    "UnknownNodeError",
    "UnknownStateKeyError",
    "UnknownStateKeyWarning",
    "__version__",
    "after_agent",
    "after_model",
    "before_agent",
    "before_model",
    "compose",
    "configure_bridge",
    "configure_trace_policy",
    "create_agent",
    "dynamic_prompt",
    "explain",
    "hook_config",
    "internal_call_metadata",
    "omit_payload",
    "resolve_trace_policy",
    "run_error",
    "wrap_model_call",
    "wrap_tool_call",
]
