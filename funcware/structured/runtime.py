"""Structured output at run time: the strategy for each model call, binding, parsing answers.

Built once per agent from ``create_agent(response_format=...)``. A plain schema becomes
``AutoStrategy(schema)``; the ``ToolStrategy`` tools are made up front (middleware may
narrow a union per call, never add a schema). Per call, the request's format is resolved
against the request's model (provider-native when the model supports it), the model bound,
and its answer turned into messages plus the structured response, as LangChain 1.5 does.
LangChain's own strategy objects are read by shape, so funcware never imports LangChain.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool

from funcware.hooks.types import ModelRequest
from funcware.interop.bridge import is_langchain_format, native_format
from funcware.structured.errors import (
    MultipleStructuredOutputsError,
    StructuredOutputError,
    StructuredOutputValidationError,
    with_langchain_class,
)
from funcware.structured.strategies import (
    AutoStrategy,
    OutputToolBinding,
    ProviderStrategy,
    ProviderStrategyBinding,
    ToolStrategy,
    schema_label,
)

__all__ = [
    "ERROR_TEMPLATE",
    "StructuredOutput",
    "as_strategy",
    "describe_format",
    "supports_provider_strategy",
]

ERROR_TEMPLATE = "Error: {error}\n Please fix your mistakes."
"""The retry message of ``handle_errors=True`` and of exception-type handlers."""

Strategy = ToolStrategy[Any] | ProviderStrategy[Any] | AutoStrategy[Any]


def as_strategy(value: object) -> Strategy | None:
    """A response format as one of funcware's strategies (a plain schema -> ``AutoStrategy``).

    LangChain's ``ToolStrategy``/``ProviderStrategy``/``AutoStrategy`` become funcware's
    (same fields, tool names kept); an unsupported schema is refused when a strategy is built.
    """
    if value is None or isinstance(value, (ToolStrategy, ProviderStrategy, AutoStrategy)):
        return value
    if is_langchain_format(value):
        native: Strategy = native_format(value)
        return native
    return AutoStrategy(value)  # type: ignore[arg-type]


def describe_format(value: object) -> str:
    """A one-line description of a response format, for ``explain()`` and errors."""
    strategy = as_strategy(value)
    if strategy is None:
        return "-"
    if isinstance(strategy, ToolStrategy):
        tools = ", ".join(spec.name for spec in strategy.schema_specs)
        return f"ToolStrategy({schema_label(strategy.schema)}) [tools: {tools}]"
    kind = type(strategy).__name__
    extra = " (native for a model that supports it, else tools)"
    return f"{kind}({schema_label(strategy.schema)})" + (
        extra if isinstance(strategy, AutoStrategy) else ""
    )


# Models assumed to have provider-native structured output when their profile does not
# say: a name segment (after start, "/", ":" or ".") followed by what each family allows.
_SEGMENT = r"(^|[/:.])"
_SUFFIX_OK = r"($|[-/:])"
_DATE_ONLY = r"(-\d{4}-\d{2}-\d{2})?($|[/:])"
_CLAUDE_TAIL = r"(-\d{8})?(-v\d(:\d)?)?($|[/:])"
_NATIVE_JSON_NAMES = tuple(
    re.compile(_SEGMENT + body)
    for body in (
        *(rf"gpt-{v}{_SUFFIX_OK}" for v in (r"4\.1", "4o", "5", r"5\.1", r"5\.3", r"5\.5")),
        rf"gpt-5\.2{_DATE_ONLY}",
        rf"gpt-5\.2-(chat|codex){_SUFFIX_OK}",
        rf"gpt-5\.4{_DATE_ONLY}",
        rf"gpt-5\.4-(mini|nano){_SUFFIX_OK}",
        rf"gpt-6-(astra|luna|sol){_SUFFIX_OK}",
        rf"claude-(fable|mythos)-5{_CLAUDE_TAIL}",
        rf"claude-haiku-4-5{_CLAUDE_TAIL}",
        rf"claude-opus-4-[5-8]{_CLAUDE_TAIL}",
        rf"claude-sonnet-4-[56]{_CLAUDE_TAIL}",
        r"grok-4($|[-.:/])",
        rf"grok-build{_SUFFIX_OK}",
    )
)


def _model_name(model: object) -> str | None:
    if isinstance(model, str):
        return model
    name = (
        getattr(model, "model_name", None)
        or getattr(model, "model", None)
        or getattr(model, "model_id", None)
    )
    return name if isinstance(name, str) else None


def supports_provider_strategy(model: object, tools: Sequence[object] | None = None) -> bool:
    """Whether ``model`` serves provider-native structured output (LangChain's rule).

    Its profile says so (except Gemini before the 3 series when tools are bound), or,
    failing that, its name is one of the known families.
    """
    name = _model_name(model)
    profile = getattr(model, "profile", None) if isinstance(model, BaseChatModel) else None
    if profile is not None and profile.get("structured_output"):
        lowered = (name or "").lower()
        old_gemini = "gemini" in lowered and "gemini-3" not in lowered
        if not (tools and old_gemini):
            return True
    if not name:
        return False
    lowered = name.lower()
    return any(pattern.search(lowered) for pattern in _NATIVE_JSON_NAMES)


def _openai_compatible(model: object) -> bool:
    """Whether ``model`` is langchain-openai's ``BaseChatOpenAI`` (read from its class)."""
    return any(
        klass.__name__ == "BaseChatOpenAI" and klass.__module__.startswith("langchain_openai.")
        for klass in type(model).__mro__
    )


def _retry_message(error: StructuredOutputError, strategy: object) -> str | None:
    """What ``handle_errors`` says to send back for ``error``; ``None`` means raise.

    ``error`` is already an instance of LangChain's class of its name when LangChain is
    loaded, so handlers written against LangChain's exception types match it.
    """
    if not isinstance(strategy, ToolStrategy):
        return None
    handler = strategy.handle_errors
    if handler is False:
        return None
    if handler is True:
        return ERROR_TEMPLATE.format(error=error)
    if isinstance(handler, str):
        return handler
    if isinstance(handler, (type, tuple)):
        return ERROR_TEMPLATE.format(error=error) if isinstance(error, handler) else None
    return handler(error)


@dataclass(frozen=True)
class Call:
    """One call's effective strategy and what to bind: tools, tool_choice, extra kwargs."""

    strategy: ToolStrategy[Any] | ProviderStrategy[Any]
    tools: list[BaseTool | dict[str, Any]]
    tool_choice: Any
    kwargs: dict[str, Any]


class StructuredOutput:
    """An agent's response format: the up-front tool bindings and the per-call logic."""

    def __init__(self, response_format: object = None) -> None:
        initial = as_strategy(response_format)
        self.initial: object = initial
        """What ``ModelRequest.response_format`` starts as: ``None``, a funcware strategy
        (LangChain's converted; LangChain middleware get the user's object back), or an
        ``AutoStrategy`` around a plain schema."""
        setup = initial if isinstance(initial, ToolStrategy) else None
        if isinstance(initial, AutoStrategy):
            setup = ToolStrategy(initial.schema)
        self.setup = setup
        self.bindings: dict[str, OutputToolBinding[Any]] = {}
        for spec in setup.schema_specs if setup is not None else ():
            binding = OutputToolBinding.from_schema_spec(spec)
            self.bindings[binding.tool.name] = binding
        self.tool_names = frozenset(self.bindings)
        """The names of the structured-output tools (never sent to the tool node)."""

    def schema_types(self) -> list[type[Any]]:
        """The classes a structured response can be (JSON-schema dicts have none)."""
        strategy = self.initial
        if isinstance(strategy, ToolStrategy):
            schemas: list[object] = [spec.schema for spec in strategy.schema_specs]
        elif isinstance(strategy, (ProviderStrategy, AutoStrategy)):
            schemas = [strategy.schema]
        else:
            schemas = []
        return [schema for schema in schemas if isinstance(schema, type)]

    def effective(
        self, request: ModelRequest[Any]
    ) -> ToolStrategy[Any] | ProviderStrategy[Any] | None:
        """The strategy this request is served with (an ``AutoStrategy`` resolved)."""
        strategy = as_strategy(request.response_format)
        if not isinstance(strategy, AutoStrategy):
            return strategy
        if supports_provider_strategy(request.model, request.tools):
            return ProviderStrategy(strategy.schema)
        if request.response_format is self.initial and self.setup is not None:
            return self.setup
        return ToolStrategy(strategy.schema)

    def plan_call(self, request: ModelRequest[Any], wraps: str) -> Call | None:
        """What to bind for ``request``; ``wraps`` names the agent's model wraps for errors."""
        strategy = self.effective(request)
        if strategy is None:
            return None
        if isinstance(strategy, ProviderStrategy):
            _check_provider_support(request.model, strategy)
            kwargs = {**strategy.to_model_kwargs(), **request.model_settings}
            if _openai_compatible(request.model) and not getattr(
                request.model, "use_responses_api", False
            ):
                kwargs["strict"] = True
            return Call(strategy, list(request.tools), None, kwargs)
        names = [spec.name for spec in strategy.schema_specs]
        for name in names:
            if name not in self.bindings:
                raise ValueError(
                    f"ToolStrategy specifies tool '{name}' which wasn't declared in the "
                    "original response format when creating the agent. A wrap_model_call "
                    "(the model wraps of this agent: "
                    f"{wraps}) set request.response_format to {describe_format(strategy)}, "
                    f"but the agent's format declares only {sorted(self.bindings) or 'none'}. "
                    "Declare every schema up front (create_agent(response_format="
                    "ToolStrategy(A | B)) and narrow it per call), or override with "
                    "ProviderStrategy(...)."
                )
        wanted = set(names)
        tools = [*request.tools, *(b.tool for n, b in self.bindings.items() if n in wanted)]
        tool_choice = "any" if self.bindings else request.tool_choice
        return Call(strategy, tools, tool_choice, dict(request.model_settings))

    def bind(self, model: BaseChatModel, call: Call) -> Any:
        """``model`` bound for ``call``; a model without tool binding gets a clear error."""
        try:
            if isinstance(call.strategy, ProviderStrategy):
                return model.bind_tools(call.tools, **call.kwargs)
            return model.bind_tools(call.tools, tool_choice=call.tool_choice, **call.kwargs)
        except NotImplementedError as exc:
            raise NotImplementedError(
                f"{type(model).__name__} cannot serve {describe_format(call.strategy)}: it "
                "does not implement bind_tools(), which structured output binds the "
                "schema with. Use a chat model that supports tool calling, or drop "
                "response_format and parse the answer yourself."
            ) from exc

    def handle(self, output: AIMessage, strategy: object) -> tuple[list[BaseMessage], Any]:
        """The model's answer as ``(messages, structured_response)`` (``None`` if none).

        Raises the structured-output errors that ``handle_errors`` does not turn into
        an error ``ToolMessage`` for the model to retry on.
        """
        if isinstance(strategy, ProviderStrategy):
            return self._native(output, strategy)
        if not isinstance(strategy, ToolStrategy):
            return [output], None
        calls = [tc for tc in output.tool_calls if tc["name"] in self.bindings]
        if not calls:
            return [output], None
        if len(calls) > 1:
            error: StructuredOutputError = with_langchain_class(
                MultipleStructuredOutputsError([tc["name"] for tc in calls], output)
            )
            message = _retry_message(error, strategy)
            if message is None:
                raise error
            replies = [_reply(tc, message) for tc in calls]
            return [output, *replies], None
        call = calls[0]
        try:
            response = self.bindings[call["name"]].parse(call["args"])
        except Exception as exc:
            error = with_langchain_class(StructuredOutputValidationError(call["name"], exc, output))
            message = _retry_message(error, strategy)
            if message is None:
                raise error from exc
            return [output, _reply(call, message)], None
        content = strategy.tool_message_content or f"Returning structured response: {response}"
        return [output, _reply(call, content)], response

    def _native(
        self, output: AIMessage, strategy: ProviderStrategy[Any]
    ) -> tuple[list[BaseMessage], Any]:
        if output.tool_calls:
            return [output], None
        spec = strategy.schema_spec
        try:
            response = ProviderStrategyBinding.from_schema_spec(spec).parse(output)
        except Exception as exc:
            name = getattr(spec.schema, "__name__", "response_format")
            error = StructuredOutputValidationError(name, exc, output)
            raise with_langchain_class(error) from exc
        return [output], response


def _reply(call: Any, content: str) -> ToolMessage:
    return ToolMessage(content=content, tool_call_id=call["id"], name=call["name"])


def _check_provider_support(model: object, strategy: ProviderStrategy[Any]) -> None:
    profile = getattr(model, "profile", None)
    if isinstance(profile, dict) and profile.get("structured_output") is False:
        label = schema_label(strategy.schema)
        raise ValueError(
            f"ProviderStrategy({label}) needs provider-native structured output, but the "
            f"profile of {type(model).__name__} ({_model_name(model) or 'unnamed'}) says it "
            f"has none (profile['structured_output'] is False). Use ToolStrategy({label}), "
            f"or pass the schema itself as response_format so the agent picks the tool "
            "strategy for this model."
        )
