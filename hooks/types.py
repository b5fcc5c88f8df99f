"""The values middleware reads and returns: state, model requests and responses.

Names and fields match LangChain v1's ``langchain.agents.middleware`` so code moves
over by changing one import. ``ToolCallRequest`` and ``ToolRuntime`` are langgraph's own.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Annotated, Any, Generic, Literal, TypeAlias, Union

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage
from langgraph.channels.ephemeral_value import EphemeralValue
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolRuntime
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.typing import ContextT
from typing_extensions import NotRequired, Required, TypedDict, TypeVar

from funcware.hooks.wording import a

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


_REQUEST_FIELDS = (
    "model",
    "messages",
    "system_message",
    "tool_choice",
    "tools",
    "response_format",
    "state",
    "runtime",
    "model_settings",
)


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
            raise ValueError(
                "Cannot specify both system_prompt and system_message: ModelRequest "
                "takes one; pass system_message=SystemMessage(...) only."
            )
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
        fix = "system_message=SystemMessage(...)" if name == "system_prompt" else f"{name}=..."
        warnings.warn(
            f"Direct attribute assignment to ModelRequest.{name} is deprecated. "
            f"Use request.override({fix}) instead to create a new request "
            f"(assigning changes the request in place, for every layer that holds it).",
            DeprecationWarning,
            stacklevel=2,
        )
        if name == "system_prompt":
            name = "system_message"
            value = None if value is None else SystemMessage(content=value)
        object.__setattr__(self, name, value)

    def override(self, **changes: Any) -> ModelRequest[ContextT]:
        """Return a new request with ``changes`` applied; this one is left as it was.

        Accepts the request's fields, plus ``system_prompt`` (a string turned into a
        ``SystemMessage``). An unknown name is a ``TypeError`` listing the valid ones.
        """
        unknown = sorted(set(changes) - {*_REQUEST_FIELDS, "system_prompt"})
        if unknown:
            valid = ", ".join((*_REQUEST_FIELDS, "system_prompt"))
            raise TypeError(
                f"ModelRequest.override() got unknown field(s) {', '.join(unknown)}; "
                f"valid fields are: {valid}."
            )
        if "system_prompt" in changes:
            if "system_message" in changes:
                raise ValueError(
                    "Cannot specify both system_prompt and system_message: "
                    "ModelRequest.override() takes one; pass system_message=SystemMessage(...)."
                )
            prompt = changes.pop("system_prompt")
            changes["system_message"] = None if prompt is None else SystemMessage(content=prompt)
        # __init__ writes through object.__setattr__: no deprecation warning to silence.
        fields = {name: changes.get(name, getattr(self, name)) for name in _REQUEST_FIELDS}
        return type(self)(**fields)


def result_problem(result: object) -> str | None:
    """Why ``result`` cannot be a ``ModelResponse.result`` (a list of messages), with the fix."""
    if type(result) is list and all(isinstance(item, BaseMessage) for item in result):
        return None
    fix = "ModelResponse(result=[AIMessage(content=...)])"
    if isinstance(result, BaseMessage):
        problem = f"is {a(type(result).__name__)}, not a list"
        fix = "ModelResponse(result=[message]) (or return the AIMessage itself)"
    elif isinstance(result, list):
        index, item = next((i, x) for i, x in enumerate(result) if not isinstance(x, BaseMessage))
        problem = f"has {a(type(item).__name__)} at position {index}, not a message"
    else:
        problem = f"is {a(type(result).__name__)}, not a list of messages"
        if isinstance(result, str):
            problem += " (langchain-core would turn every character into a message)"
    return f"{problem}. Write {fix}"


@dataclass
class ModelResponse(Generic[ResponseT]):
    """What a model call produced: its messages and, if requested, structured output.

    ``result`` must be a list of messages; anything else is refused when it is made.
    """

    result: list[BaseMessage]
    structured_response: ResponseT | None = None

    def __post_init__(self) -> None:
        problem = result_problem(self.result)
        if problem is not None:
            raise TypeError(f"A ModelResponse's result {problem}.")


@dataclass
class ExtendedModelResponse(Generic[ResponseT]):
    """A model response plus a ``Command`` whose ``update`` is written to the state.

    The updates of all ``wrap_model_call`` layers are merged, inner first, outer last:
    reducer keys (``messages``) receive every value, a plain key keeps the outermost.
    """

    model_response: ModelResponse[ResponseT]
    command: Command[Any] | None = None


ModelCallResult: TypeAlias = Union[  # noqa: UP007 - a runtime alias must work on Python 3.10
    ModelResponse[ResponseT], AIMessage, ExtendedModelResponse[ResponseT]
]
"""What a ``wrap_model_call`` hook may return."""


@dataclass(frozen=True)
class AgentRequest:
    """One run of an agent, as a ``wrap_agent_call`` layer sees it.

    ``input`` is what ``invoke``/``stream`` got (a state dict, or a ``Command`` resuming a
    paused run); ``config`` the run's config; ``context`` the run's ``context=``.
    ``override(**changes)`` returns a new request and never changes this one.
    """

    input: Any
    config: RunnableConfig
    context: Any = None

    def override(self, **changes: Any) -> AgentRequest:
        """A copy with ``changes`` applied (``input``, ``config``, ``context``)."""
        unknown = sorted(set(changes) - {"input", "config", "context"})
        if unknown:
            raise TypeError(
                f"AgentRequest.override() got {', '.join(map(repr, unknown))}; "
                "an AgentRequest has input, config and context."
            )
        return replace(self, **changes)


@dataclass(frozen=True)
class AgentResponse:
    """How one run ended, as a ``wrap_agent_call`` layer sees it.

    ``result`` is the run's last state (what ``invoke`` returns; ``None`` if the run
    produced none); ``interrupts`` the pending interrupts of a paused run (empty when the
    run finished). A layer may return another ``AgentResponse`` to replace the result.
    """

    result: Any
    interrupts: tuple[Interrupt, ...] = ()

    @property
    def interrupted(self) -> bool:
        """Whether the run paused (an ``interrupt``) rather than finished."""
        return bool(self.interrupts)
