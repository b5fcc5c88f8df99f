"""The hook test kit: run one middleware's hook, without an agent, and look at what it did.

``run_hook(mw, "before_model", state=...)`` gives the update, the jump and the command a
node hook returned; ``run_hook(mw, "wrap_model_call", responses=[...])`` runs a wrap
hook around a scripted handler and counts its calls. ``mode="async"`` runs the same
through the async path (bridged exactly as in an agent), so one test covers both.
Strict by default (``effects="strict"``): a middleware that declares its effects is held
to them (``UndeclaredEffectError``), and a write to a state key its ``state_schema`` does
not declare raises ``UnknownStateKeyError`` (an agent would drop it, with a warning).
A hook that calls ``interrupt()`` is reported as paused, or resumed with ``resume=``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, get_type_hints

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.types import Command, Interrupt

from funcware.compose.graph.schema import reducer_keys
from funcware.compose.steps.failures import passed_through
from funcware.compose.steps.keys import StateKeys
from funcware.compose.steps.nodes import run_node, run_node_async
from funcware.compose.stream.hidden import runnable_config
from funcware.compose.threads.bridge import run_coroutine_sync
from funcware.compose.wraps.onion import CallKind, build_async, build_sync
from funcware.compose.wraps.results import as_model_response, model_calls, tool_calls
from funcware.compose.wraps.updates import as_update, merge_writes
from funcware.effects.declarations import declarations
from funcware.effects.strict import observed
from funcware.hooks.middleware import HOOKS, NODE_HOOKS, HookImpl, HookName, hook_impls
from funcware.hooks.types import AgentState, ModelRequest, ToolCallRequest
from funcware.hooks.wording import plural
from funcware.testing.paused import NO_RESUME, Paused, arun_in_graph, run_in_graph
from funcware.testing.scripted import ScriptedChatModel

__all__ = ["HookResult", "arun_hook", "run_hook"]

Mode = Literal["sync", "async"]
Effects = Literal["strict", "warn"]


@dataclass
class HookResult:
    """What one hook call did."""

    hook: HookName
    returned: Any
    """The hook's return value as funcware saw it (node hooks) or the final response."""
    update: dict[str, Any] | None = None
    """State update without ``jump_to`` (node hooks, or a wrap's merged command)."""
    jump: str | None = None
    """The ``jump_to`` target, if the hook jumped."""
    command: Command[Any] | None = None
    """A ``Command`` returned by a node hook, or the merged command of a model wrap."""
    handler_calls: int = 0
    """How many times a wrap hook called its handler."""
    requests: list[Any] = field(default_factory=list)
    """What the handler received, one entry per call (after the hook's changes)."""
    interrupts: tuple[Interrupt, ...] = ()
    """The interrupts the hook paused on (``.value`` is what it asked), if it did not end:
    then ``returned`` is ``None``."""


def _runtime(context: Any, store: Any) -> Runtime[Any]:
    return Runtime(context=context, store=store)


def _split(update: Any) -> tuple[dict[str, Any] | None, str | None]:
    if not isinstance(update, Mapping):
        return None, None
    rest = {k: v for k, v in update.items() if k != "jump_to"}
    return (rest or None), update.get("jump_to")


class _ScriptedHandler:
    """Replays ``responses`` (or calls ``handler``); counts and records the calls."""

    def __init__(
        self, hook: HookName, responses: Sequence[Any], handler: Callable[..., Any] | None
    ):
        self.hook = hook
        self.responses = list(responses)
        self.handler = handler
        self.requests: list[Any] = []

    def tail(self, request: Any) -> Any:
        """The innermost handler of an onion: the scripted answer (marked if it raises)."""
        with passed_through:
            return self.answer(request)

    async def atail(self, request: Any) -> Any:
        """The innermost handler of an async onion."""
        return self.tail(request)

    def answer(self, request: Any) -> Any:
        self.requests.append(request)
        if self.handler is not None:
            value = self.handler(request)
        else:
            index = len(self.requests) - 1
            if index >= len(self.responses):
                raise AssertionError(
                    f"the {self.hook} hook called its handler {plural(index + 1, 'time')}, but "
                    f"only {plural(len(self.responses), 'response was', 'responses were')} "
                    "scripted; add more to responses=[...]"
                )
            value = self.responses[index]
        if isinstance(value, BaseException):
            raise value
        if self.hook == "wrap_model_call":
            value = AIMessage(content=value) if isinstance(value, str) else value
            response = as_model_response(value)
            if response is None:
                raise TypeError(f"scripted model response {value!r} is not an AIMessage or str")
            return response
        if isinstance(value, str):
            call_id = request.tool_call["id"]
            return ToolMessage(content=value, tool_call_id=call_id, name=request.tool_call["name"])
        return value


