"""The agent's ``model`` node: each call's request, the onion around the model, the update."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, Optional, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, RemoveMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.errors import GraphInterrupt
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.types import Command

from funcware.compose.observing import watcher
from funcware.compose.steps.failures import passed_through
from funcware.compose.steps.model_call import ModelCall
from funcware.compose.stream.hidden import (
    agent_config,
    hidden_calls,
    runnable_config,
    visible_layers,
)
from funcware.compose.wraps.layers import Outcome
from funcware.compose.wraps.onion import Onions
from funcware.compose.wraps.results import model_calls
from funcware.hooks.middleware import HookImpl
from funcware.hooks.types import AgentState, ModelRequest, ModelResponse

if TYPE_CHECKING:
    from funcware.compose.steps.attempts import Attempts
    from funcware.compose.watching import Watcher

__all__ = ["ModelNode"]

Repaired = list[AnyMessage] | None
"""The history with replies to invalid tool calls, when it needed them."""


def _own_copy(message: SystemMessage | None) -> SystemMessage | None:
    """A copy of the agent's system message that a layer may edit without leaking."""
    if message is None:
        return None
    content = message.content
    return message.model_copy(
        update={"content": list(content)} if isinstance(content, list) else None
    )


def _observed(observe: Callable[[Any, Any], Any], model: Any, request: Any) -> Any:
    """``model(request)``, run by the watcher's ``observe``."""
    return observe(request, model)


