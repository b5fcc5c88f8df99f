"""Where the pairing contract is checked: a node hook's write, a model wrap's request, the
messages that reach the model.

A node hook's write is checked before langgraph applies it, on the messages it would
leave (the hook's state plus its ``messages`` write, as ``add_messages`` merges them); a
write that touches no ``messages`` costs one dict lookup. A ``wrap_model_call`` layer is
found at the model call: the outermost wrap notes the history the wraps received, and a
break the history did not have is blamed on the wraps. The model call checks what it
sends, and under ``tool_pairing="repair"`` sends the repaired history.
A break is reported by :mod:`funcware.pairing.breaks` (loaded only then).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    RemoveMessage,
    convert_to_messages,
)
from langchain_core.runnables import RunnableConfig
from langgraph.graph.message import add_messages
from langgraph.types import Command

from funcware.compose.steps.model_call import Delegate, ModelCall
from funcware.hooks.middleware import HookImpl
from funcware.hooks.types import ModelRequest
from funcware.pairing.contract import call_ids, is_paired, open_tail

__all__ = ["PairedModelCall", "check_node", "outermost"]

NodeCallable = Callable[..., Any]


def _written(result: object) -> tuple[object, object]:
    """What a node result writes to ``messages`` (``None``: nothing), and where it jumps."""
    update: object = result
    if isinstance(result, Command):
        if result.graph is not None:
            return None, None
        update = result.update
    if isinstance(update, Mapping):
        return update.get("messages"), update.get("jump_to")
    if isinstance(update, Sequence) and not isinstance(update, str):
        pairs = [p for p in update if isinstance(p, tuple) and len(p) == 2]
        written = [value for key, value in pairs if key == "messages"]
        jump = next((value for key, value in pairs if key == "jump_to"), None)
        if not written:
            return None, jump
        return [
            m for value in written for m in (value if isinstance(value, list) else [value])
        ], jump
    return None, None


def _applied(before: list[AnyMessage], written: object) -> tuple[list[AnyMessage], int]:
    """The messages ``add_messages`` would leave after ``written`` (``before`` untouched),
    and from where they can differ from ``before`` in pairing (an append: its open tail)."""
    items: list[Any] = written if isinstance(written, list) else [written]
    new: list[Any] = convert_to_messages(items)
    if any(isinstance(m, RemoveMessage) for m in new):
        merged: list[AnyMessage] = add_messages(before, [m.model_copy() for m in new])  # type: ignore[arg-type, assignment]
        return merged, 0
    after: list[AnyMessage] | None = None
    appended: list[AnyMessage] = []
    alike = True  # every replacement keeps the calls or answer of what it replaces
    for message in new:
        index = _position(before, message.id) if message.id is not None else None
        if index is None:
            appended.append(message)
            continue
        if after is None:
            after = list(before)
        alike = alike and call_ids(after[index]) == call_ids(message)
        after[index] = message  # replaced by id, in place
    if after is None:
        return [*before, *appended], open_tail(before)
    return [*after, *appended], open_tail(before) if alike else 0


def _position(messages: list[AnyMessage], message_id: str) -> int | None:
    """The index of the message with ``message_id`` (searched from the end, where a
    hook's rewrite usually lands), or ``None``."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].id == message_id:
            return index
    return None


def _checked(impl: HookImpl, state: Any, result: object, strict: bool) -> None:
    written, jump = _written(result)
    if (written is None or written == []) and jump != "end":
        return
    # The latest calls may wait for the tools only where the tools run next: after the
    # model (unless the hook ends the run), or on a jump to the tools.
    pending_ok = jump == "tools" or (impl.hook == "after_model" and jump != "end")
    before = list(state.get("messages") or ()) if isinstance(state, Mapping) else []
    after, start = (before, open_tail(before)) if written is None else _applied(before, written)
    if is_paired(after[start:], pending_ok):
        return
    if not is_paired(before[start:] if start else before, pending_ok or jump == "end"):
        return  # broken before this write (named where that happened)
    from funcware.pairing.breaks import WRITE_FIX, problems, report

    what = f"The write of {impl.describe()}"
    if jump == "end" and is_paired(after, pending_ok=True):
        what += " (it jumps to the end and leaves the latest tool calls unanswered)"
    report(what, problems(after, pending_ok), strict, WRITE_FIX)


def check_node(
    impl: HookImpl, pair: tuple[NodeCallable, NodeCallable], strict: bool
) -> tuple[NodeCallable, NodeCallable]:
    """A node hook's graph callables, checking its write before langgraph applies it."""
    sync, async_ = pair

    def checked(state: Any, *args: Any, **kwargs: Any) -> Any:
        result = sync(state, *args, **kwargs)
        _checked(impl, state, result, strict)
        return result

    async def achecked(state: Any, *args: Any, **kwargs: Any) -> Any:
        result = await async_(state, *args, **kwargs)
        _checked(impl, state, result, strict)
        return result

    checked.__signature__ = getattr(sync, "__signature__", None)  # type: ignore[attr-defined]
    achecked.__signature__ = getattr(async_, "__signature__", None)  # type: ignore[attr-defined]
    return checked, achecked


_HISTORY: ContextVar[Sequence[BaseMessage] | None] = ContextVar(
    "funcware_pairing_history", default=None
)
"""The agent's history as the outermost model wrap received it (read only after a break)."""


def outermost(impl: HookImpl) -> HookImpl:
    """The outermost ``wrap_model_call`` layer, noting the history the wraps start from.

    One frame, for the whole onion: a break found at the model call is then blamed on the
    wraps only if the history they received kept the contract.
    """
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

    return dataclasses.replace(
        impl,
        sync=None if sync is None else _like(layer, sync),
        async_=None if async_ is None else _like(alayer, async_),
    )


def _like(wrapper: Callable[..., Any], func: Callable[..., Any]) -> Callable[..., Any]:
    """``wrapper`` reporting ``func``'s name and place (errors name the user's function)."""
    for attr in ("__name__", "__qualname__", "__module__", "__doc__"):
        if hasattr(func, attr):
            setattr(wrapper, attr, getattr(func, attr))
    wrapper.__wrapped__ = func  # type: ignore[attr-defined]
    return wrapper


class PairedModelCall(Delegate):
    """The model strategy that checks (or repairs) the messages it sends to the model."""

    def __init__(self, inner: ModelCall, repair: bool, strict: bool, wraps: list[str]) -> None:
        super().__init__(inner)
        self.repair = repair
        self.strict = strict
        self.wraps = wraps
        """The agent's model wraps, described, outermost first."""

    def _messages(self, messages: list[AnyMessage]) -> list[AnyMessage]:
        if is_paired(messages):
            return messages
        from funcware.pairing.breaks import HISTORY_FIX, WRAPS_FIX, problems, repaired, report

        if self.repair:
            return repaired(messages)
        history = _HISTORY.get()
        if self.wraps and history is not None and is_paired(history):
            layers = "; ".join(self.wraps)
            what = (
                "The history sent to the model (the agent's history kept the contract, so "
                f"{'this model wrap' if len(self.wraps) == 1 else 'one of these model wraps'} "
                f"changed it: {layers})"
            )
            report(what, problems(messages), self.strict, WRAPS_FIX)
        else:
            report("The history sent to the model", problems(messages), self.strict, HISTORY_FIX)
        return messages

    def invoke(
        self, bound: Any, messages: list[AnyMessage], config: RunnableConfig | None
    ) -> AIMessage:
        return self.inner.invoke(bound, self._messages(messages), config)

    async def ainvoke(
        self, bound: Any, messages: list[AnyMessage], config: RunnableConfig | None
    ) -> AIMessage:
        return await self.inner.ainvoke(bound, self._messages(messages), config)
