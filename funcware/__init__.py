"""funcware — decorator-first, functional middleware for LangGraph agents.

Write hooks as plain functions (``@before_model``, ``@wrap_model_call``, ...) or as
``AgentMiddleware`` subclasses, combine them with ``compose()``, run them with
``create_agent()``. Names and semantics follow LangChain v1's ``langchain.agents.middleware``.

This module is the front door: it imports the core (``funcware.hooks``,
``funcware.compose``) and registers the features on the core's seams (effects, stream
guards, policies, structured output, LangChain interop, observation). A feature's own
modules load only when an agent uses it; its public names here load on first use.
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from langgraph.runtime import Runtime

import funcware.compose as _compose_package
import funcware.hooks as _hooks_package
from funcware import effects, guards, interop, nodes, pairing, policies, runs, structured
from funcware.compose.agent import create_agent
from funcware.compose.chain import ComposedMiddleware, compose
from funcware.compose.observing import register_watcher
from funcware.compose.replacing import Replacement, replace
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
    internal_call_metadata,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.hooks.moved import moved

if TYPE_CHECKING:
    from funcware.explain import Explanation, explain
    from funcware.guards.policy import SlidingWindow, StreamPolicy
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

# The features, on the core's seams (in the order a build consults them).
interop.register()
runs.register()  # before effects: the order checks see the stack a run gets
effects.register()
policies.register()
structured.register()
guards.register()
pairing.register()
nodes.register()
import_module("funcware.subagents").register()  # after runs: its run wraps wrap the choice
register_watcher(lambda: import_module("funcware.observe.watch").WATCH)

_LAZY = {
    "Explanation": "funcware.explain",
    "explain": "funcware.explain",
    "SlidingWindow": "funcware.guards.policy",
    "StreamPolicy": "funcware.guards.policy",
    "run_error": "funcware.policies",
    "wrap_agent_call": "funcware.runs.decorator",
}
"""Public names of features, loaded on first use (``from funcware import explain``)."""

_MOVED = {
    "BridgeSettings": "funcware.compose.threads.pool",
    "configure_bridge": "funcware.compose.threads.bridge",
}
"""Names this module no longer exports (internals), with where they live now."""

_hooks_package.MOVED.update(
    {
        **dict.fromkeys(
            ("EFFECTS", "Declaration", "declarations"), "funcware.effects.declarations"
        ),
        **dict.fromkeys(
            ("HOOKS", "NODE_HOOKS", "WRAP_HOOKS", "HookImpl", "hook_impls"),
            "funcware.hooks.middleware",
        ),
        "HookTimeoutError": "funcware.errors",
        "SlidingWindow": "funcware.guards",
        "StreamPolicy": "funcware.guards",
        **dict.fromkeys(
            (
                "TracePolicy",
                "configure_trace_policy",
                "hook_trace_policy",
                "omit_payload",
                "resolve_trace_policy",
            ),
            "funcware.compose.steps.tracing",
        ),
    }
)
_compose_package.MOVED.update(
    {
        **dict.fromkeys(
            (
                "BrokenStackError",
                "DuplicateMiddlewareError",
                "InvalidJumpError",
                "MiddlewareOrderError",
                "MiddlewareOrderWarning",
                "UndeclaredEffectError",
                "UnknownStateKeyError",
                "UnknownStateKeyWarning",
            ),
            "funcware.errors",
        ),
        "AlwaysRunGraph": "funcware.compose.steps.runs",
        "Conflict": "funcware.effects.ordering",
        "Hazard": "funcware.effects.hazards",
        "Explanation": "funcware.explain",
        "explain": "funcware.explain",
        "run_error": "funcware.policies",
    }
)


def __getattr__(name: str) -> Any:
    home = _LAZY.get(name)
    if home is None and name in __all__:  # the structured-output names
        home = "funcware.structured_output"
    if home is not None:
        value = getattr(import_module(home), name)
        globals()[name] = value
        return value
    return moved(__name__, name, _MOVED)


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