class ModelNode:
    """Builds each call's ``ModelRequest``, runs the onion around the model, writes the result:
    the model's messages, then the layers' merged writes (the outermost wins a plain key)."""

    def __init__(
        self,
        *,
        model: BaseChatModel,
        tools: Sequence[BaseTool | dict[str, Any]],
        executable: frozenset[str],
        has_tool_wraps: bool,
        system_message: SystemMessage | None,
        wraps: Sequence[HookImpl],
        reducer_keys: frozenset[str],
        state_keys: frozenset[str] | None,
        agent_name: str | None,
        call: ModelCall | None = None,
    ) -> None:
        self.model = model
        self.call = call or ModelCall()
        self.response_format = self.call.response_format
        self.tools = tuple(tools)
        self.executable = executable
        self.has_tool_wraps = has_tool_wraps
        self.wraps = tuple(wraps)
        self.system_message = system_message
        self.reducer_keys = reducer_keys
        self.agent_name = agent_name
        self.onions = Onions(visible_layers(wraps), model_calls(state_keys))
        self._default_bound: tuple[Any, object] | None = None

    def request(
        self, state: Any, runtime: Any
    ) -> tuple[ModelRequest[Any], Repaired, Attempts | None]:
        """A fresh request (its lists and ``state`` are copies a layer may edit), the repaired
        history if invalid tool calls needed replies, and the step's record of attempts if a
        layer may retry after one of the strategy's ``retry_errors`` (its feedback is kept)."""
        history: list[AnyMessage] = list(state["messages"])
        repaired = None
        if any(isinstance(m, AIMessage) and m.invalid_tool_calls for m in history):
            from funcware.compose.steps.repair import answer_invalid_tool_calls

            repaired = answer_invalid_tool_calls(history)
        messages = list(repaired) if repaired is not None else list(history)
        request = ModelRequest(
            model=self.model,
            messages=messages,
            system_message=_own_copy(self.system_message),
            tool_choice=None,
            tools=list(self.tools),
            response_format=self.response_format,
            # the state as it was (as in LangChain), not the repaired history
            state=cast("AgentState[Any]", {**state, "messages": history}),
            runtime=runtime,
            model_settings={},
        )
        if not (self.wraps and self.call.retry_errors):
            return request, repaired, None
        from funcware.compose.steps.attempts import Attempts

        return request, repaired, Attempts(messages, self.call.retry_errors)

    def _check_tools(self, request: ModelRequest[Any]) -> None:
        if self.has_tool_wraps:
            return
        known = self.executable
        unknown = [t.name for t in request.tools if isinstance(t, BaseTool) and t.name not in known]
        if unknown:
            from funcware.compose.steps.model_errors import unknown_tools

            raise unknown_tools(unknown, known, self._layers())

    def _layers(self) -> str:
        return "; ".join(impl.describe() for impl in self.wraps) or "none"

    def _bound(self, request: ModelRequest[Any]) -> tuple[Any, object]:
        """The bound model and structured-output plan; made once for unchanged requests."""
        unchanged = (
            request.model is self.model
            and request.response_format is self.response_format
            and request.tool_choice is None
            and not request.model_settings
            and len(request.tools) == len(self.tools)
            and all(a is b for a, b in zip(request.tools, self.tools, strict=True))
        )
        if not unchanged:
            return self.call.bind(request, self._layers())
        if self._default_bound is None:
            self._default_bound = self.call.bind(request, self._layers())
        return self._default_bound

    def _prepare(self, request: ModelRequest[Any]) -> tuple[Any, list[AnyMessage], object]:
        self._check_tools(request)
        bound, call = self._bound(request)
        messages = list(request.messages)
        if request.system_message is not None:
            messages.insert(0, request.system_message)
        return bound, messages, call

    def _response(self, output: AIMessage, bound_for: object) -> ModelResponse[Any]:
        if self.agent_name:
            output.name = self.agent_name
        return self.call.respond(output, bound_for)

    def call_model(self, request: ModelRequest[Any]) -> ModelResponse[Any]:
        """The innermost handler: the model as the strategy calls it (its errors pass through)."""
        with passed_through:
            bound, messages, bound_for = self._prepare(request)
            try:
                output = self.call.invoke(bound, messages, agent_config())
            except StopIteration as exc:
                from funcware.compose.steps.model_errors import ran_out

                raise ran_out(request, self.call.ran_out(request, bound_for)) from exc
            return self._response(output, bound_for)

    async def acall_model(self, request: ModelRequest[Any]) -> ModelResponse[Any]:
        """Async :meth:`call_model`."""
        with passed_through:
            bound, messages, bound_for = self._prepare(request)
            try:
                output = await self.call.ainvoke(bound, messages, agent_config())
            except StopIteration as exc:
                from funcware.compose.steps.model_errors import ran_out

                raise ran_out(request, self.call.ran_out(request, bound_for)) from exc
            return self._response(output, bound_for)

    def _handler(self, attempts: Attempts | None, observer: Watcher | None, async_: bool) -> Any:
        """The innermost handler: the model, observed and noting attempts as needed."""
        call: Any = self.acall_model if async_ else self.call_model
        if observer is not None:
            call = partial(_observed, observer.amodel if async_ else observer.model, call)
        if attempts is not None:
            call = attempts.anoting(call) if async_ else attempts.noting(call)
        return call

    def _update(
        self, outcome: Outcome, repaired: Repaired, attempts: Attempts | None
    ) -> dict[str, Any] | list[Command[Any]]:
        """The node's output, shaped as LangChain's so every stream mode shows the same: the
        model's messages first, then each merged write as its own ``Command``."""
        response, writes = outcome
        messages = list(response.result)
        if attempts is not None and (feedback := attempts.feedback()):
            messages = [*feedback, *messages]
        if repaired is not None:  # the history with replies to invalid tool calls
            messages = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *repaired, *messages]
        state: dict[str, Any] = {"messages": messages}
        if response.structured_response is not None:
            state["structured_response"] = response.structured_response
        elif self.response_format is not None:  # no stale answer from an earlier turn
            state["structured_response"] = None
        if not writes:
            return state
        from funcware.compose.wraps.updates import merge_writes

        merged = merge_writes(writes, self.reducer_keys)
        return [Command(update=state), *(Command(update={key: value}) for key, value in merged)]

    @contextmanager
    def _step(self, config: RunnableConfig | None) -> Iterator[None]:
        """Around one model step: its config current, the layers' own model calls hidden,
        an interrupt refused without a checkpointer."""
        try:
            with runnable_config(config), hidden_calls(config if self.wraps else None, self.model):
                yield
        except GraphInterrupt as exc:
            from funcware.compose.steps.pauses import refuse_unresumable

            refuse_unresumable(exc, config, "the model step")
            raise

    def __call__(
        self,
        state: Any,
        runtime: Any,
        config: Optional[RunnableConfig] = None,  # noqa: UP045 - langgraph injects by this spelling
    ) -> dict[str, Any] | Command[Any] | list[Command[Any]]:
        request, repaired, attempts = self.request(state, runtime)
        with self._step(config):  # the run's config current first: it says who observes
            observer = watcher()
            onion = self.onions.sync(observer)
            outcome = onion(request, self._handler(attempts, observer, async_=False))
        update = self._update(outcome, repaired, attempts)
        return self.call.finish(update, config) if self.call.buffers else update

    async def acall(
        self,
        state: Any,
        runtime: Any,
        config: Optional[RunnableConfig] = None,  # noqa: UP045 - langgraph injects by this spelling
    ) -> dict[str, Any] | Command[Any] | list[Command[Any]]:
        """Async model node (``config`` made current on Python 3.10)."""
        request, repaired, attempts = self.request(state, runtime)
        with self._step(config):  # the run's config current first: it says who observes
            observer = watcher()
            onion = self.onions.async_(observer)
            outcome = await onion(request, self._handler(attempts, observer, async_=True))
        update = self._update(outcome, repaired, attempts)
        return await self.call.afinish(update, config) if self.call.buffers else update
