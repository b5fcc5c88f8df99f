"""``effects="strict"``: watch what each declared layer really does, refuse what it did not declare.

:func:`observed` wraps one hook's callables, once, at build time; only ``effects="strict"``
calls it, so the default costs nothing per call and the onion itself knows nothing of it.
What is watched: the state keys a hook (or a wrap's command) writes; the request fields a
model wrap changed before calling its handler; a tool wrap's change of the call's name or
arguments; whether a wrap's result is not its handler's (or was edited in place:
``*.answer.rewrite``) or is an answer where its handler raised (``*.error.recover``); how many
times a wrap called its handler (0: ``handler.skip``, 2 or more: ``handler.retry``); an
interrupt raised by the hook itself; and what a node hook does to ``state["messages"]``: a
``ToolMessage`` is ``messages.answer``, a ``RemoveMessage`` or a message with the id of one
already there ``messages.rewrite`` (``.calls`` if it adds or changes a tool call, else
``.text``), any other ``messages.append``. A hook that declares any of those is held to
each; one that declares only ``state.messages`` (the coarse name) may write messages any
way. Each hook is held to what it declares (per hook, when declared so). Reads cannot be
watched and are not.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from functools import wraps
from typing import Any

from langchain_core.messages import BaseMessage, RemoveMessage, ToolMessage
from langchain_core.messages.utils import convert_to_messages
from langgraph.errors import GraphInterrupt
from langgraph.types import Command

from funcware.compose.steps.keys import written_keys
from funcware.effects.declarations import REQUEST_FIELDS, Declaration
from funcware.errors import UndeclaredEffectError
from funcware.hooks.middleware import NODE_HOOKS, HookImpl
from funcware.hooks.types import ExtendedModelResponse, ModelResponse

__all__ = ["UndeclaredEffectError", "observed"]


class _Watch:
    """One call of one wrap hook: what it was given, what its handler saw and returned."""

    def __init__(self, impl: HookImpl, decl: Declaration, request: Any) -> None:
        self.impl, self.decl, self.request = impl, decl, request
        self.writes = decl.writes_in(impl.hook)
        self.calls = 0
        self.pending: UndeclaredEffectError | None = None
        self.escaped: BaseException | None = None
        self.last: Any = None
        self.last_content: Any = None
        model = impl.hook == "wrap_model_call"
        self.fields = _request_snapshot(request) if model else {}
        self.call = None if model else _call_snapshot(request.tool_call)

    def need(self, effect: str, what: str) -> None:
        if self.pending is None and effect not in self.writes:
            self.pending = _error(self.impl, self.decl, effect, what)
        if self.pending is not None:
            raise self.pending

    def before_handler(self, request: Any) -> None:
        self.calls += 1
        if self.calls == 2:
            self.need("handler.retry", "called its handler a second time")
        if self.impl.hook == "wrap_model_call":
            for name in _changed_fields(self.fields, request):
                self.need(f"request.{name}", f"changed request.{name} before calling its handler")
        elif _call_snapshot(request.tool_call) != self.call:
            self.need("tool.args", "changed the tool call's name or arguments")

    def after_handler(self, response: Any) -> None:
        self.escaped = None
        self.last = response
        self.last_content = contents_of(response)

    def failed(self, exc: BaseException) -> None:
        self.escaped = exc
        self.last = None

    def raised(self, exc: BaseException) -> None:
        if self.pending is not None and exc is not self.pending:
            raise self.pending from exc
        if isinstance(exc, GraphInterrupt) and exc is not self.escaped:
            self.need("interrupt", "raised an interrupt")

    def returned(self, result: Any) -> None:
        if self.pending is not None:
            raise self.pending
        own = result
        if self.calls == 0:
            self.need("handler.skip", "returned without calling its handler")
        elif self.impl.hook == "wrap_model_call":
            base = result.model_response if isinstance(result, ExtendedModelResponse) else result
            if self.escaped is not None and self.last is None:
                self.need("model.error.recover", "returned an answer where its handler raised")
            elif not _same_model_result(base, self.last, self.last_content):
                self.need(
                    "model.answer.rewrite", "returned a model result other than its handler's"
                )
            own = result.command if isinstance(result, ExtendedModelResponse) else None
        else:
            if self.escaped is not None and self.last is None:
                self.need("tool.error.recover", "returned an answer where its handler raised")
            elif result is not self.last or contents_of(result) != self.last_content:
                self.need("tool.answer.rewrite", "returned a tool result other than its handler's")
            else:
                own = None
        if own is not None and isinstance(own, Command):
            _check_writes(self.impl, self.decl, own)


def _error(impl: HookImpl, decl: Declaration, effect: str, what: str) -> UndeclaredEffectError:
    declared = ", ".join(sorted(decl.declared_writes(impl.hook))) or "nothing"
    return UndeclaredEffectError(
        f"{impl.describe()} {what}: effect {effect!r}, which it did not declare "
        f"(it declares writes=[{declared}]). Add {effect!r} to its writes= (the hook "
        "decorator's keyword or the class attribute), or stop doing it."
    )


def _check_writes(impl: HookImpl, decl: Declaration, result: object, state: object = None) -> None:
    writes = decl.writes_in(impl.hook)
    for key in written_keys(result):
        if key == "messages" and impl.hook in NODE_HOOKS:
            _check_messages(impl, decl, result, state)
        elif key == "messages" and writes & _MESSAGE_KINDS:
            continue  # a wrap's command: its messages are new whatever they are
        elif key != "jump_to" and f"state.{key}" not in writes:
            raise _error(impl, decl, f"state.{key}", f"wrote state key {key!r}")


_KINDS = {
    "messages.answer": "answered a pending tool call with a ToolMessage",
    "messages.rewrite.text": "replaced or removed a message already in the state",
    "messages.rewrite.calls": "added or changed a tool call of a message already in the state",
    "messages.append": "appended a message",
}
_MESSAGE_KINDS = frozenset(_KINDS) | {"messages.rewrite"}


def _check_messages(impl: HookImpl, decl: Declaration, result: object, state: object) -> None:
    """``messages`` written by a node hook: each kind of change declared (see the top)."""
    writes = decl.writes_in(impl.hook)
    fine = writes & _MESSAGE_KINDS
    if not fine:
        if "state.messages" not in writes:
            kinds = ", ".join(repr(k) for k in _message_effects(result, state))
            raise _error(impl, decl, "state.messages", f"wrote state key 'messages' (as {kinds})")
        return
    for effect in _message_effects(result, state):
        if effect not in fine:
            raise _error(impl, decl, effect, _KINDS[effect])


def _message_effects(result: object, state: object) -> list[str]:
    """The kinds of change (``messages.*``) a node-hook result makes to the messages."""
    update = result.update if isinstance(result, Command) else result
    if isinstance(update, Mapping):
        values = [update["messages"]] if "messages" in update else []
    elif isinstance(update, (list, tuple)):
        values = [p[1] for p in update if isinstance(p, tuple) and p and p[0] == "messages"]
    else:
        values = []
    items = [m for v in values for m in (v if isinstance(v, (list, tuple)) else [v])]
    current = state.get("messages", []) if isinstance(state, Mapping) else []
    known = {m.id: m for m in current if isinstance(m, BaseMessage) and m.id}
    found: list[str] = []
    for item in items:
        message = item if isinstance(item, BaseMessage) else _as_message(item)
        if isinstance(message, RemoveMessage):
            effect = "messages.rewrite.text"
        elif message is not None and message.id in known:
            effect = _rewrite(known[message.id], message)
        elif isinstance(message, ToolMessage):
            effect = "messages.answer"
        else:
            effect = "messages.append"
        if effect not in found:
            found.append(effect)
    return found


def _rewrite(old: BaseMessage, new: BaseMessage) -> str:
    """``messages.rewrite.calls`` if ``new`` adds or changes a tool call of ``old``."""
    before = {_call_key(c) for c in getattr(old, "tool_calls", None) or []}
    after = {_call_key(c) for c in getattr(new, "tool_calls", None) or []}
    return "messages.rewrite.text" if after <= before else "messages.rewrite.calls"


def _call_key(call: Any) -> tuple[Any, str, str]:
    return call.get("id"), str(call.get("name")), repr(call.get("args"))


def _as_message(item: object) -> BaseMessage | None:
    try:
        return convert_to_messages([item])[0]  # type: ignore[list-item]
    except (ValueError, TypeError, NotImplementedError):
        return None


def _request_snapshot(request: Any) -> dict[str, tuple[Any, Any]]:
    snap: dict[str, tuple[Any, Any]] = {}
    for name in REQUEST_FIELDS:
        value = getattr(request, name)
        snap[name] = (value, contents_of(value))
    return snap


def contents_of(value: Any) -> Any:
    """What an in-place edit would change: list items, dict items, a message's content
    (compared before and after a layer ran, here and by the run record)."""
    if isinstance(value, list):
        return [id(item) for item in value], [contents_of(v) for v in value]
    if isinstance(value, dict):  # nested lists, dicts and messages too (a tool call's args)
        return {
            key: contents_of(item) if isinstance(item, (list, dict, BaseMessage)) else item
            for key, item in value.items()
        }
    if isinstance(value, ModelResponse):
        return contents_of(value.result)
    if isinstance(value, BaseMessage):
        calls = getattr(value, "tool_calls", None)
        return copy.deepcopy(value.content), copy.deepcopy(calls)
    return None


def _changed_fields(snap: dict[str, tuple[Any, Any]], request: Any) -> list[str]:
    changed = []
    for name, (value, content) in snap.items():
        now = getattr(request, name)
        if isinstance(value, list) and isinstance(now, list):
            if contents_of(now) != content:
                changed.append(name)
        elif now is not value or contents_of(now) != content:
            changed.append(name)
    return changed


def _call_snapshot(call: Any) -> tuple[Any, Any]:
    return call.get("name"), copy.deepcopy(call.get("args"))


def _same_model_result(result: Any, last: Any, last_content: Any) -> bool:
    if isinstance(result, ModelResponse) and isinstance(last, ModelResponse):
        return (
            [id(m) for m in result.result] == [id(m) for m in last.result]
            and result.structured_response is last.structured_response
            and contents_of(result) == last_content
        )
    if isinstance(result, BaseMessage) and isinstance(last, ModelResponse):
        return (
            len(last.result) == 1
            and result is last.result[0]
            and contents_of(last.result) == last_content
        )
    return result is last and contents_of(result) == last_content


@contextlib.contextmanager
def _reported(report: Callable[[BaseException], None]) -> Iterator[None]:
    """What the block raises goes to ``report`` (which may raise another error instead),
    then on."""
    try:
        yield
    except BaseException as exc:
        report(exc)
        raise


def _node(impl: HookImpl, decl: Declaration) -> HookImpl:
    def check(result: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        _check_writes(impl, decl, result, args[0] if args else kwargs.get("state"))
        return result

    def interrupted(exc: BaseException) -> None:
        if isinstance(exc, GraphInterrupt) and "interrupt" not in decl.writes_in(impl.hook):
            raise _error(impl, decl, "interrupt", "raised an interrupt") from exc

    sync, async_ = impl.sync, impl.async_
    new_sync = new_async = None
    if sync is not None:

        @wraps(sync)
        def node(*args: Any, **kwargs: Any) -> Any:
            with _reported(interrupted):
                result = sync(*args, **kwargs)
            return check(result, args, kwargs)

        new_sync = node
    if async_ is not None:

        @wraps(async_)
        async def anode(*args: Any, **kwargs: Any) -> Any:
            with _reported(interrupted):
                result = await async_(*args, **kwargs)
            return check(result, args, kwargs)

        new_async = anode
    return replace(impl, sync=new_sync, async_=new_async)


def _wrap(impl: HookImpl, decl: Declaration) -> HookImpl:
    sync, async_ = impl.sync, impl.async_
    new_sync = new_async = None
    if sync is not None:

        @wraps(sync)
        def layer(request: Any, handler: Callable[[Any], Any]) -> Any:
            watch = _Watch(impl, decl, request)

            def watched(req: Any) -> Any:
                watch.before_handler(req)
                with _reported(watch.failed):
                    response = handler(req)
                watch.after_handler(response)
                return response

            with _reported(watch.raised):
                result = sync(request, watched)
            watch.returned(result)
            return result

        new_sync = layer
    if async_ is not None:

        @wraps(async_)
        async def alayer(request: Any, handler: Callable[[Any], Any]) -> Any:
            watch = _Watch(impl, decl, request)

            async def watched(req: Any) -> Any:
                watch.before_handler(req)
                with _reported(watch.failed):
                    response = await handler(req)
                watch.after_handler(response)
                return response

            with _reported(watch.raised):
                result = await async_(request, watched)
            watch.returned(result)
            return result

        new_async = alayer
    return replace(impl, sync=new_sync, async_=new_async)


def observed(impl: HookImpl, decl: Declaration | None) -> HookImpl:
    """``impl`` with its callables watched against ``decl``; undeclared layers unchanged."""
    if decl is None:
        return impl
    return _node(impl, decl) if impl.hook in NODE_HOOKS else _wrap(impl, decl)
