"""LangChain v1 middleware seen through funcware's eyes, and back.

These helpers run only when a LangChain object is at hand (a middleware, a schema, a
response format), so the LangChain module they import is already loaded and what they
do never depends on import order. They convert requests and responses between the two
libraries' (field-for-field identical) classes, so a LangChain middleware sees exactly
LangChain's types and vice versa.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from types import ModuleType
from typing import Annotated, Any, get_args, get_origin

from typing_extensions import NotRequired, Required

from funcware.compose.graph.schema import type_hints
from funcware.hooks.types import (
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    OmitFromSchema,
)
from funcware.interop import langchain_base
from funcware.structured.strategies import AutoStrategy, ProviderStrategy, SchemaSpec, ToolStrategy

__all__ = [
    "adapt_model_wrap",
    "from_lc_request",
    "from_lc_result",
    "is_langchain_format",
    "is_langchain_middleware",
    "langchain_fields",
    "langchain_types",
    "lc_format",
    "native_format",
    "swap_omit_markers",
    "to_lc_request",
    "to_lc_response",
    "to_lc_result",
]

_TYPES_MODULE = "langchain.agents.middleware.types"
_FORMATS_MODULE = "langchain.agents.structured_output"
_FORMAT_CLASSES = frozenset({"ToolStrategy", "ProviderStrategy", "AutoStrategy"})
_TWIN = "_funcware_twin"
"""The attribute linking a funcware strategy and its LangChain copy, both ways."""


def langchain_types() -> ModuleType:
    """``langchain.agents.middleware.types`` (called only when a LangChain object is at hand)."""
    return importlib.import_module(_TYPES_MODULE)


def is_langchain_middleware(obj: object) -> bool:
    """Whether ``obj`` is an instance of LangChain's ``AgentMiddleware``."""
    return langchain_base(type(obj)) is not None


def lc_format(value: Any) -> Any:
    """A funcware response-format strategy as LangChain's (same fields), made once.

    Anything else (LangChain's own strategies, plain schemas, ``None``) is returned as is.
    """
    kind = type(value)
    if kind.__name__ not in _FORMAT_CLASSES or not kind.__module__.startswith("funcware."):
        return value
    twin = getattr(value, _TWIN, None)
    if twin is not None:
        return twin
    lc = importlib.import_module(_FORMATS_MODULE)
    if kind.__name__ == "ToolStrategy":
        twin = lc.ToolStrategy(
            value.schema,
            tool_message_content=value.tool_message_content,
            handle_errors=value.handle_errors,
        )
        for theirs, ours in zip(twin.schema_specs, value.schema_specs, strict=True):
            theirs.name = ours.name  # a generated name must stay the agent's tool name
    elif kind.__name__ == "ProviderStrategy":
        twin = lc.ProviderStrategy(value.schema, strict=value.schema_spec.strict)
    else:
        twin = lc.AutoStrategy(value.schema)
    setattr(value, _TWIN, twin)
    setattr(twin, _TWIN, value)
    return twin


def is_langchain_format(value: object) -> bool:
    """Whether ``value`` is one of LangChain's response-format strategies (by shape)."""
    kind = type(value)
    return kind.__name__ in _FORMAT_CLASSES and kind.__module__.startswith("langchain.")


def native_format(value: Any) -> Any:
    """A LangChain response-format strategy as funcware's (same fields), made once.

    The copy and the original point at each other, so a strategy that crosses to LangChain
    and back is the same object. Anything else is returned as is.
    """
    if not is_langchain_format(value):
        return value
    twin = getattr(value, _TWIN, None)
    if twin is not None:
        return twin
    name = type(value).__name__
    if name == "ToolStrategy":
        twin = ToolStrategy(
            value.schema,
            tool_message_content=value.tool_message_content,
            handle_errors=value.handle_errors,
        )
        twin.schema_specs = [
            SchemaSpec(s.schema, name=s.name, description=s.description, strict=s.strict)
            for s in value.schema_specs
        ]
    elif name == "ProviderStrategy":
        twin = ProviderStrategy(value.schema, strict=value.schema_spec.strict)
    else:
        twin = AutoStrategy(value.schema)
    setattr(value, _TWIN, twin)
    setattr(twin, _TWIN, value)
    return twin


def _request_fields(request: Any) -> dict[str, Any]:
    return {
        "model": request.model,
        "messages": request.messages,
        "system_message": request.system_message,
        "tool_choice": request.tool_choice,
        "tools": request.tools,
        "response_format": request.response_format,
        "state": request.state,
        "runtime": request.runtime,
        "model_settings": request.model_settings,
    }


def to_lc_request(request: ModelRequest[Any]) -> Any:
    """funcware ``ModelRequest`` -> LangChain ``ModelRequest`` (same fields)."""
    lc = langchain_types()
    fields = _request_fields(request)
    fields["response_format"] = lc_format(fields["response_format"])
    return lc.ModelRequest(**fields)


