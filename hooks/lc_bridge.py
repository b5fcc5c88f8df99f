"""LangChain v1 middleware seen through funcware's eyes, and back.

funcware never imports ``langchain``: a LangChain middleware instance can only exist if
its module is already loaded, so these helpers look it up in ``sys.modules``. They
convert requests and responses between the two libraries' (field-for-field identical)
classes, so a LangChain middleware sees exactly LangChain's types and vice versa.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Annotated, Any, get_args, get_origin

from typing_extensions import NotRequired, Required, get_type_hints

from .types import AgentState, ExtendedModelResponse, ModelRequest, ModelResponse, OmitFromSchema

__all__ = [
    "adapt_model_wrap",
    "from_lc_request",
    "from_lc_result",
    "is_langchain_middleware",
    "langchain_types",
    "native_fields",
    "swap_omit_markers",
    "to_lc_request",
    "to_lc_response",
    "to_lc_result",
]

_TYPES_MODULE = "langchain.agents.middleware.types"


def langchain_types() -> ModuleType | None:
    """``langchain.agents.middleware.types`` if something already imported it, else ``None``."""
    return sys.modules.get(_TYPES_MODULE)


def is_langchain_middleware(obj: object) -> bool:
    """Whether ``obj`` is an instance of LangChain's ``AgentMiddleware``."""
    lc = langchain_types()
    return lc is not None and isinstance(obj, lc.AgentMiddleware)


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
    assert lc is not None
    return lc.ModelRequest(**_request_fields(request))


def from_lc_request(request: Any) -> ModelRequest[Any]:
    """LangChain ``ModelRequest`` (or funcware's own) -> funcware ``ModelRequest``."""
    if isinstance(request, ModelRequest):
        return request
    return ModelRequest(**_request_fields(request))


def to_lc_response(response: Any) -> Any:
    """funcware ``ModelResponse`` -> LangChain ``ModelResponse``."""
    lc = langchain_types()
    assert lc is not None
    if isinstance(response, lc.ModelResponse):
        return response
    return lc.ModelResponse(
        result=response.result, structured_response=response.structured_response
    )


def from_lc_result(result: Any) -> Any:
    """A LangChain wrap result as funcware's (``AIMessage`` and others pass through)."""
    lc = langchain_types()
    if lc is None:
        return result
    if isinstance(result, lc.ExtendedModelResponse):
        return ExtendedModelResponse(from_lc_result(result.model_response), result.command)
    if isinstance(result, lc.ModelResponse):
        return ModelResponse(result=result.result, structured_response=result.structured_response)
    return result


def to_lc_result(result: Any) -> Any:
    """A funcware wrap result as LangChain's (``AIMessage`` and others pass through)."""
    lc = langchain_types()
    assert lc is not None
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


def native_fields(schema: type) -> dict[str, Any]:
    """A state schema's fields in funcware's terms.

    Fields a schema inherits from LangChain's ``AgentState`` are funcware's ``AgentState``
    fields, and LangChain's omit/private markers become funcware's, so schemas from both
    libraries merge without false conflicts and keep private fields private.
    """
    hints = get_type_hints(schema, include_extras=True)
    lc = langchain_types()
    if lc is None:
        return hints
    ours = get_type_hints(AgentState, include_extras=True)
    theirs = get_type_hints(lc.AgentState, include_extras=True)
    return {
        key: ours[key]
        if key in theirs and annotation == theirs[key]
        else swap_omit_markers(annotation, _native_marker)
        for key, annotation in hints.items()
    }
