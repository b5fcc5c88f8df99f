"""How the model node calls the model: a strategy chosen at build. A feature changes parts of
the plain :class:`ModelCall` through the ``model_call`` seam with a :class:`Delegate`
(structured output binds and parses; a stream guard invokes and releases)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, AnyMessage
from langchain_core.runnables import RunnableConfig

from funcware.compose.stream.hidden import current_config
from funcware.hooks.types import ModelRequest, ModelResponse

__all__ = ["Delegate", "ModelCall", "Update"]

Update = Any
"""The model node's output: a dict update or a list of ``Command``s."""
Config = RunnableConfig | None


class ModelCall:
    """The plain strategy: tools bound as given, the model's message as the answer."""

    response_format: object = None
    """What ``ModelRequest.response_format`` starts as on every call."""
    answer_tools: frozenset[str] = frozenset()
    """Tool calls the model step answers itself (they never go to the tool node)."""
    retry_errors: tuple[type[BaseException], ...] = ()
    """Errors after which a wrap layer's retry keeps what it appended to the request."""
    buffers: bool = False
    """Whether :meth:`finish` may change the node's output (else it is not called)."""

    formats: ModelCall | None = None
    """The strategy for a format a layer set that the agent was not built with (late_formats)."""

    def bind(self, request: ModelRequest[Any], layers: str) -> tuple[Any, object]:
        """The model bound for ``request``, and what :meth:`respond` needs (``None`` here);
        ``layers`` names the agent's model wraps, for error messages."""
        if request.response_format is not None and self.formats is not self:
            from funcware.compose.steps.late_formats import formats_for

            return formats_for(self).bind(request, layers)
        model = request.model
        if request.tools:
            bound = model.bind_tools(
                request.tools, tool_choice=request.tool_choice, **request.model_settings
            )
            return bound, None
        return model.bind(**request.model_settings), None

    def invoke(self, bound: Any, messages: list[AnyMessage], config: Config) -> AIMessage:
        """Call the bound model; ``config`` is the agent's own, when it must be made current."""
        if config is None:
            return bound.invoke(messages)  # type: ignore[no-any-return]
        with current_config(config):
            return bound.invoke(messages)  # type: ignore[no-any-return]

    async def ainvoke(self, bound: Any, messages: list[AnyMessage], config: Config) -> AIMessage:
        """Async :meth:`invoke`."""
        if config is None:
            return await bound.ainvoke(messages)  # type: ignore[no-any-return]
        with current_config(config):
            return await bound.ainvoke(messages)  # type: ignore[no-any-return]

    def respond(self, output: AIMessage, bound_for: object) -> ModelResponse[Any]:
        """The model's answer as a response."""
        if bound_for is not None and self.formats not in (None, self):
            return self.formats.respond(output, bound_for)
        return ModelResponse(result=[output])

    def ran_out(self, request: ModelRequest[Any], bound_for: object) -> str:
        """A hint added when the model raised ``StopIteration`` (no answers left)."""
        if bound_for is not None and self.formats not in (None, self):
            return self.formats.ran_out(request, bound_for)
        return ""

    def finish(self, update: Update, config: Config) -> Update:
        """The node's output, as the stream should see it (called when :attr:`buffers`)."""
        return update

    async def afinish(self, update: Update, config: Config) -> Update:
        """Async :meth:`finish`."""
        return update


class Delegate(ModelCall):
    """A strategy that changes part of another: everything it does not override is ``inner``'s."""

    def __init__(self, inner: ModelCall) -> None:
        self.inner = inner
        self.response_format = inner.response_format
        self.answer_tools = inner.answer_tools
        self.retry_errors = inner.retry_errors
        self.buffers = inner.buffers

    def bind(self, request: ModelRequest[Any], layers: str) -> tuple[Any, object]:
        return self.inner.bind(request, layers)

    def invoke(self, bound: Any, messages: list[AnyMessage], config: Config) -> AIMessage:
        return self.inner.invoke(bound, messages, config)

    async def ainvoke(self, bound: Any, messages: list[AnyMessage], config: Config) -> AIMessage:
        return await self.inner.ainvoke(bound, messages, config)

    def respond(self, output: AIMessage, bound_for: object) -> ModelResponse[Any]:
        return self.inner.respond(output, bound_for)

    def ran_out(self, request: ModelRequest[Any], bound_for: object) -> str:
        return self.inner.ran_out(request, bound_for)

    def finish(self, update: Update, config: Config) -> Update:
        return self.inner.finish(update, config)

    async def afinish(self, update: Update, config: Config) -> Update:
        return await self.inner.afinish(update, config)
