"""Structured output for agents: ``create_agent(response_format=...)``'s strategies and errors.

The same names as LangChain 1.5's ``langchain.agents.structured_output``:

- ``ToolStrategy(schema, tool_message_content=None, handle_errors=True)`` — the model calls
  an artificial tool per schema (a union gives one tool per member);
- ``ProviderStrategy(schema, strict=None)`` — the provider's native JSON-schema mode;
- ``AutoStrategy(schema)`` — native when the model supports it, else tools (what a plain
  schema passed as ``response_format`` means);
- ``StructuredOutputError`` and its ``MultipleStructuredOutputsError`` and
  ``StructuredOutputValidationError`` (also instances of LangChain's classes of the same
  name when LangChain is loaded);
- ``OutputToolBinding``, ``ProviderStrategyBinding``: how each schema is bound and parsed.
"""

from funcware.structured.errors import (
    MultipleStructuredOutputsError,
    StructuredOutputError,
    StructuredOutputValidationError,
)
from funcware.structured.strategies import (
    AutoStrategy,
    OutputToolBinding,
    ProviderStrategy,
    ProviderStrategyBinding,
    ResponseFormat,
    SchemaKind,
    SchemaSpec,
    ToolStrategy,
)

__all__ = [
    "AutoStrategy",
    "MultipleStructuredOutputsError",
    "OutputToolBinding",
    "ProviderStrategy",
    "ProviderStrategyBinding",
    "ResponseFormat",
    "SchemaKind",
    "SchemaSpec",
    "StructuredOutputError",
    "StructuredOutputValidationError",
    "ToolStrategy",
]
