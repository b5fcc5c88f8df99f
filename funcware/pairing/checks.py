"""Where the pairing contract is checked: a node hook's ``messages`` write (in
:mod:`funcware.pairing.writes`), and what is sent to the model, blamed on the model wraps
only if the history they got kept it (the outermost wrap notes it)."""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from functools import partial, update_wrapper
from itertools import takewhile
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from funcware.compose.steps.model_call import Delegate, ModelCall
from funcware.hooks.middleware import HookImpl
from funcware.hooks.types import ModelRequest
from funcware.pairing.contract import TOOL, is_paired

__all__ = ["PairedModelCall", "check_node", "outermost"]

NodeCallable = Callable[..., Any]


def _written(result: object) -> tuple[object, object]:
    """What a node result writes to ``messages`` (``None``: nothing), and where it jumps."""
    update: object = result
    if isinstance(result, Command):
        if result.graph is not None:
            return None, None
        update = result.update
    if isinstance(update, (dict, Mapping)):  # a dict first: no ABC check
        return update.get("messages"), update.get("jump_to")
    if isinstance(update, Sequence) and not isinstance(update, str):  # (key, value) writes
        from funcware.pairing.writes import written_pairs

        return written_pairs(update)
    return None, None


def _checked(impl: HookImpl, state: Any, result: object, strict: bool) -> None:
    written, jump = _written(result)
    if (written is None or written == []) and jump != "end":
        return  # the write leaves the messages as they are
    from funcware.pairing.writes import check_write

    check_write(impl, state, written, jump, strict)


def check_node(
    impl: HookImpl, pair: tuple[NodeCallable, NodeCallable], strict: bool
) -> tuple[NodeCallable, NodeCallable]:
    """A node hook's graph callables, checking its write before langgraph applies it
    (partials, not closures: langgraph reads closures' variables when compiling)."""
    sync, async_ = pair
    checked = partial(_checked_call, sync, impl, strict)
    achecked = partial(_checked_acall, async_, impl, strict)
    checked.__signature__ = getattr(sync, "__signature__", None)  # type: ignore[attr-defined]
    achecked.__signature__ = getattr(async_, "__signature__", None)  # type: ignore[attr-defined]
    return checked, achecked


def _checked_call(
    node: NodeCallable, impl: HookImpl, strict: bool, state: Any, *args: Any, **kwargs: Any
) -> Any:
    result = node(state, *args, **kwargs)
    if result:  # None (or an empty dict or list) writes nothing
        _checked(impl, state, result, strict)
    return result


async def _checked_acall(
    node: NodeCallable, impl: HookImpl, strict: bool, state: Any, *args: Any, **kwargs: Any
) -> Any:
    result = await node(state, *args, **kwargs)
    if result:  # None (or an empty dict or list) writes nothing
        _checked(impl, state, result, strict)
    return result


_HISTORY: ContextVar[Sequence[BaseMessage] | None] = ContextVar(
    "funcware_pairing_history", default=None
)
"""The agent's history as the outermost model wrap received it (read only after a break)."""


def outermost(impl: HookImpl) -> HookImpl:
    """The outermost ``wrap_model_call`` layer, noting the history the wraps start from."""
    sync, async_ = impl.sync, impl.async_

    def layer(request: ModelRequest[Any], handler: Callable[..., Any]) -> Any:
        token = _HISTORY.set(request.state.get("messages"))
        try:
            return sync(request, handler)  # type: ignore[misc]
        finally:
            _HISTORY.reset(token)

    async def alayer(request: ModelRequest[Any], handler: Callable[..., Any]) -> Any:
        token = _HISTORY.set(request.state.get("messages"))
        try:
            return await async_(request, handler)  # type: ignore[misc]
        finally:
            _HISTORY.reset(token)

    # Named as the user's function, for errors (update_wrapper also sets __wrapped__).
    return dataclasses.replace(
        impl,
        sync=None if sync is None else update_wrapper(layer, sync, updated=()),
        async_=None if async_ is None else update_wrapper(alayer, async_, updated=()),
    )


class PairedModelCall(Delegate):
    """The model strategy that checks (or repairs) the messages it sends to the model."""

    def __init__(self, inner: ModelCall, repair: bool, strict: bool, wraps: list[str]) -> None:
        super().__init__(inner)
        self.repair = repair
        self.strict = strict
        self.wraps = wraps  # the agent's model wraps, described, outermost first
        self._last: tuple[AnyMessage, ...] = ()

    def _messages(self, messages: list[AnyMessage]) -> list[AnyMessage]:
        # What starts as the last paired history did (same objects) is paired: read its end.
        start = len(list(takewhile(bool, map(operator.is_, self._last, messages))))
        while start and messages[start - 1].type in TOOL:
            start -= 1
        start = max(start - 1, 0)
        if is_paired(messages[start:]):
            self._last = tuple(messages)
            return messages
        from funcware.pairing.breaks import history_break

        return history_break(messages, self.repair, self.strict, self.wraps, _HISTORY.get())

    def invoke(
        self, bound: Any, messages: list[AnyMessage], config: RunnableConfig | None
    ) -> AIMessage:
        return self.inner.invoke(bound, self._messages(messages), config)

    async def ainvoke(
        self, bound: Any, messages: list[AnyMessage], config: RunnableConfig | None
    ) -> AIMessage:
        return await self.inner.ainvoke(bound, self._messages(messages), config)