def _with_ids(messages: list[Any]) -> list[Any]:
    """The messages, each with an id as in an agent (where ``add_messages`` gives one), so a
    hook that replaces a message by its id is seen rewriting it, not appending one. A
    message without an id is copied, never changed."""
    return [
        m.model_copy(update={"id": str(uuid.uuid4())})
        if isinstance(m, BaseMessage) and m.id is None
        else m
        for m in messages
    ]


def _default_request(hook: HookName, state: Any, runtime: Runtime[Any], tool_call: Any) -> Any:
    if hook == "wrap_model_call":
        messages = list(state.get("messages", [])) or [HumanMessage("hi")]
        return ModelRequest(
            model=ScriptedChatModel(responses=[]), messages=messages, state=state, runtime=runtime
        )
    call = tool_call or {"name": "tool", "args": {}, "id": "call-1", "type": "tool_call"}
    return ToolCallRequest(tool_call=call, tool=None, state=state, runtime=runtime)  # type: ignore[arg-type]


async def arun_hook(
    middleware: Any,
    hook: HookName,
    *,
    state: Mapping[str, Any] | None = None,
    request: Any = None,
    tool_call: Mapping[str, Any] | None = None,
    responses: Sequence[Any] = (),
    handler: Callable[[Any], Any] | None = None,
    context: Any = None,
    store: Any = None,
    effects: Effects = "strict",
    state_schema: type | None = None,
    resume: Any = NO_RESUME,
) -> HookResult:
    """Async :func:`run_hook` (the hook runs through funcware's async path)."""
    call = _HookCall.prepare(
        middleware, hook, state, request, tool_call, responses, handler, effects, state_schema
    )
    return call.report(await call.run_async(_runtime(context, store), resume), resume)


def run_hook(
    middleware: Any,
    hook: HookName,
    *,
    state: Mapping[str, Any] | None = None,
    request: Any = None,
    tool_call: Mapping[str, Any] | None = None,
    responses: Sequence[Any] = (),
    handler: Callable[[Any], Any] | None = None,
    context: Any = None,
    store: Any = None,
    mode: Mode = "sync",
    effects: Effects = "strict",
    state_schema: type | None = None,
    resume: Any = NO_RESUME,
) -> HookResult:
    """Run ``middleware``'s ``hook`` once, as an agent would, and report what it did.

    Node hooks get ``state`` (default: no messages) and a ``Runtime`` with ``context``
    and ``store``. Wrap hooks get ``request`` (default: one built from ``state``, or from
    ``tool_call`` for tool wraps) and a handler that replays ``responses`` (``AIMessage``,
    ``str`` or an exception for model calls; ``ToolMessage``, ``Command``, ``str`` or an
    exception for tool calls), or calls ``handler``. ``mode="async"`` runs the async path.

    ``effects="strict"`` (default) holds a declared middleware to its declaration and
    refuses a write to a state key that neither its ``state_schema`` nor ``state_schema``
    (the agent's, for keys other middleware declare) has, with ``UnknownStateKeyError``;
    ``effects="warn"`` does neither (an unknown key gets the agent's warning).

    The hook runs as the only node of a graph, so it can call ``interrupt()``: then the
    result's ``interrupts`` hold what it asked and ``returned`` is ``None``. With
    ``resume=answer`` the paused hook runs again from its start, as in an agent, and
    ``interrupt()`` returns ``answer`` (a second ``interrupt()`` pauses it again); the
    result is that second run's. ``resume`` given to a hook that never pauses is an error.
    """
    call = _HookCall.prepare(
        middleware, hook, state, request, tool_call, responses, handler, effects, state_schema
    )
    runtime = _runtime(context, store)
    if mode == "sync":
        return call.report(call.run_sync(runtime, resume), resume)
    return call.report(run_coroutine_sync(call.run_async(runtime, resume)), resume)


def _impl(middleware: Any, hook: HookName) -> Any:
    if hook not in HOOKS:
        raise ValueError(f"unknown hook {hook!r}; hooks are: {', '.join(HOOKS)}")
    impls = hook_impls(middleware)
    if hook not in impls:
        defined = ", ".join(impls) or "none"
        raise ValueError(
            f"middleware {getattr(middleware, 'name', middleware)!r} does not define "
            f"{hook} (it defines: {defined})"
        )
    return impls[hook]


def _state_keys(middleware: Any, state_schema: type | None, effects: Effects) -> StateKeys:
    """The keys the hook may write: ``AgentState``'s, its middleware's and ``state_schema``'s."""
    schemas = (AgentState, getattr(middleware, "state_schema", AgentState), state_schema)
    keys = {key for schema in schemas if schema is not None for key in get_type_hints(schema)}
    return StateKeys(keys, strict=effects == "strict")


