"""The values middleware reads and returns: state, model requests and responses, named as in
LangChain v1's ``langchain.agents.middleware`` (``ToolCallRequest``, ``ToolRuntime``: langgraph's).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Annotated, Any, Generic, Literal, TypeAlias, Union

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage
from langgraph.channels.ephemeral_value import EphemeralValue
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolRuntime
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.typing import ContextT
from typing_extensions import NotRequired, Required, TypedDict, TypeVar

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import BaseTool
    from langgraph.runtime import Runtime
    from langgraph.types import Command, Interrupt

__all__ = [
    "AgentRequest",
    "AgentResponse",
    "AgentState",
    "ExtendedModelResponse",
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
    "ResponseT",
    "ToolCallRequest",
    "ToolRuntime",
]

JumpTo = Literal["tools", "model", "end"]
"""Where a node-style hook may send the agent by returning ``{"jump_to": ...}``."""

JUMP_TARGETS: tuple[JumpTo, ...] = ("model", "tools", "end")

ResponseT = TypeVar("ResponseT", default=Any)


@dataclass(frozen=True)
class OmitFromSchema:
    """Marks a state field as left out of the agent's input and/or output schema."""

    input: bool = True
    output: bool = True


OmitFromInput = OmitFromSchema(input=True, output=False)
"""The field is not accepted as input; it still shows in the result."""

OmitFromOutput = OmitFromSchema(input=False, output=True)
"""The field may be given as input; it never shows in the result."""

PrivateStateAttr = OmitFromSchema(input=True, output=True)
"""The field lives only inside the run: hooks read and write it, callers never see it."""


class AgentState(TypedDict, Generic[ResponseT]):
    """The base state of every agent: the conversation plus the jump channel."""

    messages: Required[Annotated[list[AnyMessage], add_messages]]
    jump_to: NotRequired[Annotated[JumpTo | None, EphemeralValue, PrivateStateAttr]]
    structured_response: NotRequired[Annotated[ResponseT, OmitFromInput]]


class InputAgentState(TypedDict):
    """What an agent accepts as input at the least: messages (objects or dicts)."""

    messages: Required[Annotated[list[AnyMessage | dict[str, Any]], add_messages]]


class OutputAgentState(TypedDict, Generic[ResponseT]):
    """What an agent returns at the least: messages, and structured output if any."""

    messages: Required[Annotated[list[AnyMessage], add_messages]]
    structured_response: NotRequired[ResponseT]


@dataclass(init=False)
class ModelRequest(Generic[ContextT]):
    """One model call: what will be sent, and the state and runtime it is made in.

    ``messages`` never include the system message, which lives in ``system_message``.
    Change a request with :meth:`override`, which returns a new one.
    """

    model: BaseChatModel
    messages: list[AnyMessage]
    system_message: SystemMessage | None
    tool_choice: Any | None
    tools: list[BaseTool | dict[str, Any]]
    response_format: Any | None
    state: AgentState[Any]
    runtime: Runtime[ContextT]
    model_settings: dict[str, Any] = field(default_factory=dict)

    def __init__(
        self,
        *,
        model: BaseChatModel,
        messages: list[AnyMessage],
        system_message: SystemMessage | None = None,
        system_prompt: str | None = None,
        tool_choice: Any | None = None,
        tools: list[BaseTool | dict[str, Any]] | None = None,
        response_format: Any | None = None,
        state: AgentState[Any] | None = None,
        runtime: Runtime[ContextT] | None = None,
        model_settings: dict[str, Any] | None = None,
    ) -> None:
        if system_prompt is not None and system_message is not None:
            from funcware.hooks.type_misuse import both_prompts

            raise both_prompts("ModelRequest", "system_message=SystemMessage(...) only")
        if system_prompt is not None:
            system_message = SystemMessage(content=system_prompt)
        values: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "system_message": system_message,
            "tool_choice": tool_choice,
            "tools": tools if tools is not None else [],
            "response_format": response_format,
            "state": state if state is not None else {"messages": []},
            "runtime": runtime,
            "model_settings": model_settings if model_settings is not None else {},
        }
        for key, value in values.items():
            object.__setattr__(self, key, value)

    @property
    def system_prompt(self) -> str | None:
        """The text of the system message, or ``None`` when there is none."""
        if self.system_message is None:
            return None
        return self.system_message.text

    def __setattr__(self, name: str, value: Any) -> None:
        """Deprecated (a ``DeprecationWarning``): change a request with :meth:`override`."""
        from funcware.hooks.type_misuse import assign

        assign(self, name, value)

    def override(self, **changes: Any) -> ModelRequest[ContextT]:
        """A new request with ``changes`` (the request's fields, or ``system_prompt``, a string
        turned into a ``SystemMessage``) applied; this one is left as it was."""
        both = "system_prompt" in changes and "system_message" in changes
        if both or not set(changes).issubset(_OVERRIDABLE):
            from funcware.hooks.type_misuse import bad_override

            raise bad_override(changes, _OVERRIDABLE)
        if "system_prompt" in changes:
            prompt = changes.pop("system_prompt")
            changes["system_message"] = None if prompt is None else SystemMessage(content=prompt)
        # __init__ writes through object.__setattr__: no deprecation warning to silence.
        values = {name: changes.get(name, getattr(self, name)) for name in _REQUEST_FIELDS}
        return type(self)(**values)


