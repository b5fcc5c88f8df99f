"""funcware — decorator-first, functional middleware for LangGraph agents.

Write hooks as plain functions (``@before_model``, ``@wrap_model_call``, ...) or as
``AgentMiddleware`` subclasses, combine them with ``compose()``, run them with
``create_agent()``. Names and semantics follow LangChain v1's ``langchain.agents.middleware``.
This front door imports the core and :mod:`funcware.plugins` (the features, as data);
features and their public names load on first use.
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

# First, so langgraph and langchain-core load in langgraph.prebuilt's own order: in the
# order the core meets them they cost about a tenth more (bench/imports.py: 1.05x
# `import langgraph.prebuilt` this way, 1.15x without, 2026-12-06).
import langgraph.prebuilt  # noqa: F401
from langgraph.runtime import Runtime

import funcware.compose as _compose_package
import funcware.hooks as _hooks_package
import funcware.plugins  # noqa: F401 - registers the features on the core's seams
from funcware.compose.agent import create_agent
from funcware.compose.chain import ComposedMiddleware, compose
from funcware.compose.steps.tracing import (
    TracePolicy,
    configure_trace_policy,
    omit_payload,
    resolve_trace_policy,
)
from funcware.errors import (
    BrokenStackError,
    DoubleCallWarning,
    DuplicateMiddlewareError,
    FuncwareDeprecationWarning,
    HookTimeoutError,
    InvalidJumpError,
    MiddlewareOrderError,
    MiddlewareOrderWarning,
    MissingCheckpointerError,
    NondeterministicHookError,
    RunClosedError,
    RunConfigError,
    StateSchemaConflictWarning,
    ToolCallPairingError,
    ToolCallPairingWarning,
    UndeclaredEffectError,
    UnknownNodeError,
    UnknownStateKeyError,
    UnknownStateKeyWarning,
)
from funcware.hooks import (
    AgentMiddleware,
    AgentRequest,
    AgentResponse,
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

if TYPE_CHECKING:
    from funcware.compose.replacing import Replacement, replace
    from funcware.explain import Explanation, explain
    from funcware.guards.policy import SlidingWindow, StreamPolicy
    from funcware.hooks.internal_calls import internal_call_metadata
    from funcware.policies import run_error
    from funcware.runs.decorator import wrap_agent_call
    from funcware.structured_output import (
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

_LAZY = {
    "Explanation": "funcware.explain",
    "explain": "funcware.explain",
    "SlidingWindow": "funcware.guards.policy",
    "StreamPolicy": "funcware.guards.policy",
    "run_error": "funcware.policies",
    "wrap_agent_call": "funcware.runs.decorator",
    "internal_call_metadata": "funcware.hooks.internal_calls",
    "Replacement": "funcware.compose.replacing",
    "replace": "funcware.compose.replacing",
}
"""Public names loaded on first use (``from funcware import explain``)."""

_hooks_package.MOVED = "funcware.deprecations:HOOKS"
_compose_package.MOVED = "funcware.deprecations:COMPOSE"
# Names that moved out of the core packages (and this one): looked up on the first miss.


def __getattr__(name: str) -> Any:
    home = _LAZY.get(name)
    if home is None and name in __all__:  # the structured-output names
        home = "funcware.structured_output"
    if home is not None:
        value = getattr(import_module(home), name)
        globals()[name] = value
        return value
    try:  # a subpackage, loaded on first use (``funcware.effects.declare``)
        return import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as missing:
        if missing.name != f"{__name__}.{name}":
            raise
    from funcware.hooks.moved import moved

    return moved(__name__, name, "funcware.deprecations:FUNCWARE")


__all__ = [
    "AgentMiddleware",
    "AgentRequest",
    "AgentResponse",
    "AgentState",
    "AutoStrategy",
    "BrokenStackError",
    "ComposedMiddleware",
    "DoubleCallWarning",
    "DuplicateMiddlewareError",
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
    "NondeterministicHookError",
    "OmitFromInput",
    "OmitFromOutput",
    "OmitFromSchema",
    "OutputAgentState",
    "OutputToolBinding",
    "PrivateStateAttr",
    "ProviderStrategy",
    "ProviderStrategyBinding",
    "Replacement",
    "ResponseFormat",
    "RunClosedError",
    "RunConfigError",
    "Runtime",
    "SlidingWindow",
    "StateSchemaConflictWarning",
    "StreamPolicy",
    "StructuredOutputError",
    "StructuredOutputValidationError",
    "ToolCallPairingError",
    "ToolCallPairingWarning",
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
    "configure_trace_policy",
    "create_agent",
    "dynamic_prompt",
    "explain",
    "hook_config",
    "internal_call_metadata",
    "omit_payload",
    "replace",
    "resolve_trace_policy",
    "run_error",
    "wrap_agent_call",
    "wrap_model_call",
    "wrap_tool_call",
]
