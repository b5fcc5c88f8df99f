"""Sync/async bridging in compose(): sync layers in async calls and async layers in sync calls.

A sync-only hook inside an async call runs on a worker thread (the event loop keeps
running) with a handler that drives the async rest of the onion on the caller's loop; an
async-only hook inside a sync call runs to completion on an event loop. Context variables
cross in both directions, and a mixed stack does the same thing however it is called.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from typing import Any

import pytest
import support
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.runtime import Runtime
from langgraph.types import Command

from funcware import (
    AgentMiddleware,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
    after_model,
    before_model,
    create_agent,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.compose import compose
from funcware.testing import ScriptedChatModel

RUNTIME: Runtime[None] = Runtime(context=None)
USER: contextvars.ContextVar[str] = contextvars.ContextVar("USER", default="nobody")


def request() -> ModelRequest[None]:
    return ModelRequest(
        model=GenericFakeChatModel(messages=iter([])), messages=[HumanMessage("hi")]
    )


def tool_request() -> ToolCallRequest:
    call = {"name": "t", "args": {}, "id": "1", "type": "tool_call"}
    return ToolCallRequest(tool_call=call, tool=None, state={}, runtime=None)  # type: ignore[arg-type]


def model(req: ModelRequest[None]) -> ModelResponse[Any]:
    return ModelResponse(result=[AIMessage(f"model saw {len(req.messages)}")])


async def amodel(req: ModelRequest[None]) -> ModelResponse[Any]:
    await asyncio.sleep(0)
    return model(req)


def texts(messages: Any) -> list[str]:
    return [m.content for m in messages]


class Where:
    """Records, per layer, what it saw: the thread, the running loop, the context var."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.threads: dict[str, threading.Thread] = {}
        self.loops: dict[str, asyncio.AbstractEventLoop | None] = {}
        self.users: dict[str, str] = {}

    def note(self, name: str) -> None:
        self.threads[name] = threading.current_thread()
        try:
            self.loops[name] = asyncio.get_running_loop()
        except RuntimeError:
            self.loops[name] = None
        self.users[name] = USER.get()

    def layer(self, name: str, flavour: str) -> AgentMiddleware[Any, Any, Any]:
        """A model wrap (sync or async def) that logs, adds a message and a command.

        Around its handler it sets ``USER`` to its own name, for the layers inside it.
        """

        def done(response: ModelResponse[Any]) -> Any:
            self.log.append(f"<{name}")
            command = Command(update={"messages": [AIMessage(name)], "plain": name})
            return ExtendedModelResponse(response, command)

        def sync_layer(req: ModelRequest[None], handler: Any) -> Any:
            self.note(name)
            self.log.append(f"{name}>")
            token = USER.set(name)
            response = handler(req.override(messages=[*req.messages, HumanMessage(name)]))
            USER.reset(token)
            return done(response)

        async def async_layer(req: ModelRequest[None], handler: Any) -> Any:
            self.note(name)
            self.log.append(f"{name}>")
            await asyncio.sleep(0)
            token = USER.set(name)
            response = await handler(req.override(messages=[*req.messages, HumanMessage(name)]))
            USER.reset(token)
            await asyncio.sleep(0)
            return done(response)

        return wrap_model_call(name=name)(sync_layer if flavour == "sync" else async_layer)

    def stack(self, flavours: str) -> AgentMiddleware[Any, Any, Any]:
        """``"sas"`` is compose(sync layer s0, async layer a1, sync layer s2)."""
        return compose(
            *(
                self.layer(f"{f}{i}", "sync" if f == "s" else "async")
                for i, f in enumerate(flavours)
            )
        )


def call(onion: AgentMiddleware[Any, Any, Any], mode: str) -> Any:
    if mode == "sync":
        return onion.wrap_model_call(request(), model)
    return asyncio.run(onion.awrap_model_call(request(), amodel))


# -- sync layers in async calls -------------------------------------------------------------


async def test_a_sync_layer_in_an_async_call_runs_on_a_worker_thread_without_blocking() -> None:
    loop_thread = threading.current_thread()
    seen: list[threading.Thread] = []

    @wrap_model_call
    def slow(req: ModelRequest[None], handler: Any) -> Any:
        seen.append(threading.current_thread())
        time.sleep(0.2)
        return handler(req)

    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0.01)

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    result = await compose(slow).awrap_model_call(request(), amodel)
    done.set()
    await ticking
    assert texts(result.result) == ["model saw 1"]
    assert seen[0] is not loop_thread
    assert ticks >= 5, f"the event loop was blocked: only {ticks} ticks in 0.2 s"


