"""OpenTelemetry spans of funcware agent runs (the ``otel`` extra).

:func:`instrument` installs, for the whole process, the spans of the OpenTelemetry GenAI
semantic conventions: ``invoke_agent {name}`` per agent run, ``chat {model}`` per model
call and ``execute_tool {tool}`` per tool execution, with one INTERNAL span
``"{middleware}.{hook}"`` per executed hook and wrap-layer call, nested as the onion
nests (a wrap layer's span is the parent of the layers inside it and of the model or tool
span). Prompts, messages, tool arguments and results are recorded only with
``capture_content=True``. :func:`uninstrument` (or leaving ``with instrument(...):``)
removes it; when nothing is instrumented, nothing is paid.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, cast

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider

from funcware.observe.calls import Call, install, uninstall
from funcware.observe.observers import Layer

__all__ = ["Instrumentation", "instrument", "instrumented", "uninstrument"]

_KEY = "funcware.otel"
_WRAP_HOOKS = frozenset({"wrap_model_call", "wrap_tool_call"})
_INNER = {"wrap_model_call": "chat", "wrap_tool_call": "execute_tool"}
_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def _error_type(error: BaseException) -> str:
    kind = type(error)
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"


class _Tracing:
    """The installed instrument: turns calls and layers into spans."""

    def __init__(self, tracer_provider: TracerProvider | None, capture_content: bool) -> None:
        from funcware import __version__  # the package is fully imported by now

        self.tracer_provider = tracer_provider
        self.capture_content = capture_content
        self.tracer = trace.get_tracer("funcware", __version__, tracer_provider)

    # spans --------------------------------------------------------------------------------

    def _open(
        self, data: dict[str, Any], name: str, kind: SpanKind, attributes: dict[str, Any]
    ) -> Span:
        span = self.tracer.start_span(name, kind=kind, attributes=attributes)
        token = otel_context.attach(trace.set_span_in_context(span))
        data[_KEY] = (span, token)
        return span

    def _close(self, data: dict[str, Any]) -> Span | None:
        opened = data.pop(_KEY, None)
        if opened is None:
            return None
        span, token = opened
        with contextlib.suppress(Exception):  # ended in another context: leave that one be
            otel_context.detach(token)
        return cast("Span", span)

    @staticmethod
    def _failed(span: Span, error: BaseException) -> None:
        span.set_attribute("error.type", _error_type(error))
        span.record_exception(error)
        span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"[:200]))

    # agent runs, model and tool calls ---------------------------------------------------

    def start_call(self, call: Call) -> None:
        if call.kind == "agent":
            self._start_agent(call)
        elif call.kind == "model":
            self._start_chat(call)
        else:
            self._start_tool(call)

    def end_call(self, call: Call) -> None:
        span = self._close(call.data)
        if span is None:
            return
        if call.error is not None:
            self._failed(span, call.error)
        elif call.kind == "model":
            self._chat_result(span, call.result)
        elif call.kind == "tool":
            self._tool_result(span, call.result)
        span.end()

    def _start_agent(self, call: Call) -> None:
        attributes: dict[str, Any] = {"gen_ai.operation.name": "invoke_agent"}
        if call.name:
            attributes["gen_ai.agent.name"] = call.name
        configurable = (call.config or {}).get("configurable") or {}
        thread_id = configurable.get("thread_id")
        if thread_id is not None:
            attributes["gen_ai.conversation.id"] = str(thread_id)
        name = f"invoke_agent {call.name}" if call.name else "invoke_agent"
        self._open(call.data, name, SpanKind.INTERNAL, attributes)

    def _start_chat(self, call: Call) -> None:
        request = call.request
        settings: Mapping[str, Any] = getattr(request, "model_settings", None) or {}
        params = _ls_params(request.model, settings)
        model = str(params.get("ls_model_name") or _model_name(request.model))
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": str(params.get("ls_provider") or _provider(request.model)),
            "gen_ai.request.model": model,
        }
        for param, attribute in (
            ("ls_temperature", "gen_ai.request.temperature"),
            ("ls_max_tokens", "gen_ai.request.max_tokens"),
        ):
            if isinstance(params.get(param), (int, float)):
                attributes[attribute] = params[param]
        if self.capture_content:
            attributes["gen_ai.input.messages"] = _json([_message(m) for m in request.messages])
            if request.system_message is not None:
                attributes["gen_ai.system_instructions"] = _json(
                    _parts(request.system_message.content)
                )
        self._open(call.data, f"chat {model}", SpanKind.CLIENT, attributes)

    def _chat_result(self, span: Span, response: Any) -> None:
        messages = getattr(response, "result", None) or []
        message = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if message is None:
            return
        metadata = message.response_metadata or {}
        if message.id:
            span.set_attribute("gen_ai.response.id", message.id)
        model = metadata.get("model_name") or metadata.get("model")
        if isinstance(model, str):
            span.set_attribute("gen_ai.response.model", model)
        reason = metadata.get("finish_reason") or metadata.get("stop_reason")
        if isinstance(reason, str):
            span.set_attribute("gen_ai.response.finish_reasons", [reason])
        usage = message.usage_metadata
        if usage:
            span.set_attribute("gen_ai.usage.input_tokens", usage["input_tokens"])
            span.set_attribute("gen_ai.usage.output_tokens", usage["output_tokens"])
            details = usage.get("input_token_details") or {}
            for detail, attribute in (
                ("cache_read", "gen_ai.usage.cache_read.input_tokens"),
                ("cache_creation", "gen_ai.usage.cache_creation.input_tokens"),
            ):
                if isinstance(details.get(detail), int):
                    span.set_attribute(attribute, details[detail])
        if self.capture_content:
            span.set_attribute("gen_ai.output.messages", _json([_message(m) for m in messages]))

    def _start_tool(self, call: Call) -> None:
        tool_call = call.request.tool_call
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": str(call.name),
            "gen_ai.tool.type": "function",
        }
        if tool_call.get("id"):
            attributes["gen_ai.tool.call.id"] = tool_call["id"]
        description = getattr(call.request.tool, "description", None)
        if isinstance(description, str) and description:
            attributes["gen_ai.tool.description"] = description
        if self.capture_content:
            attributes["gen_ai.tool.call.arguments"] = _json(tool_call.get("args", {}))
        self._open(call.data, f"execute_tool {call.name}", SpanKind.INTERNAL, attributes)

    def _tool_result(self, span: Span, result: Any) -> None:
        if not isinstance(result, ToolMessage):
            return
        if result.status == "error":
            span.set_attribute("error.type", "tool_error")
            span.set_status(Status(StatusCode.ERROR, "the tool answered with an error message"))
        if self.capture_content:
            span.set_attribute("gen_ai.tool.call.result", _text(result.content))

    # hooks and wrap layers --------------------------------------------------------------

    def start_layer(self, layer: Layer) -> None:
        self._open(
            layer.data,
            f"{layer.middleware}.{layer.hook}",
            SpanKind.INTERNAL,
            {
                "funcware.middleware.name": layer.middleware,
                "funcware.middleware.hook": layer.hook,
                "code.location": layer.where,
            },
        )

    def end_layer(self, layer: Layer) -> None:
        span = self._close(layer.data)
        if span is None:
            return
        span.set_attribute("funcware.middleware.outcome", str(layer.outcome))
        if layer.hook in _WRAP_HOOKS:
            span.set_attribute("funcware.middleware.handler_calls", layer.handler_calls)
        if layer.wrote:
            span.set_attribute("funcware.middleware.wrote", list(layer.wrote))
        if layer.changed:
            span.set_attribute("funcware.middleware.changed", list(layer.changed))
        if layer.jump_to:
            span.set_attribute("funcware.middleware.jump_to", layer.jump_to)
        if layer.outcome == "short_circuited" and layer.hook in _WRAP_HOOKS:
            inner = _INNER[layer.hook]
            reason = (
                f"{layer.middleware}.{layer.hook} answered without calling its handler, so "
                f"the layers inside it and the {inner} span did not run"
            )
            span.set_attribute("funcware.middleware.short_circuit", reason)
            span.add_event("funcware.short_circuit", {"reason": reason})
        error = layer.error
        if error is not None and layer.outcome in ("failed", "timed_out"):
            self._failed(span, error)
        elif error is not None and layer.outcome == "continued":
            span.set_attribute("error.type", _error_type(error))
            span.record_exception(error)  # passed over by on_error="continue": not a failure
        span.end()


def _ls_params(model: Any, settings: Mapping[str, Any]) -> Mapping[str, Any]:
    """LangChain's own description of the model (provider, name, temperature, ...)."""
    get = getattr(model, "_get_ls_params", None)
    if get is None:
        return {}
    try:
        params = get(**settings)
    except Exception:  # a model whose description needs more than the settings
        return {}
    return params if isinstance(params, Mapping) else {}


