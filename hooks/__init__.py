"""funcware.hooks — writing middleware: the base class, the decorators and the types (the
decorators' feature options, ``timeout=``, ``stream=``, ..., are documented with each feature).
"""

from typing import TYPE_CHECKING, Any

from funcware.hooks.decorators import (
    FunctionMiddleware,
    after_agent,
    after_model,
    before_agent,
    before_model,
    dynamic_prompt,
    hook_config,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.hooks.middleware import AgentMiddleware
from funcware.hooks.types import (
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
)

if TYPE_CHECKING:
    from funcware.hooks.internal_calls import internal_call_metadata

__all__ = [
    "AgentMiddleware",
    "AgentRequest",
    "AgentResponse",
    "AgentState",
    "ExtendedModelResponse",
    "FunctionMiddleware",
    "InputAgentState",
    "JumpTo",
    "ModelCallResult",
    "ModelRequest",
    "ModelResponse",
    "OmitFromInput",
    "OmitFromOutput",
    "OmitFromSchema",
    "OutputAgentState",
    "PrivateStateAttr",
    "ToolCallRequest",
    "ToolRuntime",
    "after_agent",
    "after_model",
    "before_agent",
    "before_model",
    "dynamic_prompt",
    "hook_config",
    "internal_call_metadata",
    "wrap_model_call",
    "wrap_tool_call",
]

MOVED: dict[str, str] | str = {}
"""Names that moved out of ``funcware.hooks``: their new homes, or ``"module:attribute"``."""


def __getattr__(name: str) -> Any:
    if name == "internal_call_metadata":  # loaded on first use
        from funcware.hooks.internal_calls import internal_call_metadata

        return internal_call_metadata
    from funcware.hooks.moved import moved  # names that moved are rare: load it when asked

    return moved(__name__, name, MOVED)
