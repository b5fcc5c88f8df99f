"""Response formats: how an agent is asked for structured output, and how answers are parsed.

The names, fields and defaults are LangChain 1.5's ``langchain.agents.structured_output``:
``ToolStrategy`` (an artificial tool per schema, the model is made to call one),
``ProviderStrategy`` (the provider's native JSON-schema mode) and ``AutoStrategy`` (the
agent picks one for the model). A schema is a pydantic model, a dataclass, a TypedDict or
a JSON-schema dict; ``ToolStrategy`` also takes a union of them (one tool per member).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, is_dataclass
from types import UnionType
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias, TypeVar, Union, get_args
from typing import get_origin as typing_origin

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, TypeAdapter
from typing_extensions import Self, is_typeddict

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage

__all__ = [
    "AutoStrategy",
    "OutputToolBinding",
    "ProviderStrategy",
    "ProviderStrategyBinding",
    "ResponseFormat",
    "SchemaKind",
    "SchemaSpec",
    "ToolStrategy",
    "schema_label",
]

SchemaT = TypeVar("SchemaT")

SchemaKind = Literal["pydantic", "dataclass", "typeddict", "json_schema"]

ErrorHandler: TypeAlias = Union[  # noqa: UP007 - a runtime alias must work on Python 3.10
    bool, str, type[Exception], tuple[type[Exception], ...], Callable[[Exception], str]
]
"""What ``ToolStrategy(handle_errors=...)`` takes."""

_SUPPORTED = "Pydantic models, dataclasses, TypedDicts, and JSON schema dicts"


def schema_label(schema: object) -> str:
    """A short human name for a schema: its class name, a dict's title, or its repr."""
    if typing_origin(schema) in (Union, UnionType):
        return " | ".join(schema_label(member) for member in get_args(schema))
    if isinstance(schema, dict):
        return str(schema.get("title", "a JSON schema without a title"))
    return str(getattr(schema, "__name__", None) or schema)


def _kind_and_json_schema(schema: Any) -> tuple[SchemaKind, dict[str, Any]]:
    if isinstance(schema, dict):
        return "json_schema", schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return "pydantic", schema.model_json_schema()
    if is_dataclass(schema) and isinstance(schema, type):
        return "dataclass", TypeAdapter(schema).json_schema()
    if is_typeddict(schema):
        return "typeddict", TypeAdapter(schema).json_schema()
    hint = (
        " A union is taken by ToolStrategy only (one tool per member): pass "
        "ToolStrategy(A | B), or one schema to ProviderStrategy."
        if typing_origin(schema) in (Union, UnionType)
        else ""
    )
    raise ValueError(
        f"Unsupported schema type: {type(schema)}. Supported types: {_SUPPORTED}. "
        f"funcware got {schema!r} as a structured-output schema; pass a pydantic "
        f"BaseModel subclass, a @dataclass class, a TypedDict class or a dict JSON schema.{hint}"
    )


def validate(schema: Any, kind: SchemaKind, data: Any) -> Any:
    """``data`` validated into ``schema`` (a JSON-schema dict returns it unchanged)."""
    if kind == "json_schema":
        return data
    try:
        return TypeAdapter(schema).validate_python(data)
    except Exception as exc:
        raise ValueError(f"Failed to parse data to {schema_label(schema)}: {exc}") from exc


@dataclass(init=False)
class SchemaSpec(Generic[SchemaT]):
    """One schema with its name (the tool's name), description, kind and JSON schema.

    The name defaults to the class name or a dict's ``title`` (else a generated
    ``response_format_xxxx``); the description to the docstring or the dict's
    ``description``. An unsupported schema is a ``ValueError``.
    """

    schema: type[SchemaT] | dict[str, Any]
    name: str
    description: str
    schema_kind: SchemaKind
    json_schema: dict[str, Any]
    strict: bool | None = None

    def __init__(
        self,
        schema: type[SchemaT] | dict[str, Any],
        *,
        name: str | None = None,
        description: str | None = None,
        strict: bool | None = None,
    ) -> None:
        self.schema = schema
        self.schema_kind, self.json_schema = _kind_and_json_schema(schema)
        generated = f"response_format_{uuid.uuid4().hex[:4]}"
        if isinstance(schema, dict):
            self.name = name or str(schema.get("title", generated))
            self.description = description or str(schema.get("description", ""))
        else:
            self.name = name or str(getattr(schema, "__name__", generated))
            self.description = description or getattr(schema, "__doc__", None) or ""
        self.strict = strict


def _members(schema: object) -> Iterator[object]:
    """The leaves of a ``Union``/``|`` type or of a JSON schema's ``oneOf``."""
    if typing_origin(schema) in (Union, UnionType):
        for arg in get_args(schema):
            yield from _members(arg)
    elif isinstance(schema, dict) and "oneOf" in schema:
        for sub in schema["oneOf"]:
            yield from _members(sub)
    else:
        yield schema