def _node_result(hook: HookName, returned: Any) -> HookResult:
    command = returned if isinstance(returned, Command) else None
    update, jump = _split(command.update if command is not None else returned)
    return HookResult(hook, returned, update=update, jump=jump, command=command)


def _wrap_result(
    hook: HookName, outcome: tuple[Any, Any], scripted: _ScriptedHandler, reducers: frozenset[str]
) -> HookResult:
    response, writes = outcome
    command: Command[Any] | None = None
    update: dict[str, Any] | None = None
    if writes:
        merged = as_update(merge_writes(writes, reducers))
        command = Command(update=merged)
        update = merged if isinstance(merged, dict) else None
    return HookResult(
        hook,
        response,
        update=update,
        command=command,
        handler_calls=len(scripted.requests),
        requests=scripted.requests,
    )


@dataclass
class _HookCall:
    """One hook, what it will be given, and the scripted handler it will call."""

    middleware: Any
    hook: HookName
    impl: HookImpl
    state: dict[str, Any]
    request: Any
    tool_call: Any
    scripted: _ScriptedHandler
    keys: StateKeys

    @classmethod
    def prepare(
        cls,
        middleware: Any,
        hook: HookName,
        state: Mapping[str, Any] | None,
        request: Any,
        tool_call: Any,
        responses: Sequence[Any],
        handler: Callable[[Any], Any] | None,
        effects: Effects = "strict",
        state_schema: type | None = None,
    ) -> _HookCall:
        impl = _impl(middleware, hook)
        if effects == "strict":
            impl = observed(impl, declarations(middleware))
        scripted = _ScriptedHandler(hook, responses, handler)
        state_dict = dict(state or {"messages": []})
        if isinstance(state_dict.get("messages"), list):
            state_dict["messages"] = _with_ids(state_dict["messages"])
        keys = _state_keys(middleware, state_schema, effects)
        return cls(middleware, hook, impl, state_dict, request, tool_call, scripted, keys)

    def _request(self, runtime: Runtime[Any]) -> Any:
        if self.request is not None:
            return self.request
        return _default_request(self.hook, self.state, runtime, self.tool_call)

    def _kind(self) -> CallKind:
        return model_calls(self.keys) if self.hook == "wrap_model_call" else tool_calls(self.keys)

    def _result(self, outcome: tuple[Any, Any]) -> HookResult:
        reducers = reducer_keys(getattr(self.middleware, "state_schema", AgentState))
        return _wrap_result(self.hook, outcome, self.scripted, reducers)

    def report(self, ended: Paused[HookResult], resume: Any) -> HookResult:
        """The hook's result, or the interrupts it paused on."""
        if resume is not NO_RESUME and not ended.resumed:
            raise ValueError(
                f"run_hook got resume={resume!r}, but {self.impl.describe()} did not call "
                "interrupt(), so nothing could take the answer; drop resume=."
            )
        if ended.result is None:
            return HookResult(self.hook, None, interrupts=ended.interrupts)
        return ended.result

    def run_sync(self, runtime: Runtime[Any], resume: Any = NO_RESUME) -> Paused[HookResult]:
        """Run through the sync path, in a graph (see ``paused``)."""
        return run_in_graph(self.impl.label, partial(self._once, runtime), resume)

    async def run_async(self, runtime: Runtime[Any], resume: Any = NO_RESUME) -> Paused[HookResult]:
        """Run through the async path, in a graph (see ``paused``)."""
        return await arun_in_graph(self.impl.label, partial(self._aonce, runtime), resume)

    def _once(self, runtime: Runtime[Any], config: RunnableConfig) -> HookResult:
        self.scripted.requests.clear()  # a resumed hook runs again: the script replays
        if self.hook in NODE_HOOKS:
            returned = run_node(self.impl, self.state, runtime, config, known=self.keys)
            return _node_result(self.hook, returned)
        onion = build_sync([self.impl], self._kind())
        with runnable_config(config):
            return self._result(onion(self._request(runtime), self.scripted.tail))

    async def _aonce(self, runtime: Runtime[Any], config: RunnableConfig) -> HookResult:
        self.scripted.requests.clear()
        if self.hook in NODE_HOOKS:
            returned = await run_node_async(self.impl, self.state, runtime, config, known=self.keys)
            return _node_result(self.hook, returned)
        onion = build_async([self.impl], self._kind())
        with runnable_config(config):  # current for interrupt(), on Python 3.10 too
            return self._result(await onion(self._request(runtime), self.scripted.atail))