def from_lc_request(request: Any) -> ModelRequest[Any]:
    """LangChain ``ModelRequest`` (or funcware's own) -> funcware ``ModelRequest``."""
    if isinstance(request, ModelRequest):
        return request
    fields = _request_fields(request)
    fields["response_format"] = native_format(fields["response_format"])
    return ModelRequest(**fields)


def to_lc_response(response: Any) -> Any:
    """funcware ``ModelResponse`` -> LangChain ``ModelResponse``."""
    lc = langchain_types()
    if isinstance(response, lc.ModelResponse):
        return response
    return lc.ModelResponse(
        result=response.result, structured_response=response.structured_response
    )


def from_lc_result(result: Any) -> Any:
    """A LangChain wrap result as funcware's (``AIMessage`` and others pass through)."""
    lc = langchain_types()
    if isinstance(result, lc.ExtendedModelResponse):
        return ExtendedModelResponse(from_lc_result(result.model_response), result.command)
    if isinstance(result, lc.ModelResponse):
        return ModelResponse(result=result.result, structured_response=result.structured_response)
    return result


def to_lc_result(result: Any) -> Any:
    """A funcware wrap result as LangChain's (``AIMessage`` and others pass through)."""
    lc = langchain_types()
    if isinstance(result, ExtendedModelResponse):
        return lc.ExtendedModelResponse(to_lc_response(result.model_response), result.command)
    if isinstance(result, ModelResponse):
        return to_lc_response(result)
    return result


def adapt_model_wrap(method: Callable[..., Any]) -> Callable[..., Any]:
    """A LangChain middleware's (a)wrap_model_call, callable with funcware's types.

    The method receives LangChain's ``ModelRequest`` and a handler returning LangChain's
    ``ModelResponse``; what it returns is converted back. ``__wrapped__`` keeps the
    original, so errors point at the user's code.
    """
    if inspect.iscoroutinefunction(method):

        async def async_adapter(request: ModelRequest[Any], handler: Any) -> Any:
            async def lc_handler(lc_request: Any) -> Any:
                return to_lc_response(await handler(from_lc_request(lc_request)))

            return from_lc_result(await method(to_lc_request(request), lc_handler))

        async_adapter.__wrapped__ = method  # type: ignore[attr-defined]
        return async_adapter

    def adapter(request: ModelRequest[Any], handler: Any) -> Any:
        def lc_handler(lc_request: Any) -> Any:
            return to_lc_response(handler(from_lc_request(lc_request)))

        return from_lc_result(method(to_lc_request(request), lc_handler))

    adapter.__wrapped__ = method  # type: ignore[attr-defined]
    return adapter


def swap_omit_markers(annotation: Any, convert: Callable[[Any], Any]) -> Any:
    """``annotation`` with each ``OmitFromSchema``-like marker replaced by ``convert(marker)``.

    A marker is recognised by shape (an ``OmitFromSchema`` class with ``input``/``output``),
    so LangChain's and funcware's both are; ``Required``/``NotRequired`` are kept.
    """
    wrapper = get_origin(annotation)
    if wrapper in (Required, NotRequired):
        return wrapper[swap_omit_markers(get_args(annotation)[0], convert)]
    if wrapper is Annotated:
        base, *meta = get_args(annotation)
        params = (base, *(convert(m) if type(m).__name__ == "OmitFromSchema" else m for m in meta))
        return Annotated[params]
    return annotation


def _native_marker(marker: Any) -> OmitFromSchema:
    return OmitFromSchema(input=bool(marker.input), output=bool(marker.output))


def _langchain_marker(item: object) -> bool:
    kind = type(item)
    return kind.__name__ == "OmitFromSchema" and kind.__module__.startswith("langchain.")


def _metadata(annotation: Any) -> tuple[Any, ...]:
    while get_origin(annotation) in (Required, NotRequired):
        annotation = get_args(annotation)[0]
    return get_args(annotation)[1:] if get_origin(annotation) is Annotated else ()


def langchain_fields(hints: dict[str, Any]) -> dict[str, Any] | None:
    """A state schema's fields (``hints``) in funcware's terms, if LangChain's markers are
    among them (a schema deriving from LangChain's ``AgentState`` always has them); else
    ``None``.

    Fields inherited from LangChain's ``AgentState`` become funcware's ``AgentState``
    fields, and LangChain's omit/private markers funcware's, so schemas from both
    libraries merge without false conflicts and keep private fields private.
    """
    if not any(_langchain_marker(m) for a in hints.values() for m in _metadata(a)):
        return None
    ours = type_hints(AgentState)
    theirs = type_hints(langchain_types().AgentState)
    return {
        key: ours[key]
        if key in theirs and annotation == theirs[key]
        else swap_omit_markers(annotation, _native_marker)
        for key, annotation in hints.items()
    }