def _model_name(model: Any) -> str:
    for attribute in ("model_name", "model", "model_id"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


def _provider(model: Any) -> str:
    try:
        return str(model._llm_type)
    except Exception:  # not a LangChain chat model
        return "_OTHER"


def _json(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


def _text(content: Any) -> str:
    return content if isinstance(content, str) else _json(content)


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "content": content}]
    parts: list[dict[str, Any]] = []
    for block in content if isinstance(content, Sequence) else [content]:
        if isinstance(block, str):
            parts.append({"type": "text", "content": block})
        elif isinstance(block, Mapping) and block.get("type") == "text":
            parts.append({"type": "text", "content": block.get("text", "")})
        elif isinstance(block, Mapping):
            parts.append({"type": str(block.get("type", "other"))})
        else:
            parts.append({"type": "other"})
    return parts


def _message(message: BaseMessage) -> dict[str, Any]:
    """A message in the GenAI conventions' shape (role and parts)."""
    out: dict[str, Any] = {"role": _ROLES.get(message.type, message.type)}
    if isinstance(message, ToolMessage):
        out["parts"] = [
            {"type": "tool_call_response", "id": message.tool_call_id, "response": message.content}
        ]
        return out
    parts = _parts(message.content) if message.content else []
    if isinstance(message, AIMessage):
        parts.extend(
            {"type": "tool_call", "id": c.get("id"), "name": c["name"], "arguments": c["args"]}
            for c in message.tool_calls
        )
        reason = (message.response_metadata or {}).get("finish_reason")
        if isinstance(reason, str):
            out["finish_reason"] = reason
    out["parts"] = parts
    return out