async def test_a_sync_layers_handler_drives_the_async_rest_on_the_callers_loop() -> None:
    where = Where()
    loop, loop_thread = asyncio.get_running_loop(), threading.current_thread()
    result = await where.stack("sa").awrap_model_call(request(), amodel)
    assert where.threads["s0"] is not loop_thread
    assert where.loops["s0"] is None
    assert where.threads["a1"] is loop_thread
    assert where.loops["a1"] is loop
    assert texts(result.model_response.result) == ["model saw 3"]
    assert texts(result.command.update["messages"]) == ["a1", "s0"]
    assert result.command.update["plain"] == "s0"


def test_an_async_layer_in_a_sync_call_runs_to_completion() -> None:
    where = Where()
    result = where.stack("as").wrap_model_call(request(), model)
    assert where.log == ["a0>", "s1>", "<s1", "<a0"]
    assert texts(result.model_response.result) == ["model saw 3"]
    assert texts(result.command.update["messages"]) == ["s1", "a0"]
    assert where.loops["a0"] is not None


async def test_a_sync_call_from_inside_a_running_loop_still_runs_async_layers() -> None:
    where = Where()
    result = where.stack("asa").wrap_model_call(request(), model)
    assert where.log == ["a0>", "s1>", "a2>", "<a2", "<s1", "<a0"]
    assert texts(result.model_response.result) == ["model saw 4"]
    assert where.loops["a0"] is not asyncio.get_running_loop()


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("flavours", ["sas", "asa", "ssa", "aas"])
def test_context_variables_reach_every_layer_across_every_crossing(
    mode: str, flavours: str
) -> None:
    where = Where()
    onion = where.stack(flavours)
    token = USER.set("alice")
    try:
        call(onion, mode)
    finally:
        USER.reset(token)
    names = list(where.users)
    assert names == [f"{f}{i}" for i, f in enumerate(flavours)]
    assert list(where.users.values()) == ["alice", *names[:-1]]
    assert USER.get() == "nobody"


@pytest.mark.parametrize("flavours", ["sas", "asa", "sss", "aaa", "ssaa", "aass"])
def test_a_mixed_stack_does_the_same_under_sync_and_async_calls(flavours: str) -> None:
    outcomes = []
    for mode in ("sync", "async"):
        where = Where()
        result = call(where.stack(flavours), mode)
        update = result.command.update
        outcomes.append(
            (
                where.log,
                texts(result.model_response.result),
                texts(update["messages"]),
                update["plain"],
            )
        )
    names = [f"{f}{i}" for i, f in enumerate(flavours)]
    expected_log = [f"{n}>" for n in names] + [f"<{n}" for n in reversed(names)]
    assert (
        outcomes[0]
        == outcomes[1]
        == (
            expected_log,
            [f"model saw {len(flavours) + 1}"],
            names[::-1],
            names[0],
        )
    )


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_tool_wraps_are_bridged_too(mode: str) -> None:
    where = Where()

    @wrap_tool_call
    def sync_tool_layer(req: ToolCallRequest, handler: Any) -> Any:
        where.note("sync")
        return handler(req)

    @wrap_tool_call
    async def async_tool_layer(req: ToolCallRequest, handler: Any) -> Any:
        where.note("async")
        result = await handler(req)
        return ToolMessage(f"{result.content}!", tool_call_id=result.tool_call_id)

    def tool(req: ToolCallRequest) -> ToolMessage:
        return ToolMessage("ran", tool_call_id="1")

    async def atool(req: ToolCallRequest) -> ToolMessage:
        return tool(req)

    onion = compose(async_tool_layer, sync_tool_layer)
    token = USER.set("bob")
    try:
        if mode == "sync":
            result = onion.wrap_tool_call(tool_request(), tool)
        else:
            result = asyncio.run(onion.awrap_tool_call(tool_request(), atool))
    finally:
        USER.reset(token)
    assert result.content == "ran!"
    assert where.users == {"async": "bob", "sync": "bob"}
    if mode == "async":
        assert where.loops["sync"] is None


# -- node hooks of a composite ---------------------------------------------------------------