@dataclass(init=False)
class ToolStrategy(Generic[SchemaT]):
    """Structured output through tool calling: one artificial tool per schema.

    Options:
      ``tool_message_content`` — the content of the ``ToolMessage`` that answers the
      structured call (default ``"Returning structured response: {response}"``);
      ``handle_errors`` — what a parse failure or several structured calls do:
      ``True`` (default) sends an error ``ToolMessage`` and lets the model retry, a ``str``
      is that message, an exception type or tuple retries only those (others raise), a
      callable ``(exc) -> str`` builds the message, ``False`` raises. A JSON-schema dict is
      not validated, so nothing is retried for it.
    """

    schema: Any
    schema_specs: list[SchemaSpec[Any]]
    tool_message_content: str | None
    handle_errors: ErrorHandler

    def __init__(
        self,
        schema: type[SchemaT] | UnionType | dict[str, Any] | Any,
        *,
        tool_message_content: str | None = None,
        handle_errors: ErrorHandler = True,
    ) -> None:
        self.schema = schema
        self.tool_message_content = tool_message_content
        self.handle_errors = handle_errors
        self.schema_specs = [SchemaSpec(member) for member in _members(schema)]  # type: ignore[arg-type]


@dataclass(init=False)
class ProviderStrategy(Generic[SchemaT]):
    """Structured output through the provider's native JSON-schema mode.

    Options: ``strict`` — ask the provider to enforce the schema strictly.
    The model is bound with ``response_format={"type": "json_schema", ...}`` (OpenAI's
    form); its text answer is parsed as JSON and validated.
    """

    schema: type[SchemaT] | dict[str, Any]
    schema_spec: SchemaSpec[SchemaT]

    def __init__(
        self, schema: type[SchemaT] | dict[str, Any], *, strict: bool | None = None
    ) -> None:
        self.schema = schema
        self.schema_spec = SchemaSpec(schema, strict=strict)

    def to_model_kwargs(self) -> dict[str, Any]:
        """The keyword arguments bound to the model to ask for this format."""
        spec = self.schema_spec
        json_schema: dict[str, Any] = {"name": spec.name, "schema": spec.json_schema}
        if spec.strict:
            json_schema["strict"] = True
        return {"response_format": {"type": "json_schema", "json_schema": json_schema}}


class AutoStrategy(Generic[SchemaT]):
    """Let the agent choose: the provider's native mode when the model supports it, else tools."""

    schema: type[SchemaT] | dict[str, Any]

    def __init__(self, schema: type[SchemaT] | dict[str, Any]) -> None:
        self.schema = schema

    def __repr__(self) -> str:
        return f"AutoStrategy(schema={self.schema!r})"


ResponseFormat: TypeAlias = Union[  # noqa: UP007 - a runtime alias must work on Python 3.10
    ToolStrategy[SchemaT], ProviderStrategy[SchemaT], AutoStrategy[SchemaT]
]
"""Any of the three strategies."""


@dataclass
class OutputToolBinding(Generic[SchemaT]):
    """A ``ToolStrategy`` schema and the tool bound to the model for it."""

    schema: type[SchemaT] | dict[str, Any]
    schema_kind: SchemaKind
    tool: BaseTool

    @classmethod
    def from_schema_spec(cls, schema_spec: SchemaSpec[SchemaT]) -> Self:
        """The binding for ``schema_spec``: a schema-only ``StructuredTool`` of its name."""
        tool = StructuredTool(
            name=schema_spec.name,
            description=schema_spec.description,
            args_schema=schema_spec.json_schema,
        )
        return cls(schema=schema_spec.schema, schema_kind=schema_spec.schema_kind, tool=tool)

    def parse(self, tool_args: dict[str, Any]) -> Any:
        """The structured call's arguments validated into the schema (``ValueError`` if not)."""
        return validate(self.schema, self.schema_kind, tool_args)


def message_text(message: AIMessage) -> str:
    """The text of an AI message: its string content, or its text blocks joined."""
    content = message.content
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            parts.append(str(block))
        elif block.get("type") == "text" and "text" in block:
            parts.append(str(block["text"]))
        elif isinstance(block.get("content"), str):
            parts.append(block["content"])
    return "".join(parts)


@dataclass
class ProviderStrategyBinding(Generic[SchemaT]):
    """A ``ProviderStrategy`` schema, and how the model's JSON answer is parsed into it."""

    schema: type[SchemaT] | dict[str, Any]
    schema_kind: SchemaKind

    @classmethod
    def from_schema_spec(cls, schema_spec: SchemaSpec[SchemaT]) -> Self:
        """The binding for ``schema_spec``."""
        return cls(schema=schema_spec.schema, schema_kind=schema_spec.schema_kind)

    def parse(self, response: AIMessage) -> Any:
        """The message's text parsed as JSON and validated (``ValueError`` if either fails)."""
        try:
            data = json.loads(message_text(response))
        except Exception as exc:
            name = getattr(self.schema, "__name__", "response_format")
            raise ValueError(
                f"Native structured output expected valid JSON for {name}, "
                f"but parsing failed: {exc}."
            ) from exc
        return validate(self.schema, self.schema_kind, data)