class Instrumentation:
    """What :func:`instrument` returns: uninstrument it, or use it as a context manager.

    Leaving ``with instrument(...):`` uninstruments only if that call instrumented
    (a repeated ``instrument()`` inside an instrumented process leaves it on).
    """

    def __init__(self, tracing: _Tracing, installed_here: bool) -> None:
        self._tracing = tracing
        self._installed_here = installed_here

    @property
    def tracer_provider(self) -> TracerProvider | None:
        """The provider given to :func:`instrument` (``None``: the global one)."""
        return self._tracing.tracer_provider

    @property
    def capture_content(self) -> bool:
        return self._tracing.capture_content

    @property
    def active(self) -> bool:
        """Whether this instrumentation is still installed."""
        return _current is self._tracing

    def uninstrument(self) -> None:
        """Stop emitting spans (already uninstrumented: a no-op)."""
        if _current is self._tracing:
            uninstrument()

    def __enter__(self) -> Instrumentation:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._installed_here:
            self.uninstrument()

    def __repr__(self) -> str:
        state = "active" if self.active else "uninstrumented"
        return f"<funcware Instrumentation {state}, capture_content={self.capture_content}>"


_current: _Tracing | None = None
_lock = threading.Lock()


def instrument(
    tracer_provider: TracerProvider | None = None, *, capture_content: bool = False
) -> Instrumentation:
    """Emit OpenTelemetry spans for every funcware agent run in this process.

    ``tracer_provider``: where spans go (``None``: OpenTelemetry's global provider).
    ``capture_content=True`` also records messages, the system prompt, tool arguments
    and results (off by default: they may hold personal data). Instrumenting again with
    the same arguments is a no-op; with other arguments it is an error (uninstrument
    first). Returns a handle usable as a context manager.
    """
    if not isinstance(capture_content, bool):
        raise TypeError(
            f"instrument(capture_content=...) takes True or False, not {capture_content!r}."
        )
    if tracer_provider is not None and not hasattr(tracer_provider, "get_tracer"):
        raise TypeError(
            "instrument(tracer_provider=...) takes an OpenTelemetry TracerProvider (e.g. "
            f"opentelemetry.sdk.trace.TracerProvider()), not {type(tracer_provider).__name__}."
        )
    with _lock:
        return _instrument(tracer_provider, capture_content)


def _instrument(tracer_provider: TracerProvider | None, capture_content: bool) -> Instrumentation:
    global _current  # process-wide, as OpenTelemetry instrumentors are
    if _current is not None:
        same = (
            _current.tracer_provider is tracer_provider
            and _current.capture_content == capture_content
        )
        if not same:
            raise RuntimeError(
                "funcware is already instrumented with tracer_provider="
                f"{_current.tracer_provider!r}, capture_content={_current.capture_content}; "
                "call funcware.observe.uninstrument() first to change them."
            )
        return Instrumentation(_current, installed_here=False)
    _current = _Tracing(tracer_provider, capture_content)
    install(_current)
    return Instrumentation(_current, installed_here=True)


def uninstrument() -> None:
    """Stop emitting spans (nothing instrumented: a no-op). Runs already going keep theirs."""
    global _current
    with _lock:
        if _current is not None:
            uninstall(_current)
            _current = None


def instrumented() -> Instrumentation | None:
    """The current instrumentation, if any."""
    return None if _current is None else Instrumentation(_current, installed_here=False)