def node_member(where: Where, hook: Any, name: str) -> AgentMiddleware[Any, Any, Any]:
    """A ``hook`` member, sync-only if ``name`` starts with "s", else async-only."""

    def update(state: dict[str, Any]) -> dict[str, Any]:
        where.note(name)
        where.log.append(f"{name} saw {texts(state['messages'])} {state.get('plain')}")
        return {"messages": [AIMessage(name)], "plain": name}

    async def async_member(state: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0)
        return update(state)

    return hook(name=name)(update if name.startswith("s") else async_member)


def run_before_model(onion: AgentMiddleware[Any, Any, Any], mode: str) -> Any:
    state = {"messages": [HumanMessage("hi")]}
    if mode == "sync":
        return onion.before_model(state, RUNTIME)  # type: ignore[arg-type]
    return asyncio.run(onion.abefore_model(state, RUNTIME))  # type: ignore[arg-type]


def test_an_async_only_member_runs_under_a_sync_before_model() -> None:
    where = Where()
    onion = compose(node_member(where, before_model, "s0"), node_member(where, before_model, "a1"))
    token = USER.set("carol")
    try:
        result = run_before_model(onion, "sync")
    finally:
        USER.reset(token)
    assert where.log == ["s0 saw ['hi'] None", "a1 saw ['hi', 's0'] s0"]
    assert texts(result["messages"]) == ["s0", "a1"]
    assert result["plain"] == "a1"
    assert where.users == {"s0": "carol", "a1": "carol"}
    assert where.loops["a1"] is not None


async def test_a_sync_only_member_runs_on_a_worker_thread_under_abefore_model() -> None:
    where = Where()

    @before_model(name="slow")
    def slow(state: dict[str, Any]) -> None:
        where.note("slow")
        time.sleep(0.2)

    onion = compose(slow, node_member(where, before_model, "a1"))
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    ticking = asyncio.create_task(ticker())
    token = USER.set("dave")
    try:
        result = await onion.abefore_model({"messages": [HumanMessage("hi")]}, RUNTIME)
    finally:
        USER.reset(token)
        ticking.cancel()
    assert ticks >= 5, f"the event loop was blocked: only {ticks} ticks in 0.2 s"
    assert where.threads["slow"] is not threading.current_thread()
    assert where.threads["a1"] is threading.current_thread()
    assert where.users == {"slow": "dave", "a1": "dave"}
    assert texts(result["messages"]) == ["a1"]


@pytest.mark.parametrize("flavours", ["sas", "asa"])
@pytest.mark.parametrize("hook", [before_model, after_model])
def test_mixed_node_members_do_the_same_under_sync_and_async_calls(
    hook: Any, flavours: str
) -> None:
    outcomes = []
    for mode in ("sync", "async"):
        where = Where()
        onion = compose(*(node_member(where, hook, f"{f}{i}") for i, f in enumerate(flavours)))
        state = {"messages": [HumanMessage("hi")]}
        token = USER.set(mode)
        try:
            if mode == "sync":
                result = getattr(onion, hook.__name__)(state, RUNTIME)
            else:
                result = asyncio.run(getattr(onion, "a" + hook.__name__)(state, RUNTIME))
        finally:
            USER.reset(token)
        assert set(where.users.values()) == {mode}
        outcomes.append((where.log, texts(result["messages"]), result["plain"]))
    names = [f"{f}{i}" for i, f in enumerate(flavours)]
    order = names if hook is before_model else names[::-1]
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][1:] == (order, order[-1])
    assert outcomes[0][0][-1] == f"{order[-1]} saw {['hi', *order[:-1]]} {order[-2]}"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_many_parallel_calls_through_alternating_sync_async_layers_do_not_deadlock() -> None:
    @wrap_tool_call
    def outer(request: Any, handler: Any) -> Any:
        time.sleep(0.01)
        return handler(request)

    @wrap_tool_call
    async def middle(request: Any, handler: Any) -> Any:
        return await handler(request)

    @wrap_tool_call
    def inner(request: Any, handler: Any) -> Any:
        return handler(request)

    count = 80  # more than any fixed-size bridge pool of 64 could hold
    model = ScriptedChatModel(
        responses=[
            support.calls_tool(
                *(support.call("add", {"a": i, "b": 1}, f"c{i}") for i in range(count))
            ),
            "ok",
        ]
    )
    agent = create_agent(model, [add], middleware=[outer, middle, inner])

    async def run() -> Any:
        return await asyncio.wait_for(agent.ainvoke(support.hi()), timeout=60)

    result = asyncio.run(run())
    assert sum(isinstance(m, ToolMessage) for m in result["messages"]) == count