_REQUEST_FIELDS = tuple(f.name for f in fields(ModelRequest))
_OVERRIDABLE = (*_REQUEST_FIELDS, "system_prompt")


def result_problem(result: object) -> str | None:
    """Why ``result`` cannot be a ``ModelResponse.result`` (a list of messages), with the fix."""
    if type(result) is list and all(isinstance(item, BaseMessage) for item in result):
        return None
    from funcware.hooks.type_misuse import result_problem as words

    return words(result)


@dataclass
class ModelResponse(Generic[ResponseT]):
    """What a model call produced: its messages (a list, else refused) and, if requested,
    structured output."""

    result: list[BaseMessage]
    structured_response: ResponseT | None = None

    def __post_init__(self) -> None:
        problem = result_problem(self.result)
        if problem is not None:
            raise TypeError(f"A ModelResponse's result {problem}.")


@dataclass
class ExtendedModelResponse(Generic[ResponseT]):
    """A model response plus a ``Command`` whose ``update`` is written to the state (all
    layers' updates merged: a reducer key gets every value, a plain key the outermost)."""

    model_response: ModelResponse[ResponseT]
    command: Command[Any] | None = None


ModelCallResult: TypeAlias = Union[  # noqa: UP007 - a runtime alias must work on Python 3.10
    ModelResponse[ResponseT], AIMessage, ExtendedModelResponse[ResponseT]
]
"""What a ``wrap_model_call`` hook may return."""


@dataclass(frozen=True)
class AgentRequest:
    """One run of an agent, as a ``wrap_agent_call`` layer sees it: what ``invoke``/``stream``
    got (a state, or a ``Command`` resuming a paused run), the run's config and ``context=``."""

    input: Any
    config: RunnableConfig
    context: Any = None

    def override(self, **changes: Any) -> AgentRequest:
        """A copy with ``changes`` applied (``input``, ``config``, ``context``)."""
        if not {"input", "config", "context"}.issuperset(changes):
            from funcware.hooks.type_misuse import unknown_agent_request_fields

            raise unknown_agent_request_fields(changes)
        return replace(self, **changes)


@dataclass(frozen=True)
class AgentResponse:
    """How one run ended, as a ``wrap_agent_call`` layer sees it (a layer may return another):
    its last state (what ``invoke`` returns, or ``None``) and a paused run's interrupts."""

    result: Any
    interrupts: tuple[Interrupt, ...] = ()

    @property
    def interrupted(self) -> bool:
        """Whether the run paused (an ``interrupt``) rather than finished."""
        return bool(self.interrupts)
