"""compose() laws, checked with hypothesis over random stacks of recording middleware.

Associativity (nesting never changes behaviour), identity (``compose()`` changes nothing,
``compose(a)`` behaves as ``a``), and agreement with a small reference model of the onion.
Stacks mix sync-only, async-only, both-flavoured and wrap-less members; every law is
checked under sync and async calls.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import Command

from funcware import (
    AgentMiddleware,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
)
from funcware.compose import compose
from funcware.hooks.middleware import NODE_HOOKS, hook_impls

# The random stacks include layers that call their handler again after an answer, on
# purpose; each such run warns (DoubleCallWarning), which these laws do not check.
pytestmark = pytest.mark.filterwarnings("ignore::funcware.errors.DoubleCallWarning")

LAWS = settings(max_examples=50, deadline=None)
RUNTIME: Runtime[None] = Runtime(context=None)
MODES = ("sync", "async")
KINDS = ("sync", "async", "both", "node-only")


@dataclass(frozen=True)
class Spec:
    """What one recording middleware does."""

    name: str
    kind: str  # which flavours of hooks it defines; node-only has no wrap hooks
    calls: int  # how often its model wrap calls handler (0 = answers by itself)
    returns: str  # "response", "message" or "extended" (with a command)
    plain: bool  # whether its command (or node update) also sets the plain key
    updates: bool  # whether its node hooks return an update (else None)


class Recorder(AgentMiddleware):
    """Logs every hook call; the log does not depend on the flavour that ran."""

    def __init__(self, spec: Spec, log: list[str]) -> None:
        self.spec, self.log, self.name = spec, log, spec.name

    def _model(self, request: ModelRequest[None]) -> ModelRequest[None]:
        self.log.append(f"{self.name}> {len(request.messages)}")
        return request.override(messages=[*request.messages, HumanMessage(self.name)])

    def _result(self, response: ModelResponse[Any] | None) -> Any:
        self.log.append(f"<{self.name}")
        response = response or ModelResponse(result=[AIMessage(f"{self.name} answered")])
        if self.spec.returns == "message":
            return response.result[0]
        if self.spec.returns == "extended":
            update: dict[str, Any] = {"messages": [AIMessage(self.name)]}
            if self.spec.plain:
                update["plain"] = self.name
            return ExtendedModelResponse(response, Command(update=update))
        return ModelResponse(result=list(response.result))

    def _node(self, hook: str, state: dict[str, Any]) -> dict[str, Any] | None:
        self.log.append(f"{self.name}.{hook} {len(state['messages'])} {state.get('plain')}")
        if not self.spec.updates:
            return None
        update: dict[str, Any] = {"messages": [AIMessage(f"{self.name}.{hook}")]}
        if self.spec.plain:
            update["plain"] = self.name
        return update


class SyncNodes(Recorder):
    def before_model(self, state: Any, runtime: Any) -> Any:
        return self._node("before_model", state)

    def after_model(self, state: Any, runtime: Any) -> Any:
        return self._node("after_model", state)


class SyncRecorder(SyncNodes):
    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        request, response = self._model(request), None
        for _ in range(self.spec.calls):
            response = handler(request)
        return self._result(response)

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        self.log.append(f"{self.name} tool")
        return handler(request)


class AsyncRecorder(Recorder):
    async def abefore_model(self, state: Any, runtime: Any) -> Any:
        await asyncio.sleep(0)
        return self._node("before_model", state)

    async def aafter_model(self, state: Any, runtime: Any) -> Any:
        return self._node("after_model", state)

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        request, response = self._model(request), None
        for _ in range(self.spec.calls):
            await asyncio.sleep(0)
            response = await handler(request)
        return self._result(response)

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        self.log.append(f"{self.name} tool")
        return await handler(request)


class BothRecorder(SyncRecorder, AsyncRecorder):
    pass


CLASSES: dict[str, type[Recorder]] = {
    "sync": SyncRecorder,
    "async": AsyncRecorder,
    "both": BothRecorder,
    "node-only": SyncNodes,
}


def named(found: list[Spec]) -> list[Spec]:
    """``found`` with unique names ``m0, m1, ...`` in order."""
    return [replace(spec, name=f"m{i}") for i, spec in enumerate(found)]


def specs(min_size: int = 0, max_size: int = 5) -> st.SearchStrategy[list[Spec]]:
    one = st.builds(
        Spec,
        name=st.just(""),
        kind=st.sampled_from(KINDS),
        calls=st.sampled_from([1, 2, 0]),
        returns=st.sampled_from(["response", "message", "extended"]),
        plain=st.booleans(),
        updates=st.booleans(),
    )
    return st.lists(one, min_size=min_size, max_size=max_size).map(named)


def build(found: list[Spec], log: list[str]) -> list[AgentMiddleware[Any, Any, Any]]:
    return [CLASSES[s.kind](s, log) for s in found]


# -- running a middleware and describing what happened -------------------------------------


def request() -> ModelRequest[None]:
    return ModelRequest(
        model=GenericFakeChatModel(messages=iter([])), messages=[HumanMessage("hi")]
    )


def tool_request() -> ToolCallRequest:
    call = {"name": "t", "args": {}, "id": "1", "type": "tool_call"}
    return ToolCallRequest(tool_call=call, tool=None, state={}, runtime=None)  # type: ignore[arg-type]


def state() -> dict[str, Any]:
    return {"messages": [HumanMessage("hi")], "plain": "start"}


def shape_update(update: Any) -> dict[str, Any] | None:
    if not update:
        return None
    assert isinstance(update, dict)
    return {k: [m.content for m in v] if k == "messages" else v for k, v in update.items()}


def shape_model(result: Any) -> tuple[list[str], dict[str, Any] | None]:
    if isinstance(result, ExtendedModelResponse):
        return [m.content for m in result.model_response.result], shape_update(
            result.command.update if result.command else None
        )
    if isinstance(result, AIMessage):
        return [result.content], None  # type: ignore[list-item]
    assert isinstance(result, ModelResponse)
    return [m.content for m in result.result], None  # type: ignore[misc]


Outcome = tuple[Any, ...]


def run(middleware: AgentMiddleware[Any, Any, Any], log: list[str], mode: str) -> Outcome:
    """Call the model wrap, the tool wrap, before_model and after_model; describe it all."""
    log.clear()

    def model(req: ModelRequest[None]) -> ModelResponse[Any]:
        log.append(f"model {len(req.messages)}")
        return ModelResponse(result=[AIMessage(f"model saw {len(req.messages)}")])

    def tool(req: ToolCallRequest) -> ToolMessage:
        log.append("tool")
        return ToolMessage("tool ran", tool_call_id="1")

    async def amodel(req: ModelRequest[None]) -> ModelResponse[Any]:
        return model(req)

    async def atool(req: ToolCallRequest) -> ToolMessage:
        return tool(req)

    if mode == "sync":
        results = (
            middleware.wrap_model_call(request(), model),
            middleware.wrap_tool_call(tool_request(), tool),
            middleware.before_model(state(), RUNTIME),  # type: ignore[arg-type]
            middleware.after_model(state(), RUNTIME),  # type: ignore[arg-type]
        )
    else:

        async def all_async() -> tuple[Any, ...]:
            return (
                await middleware.awrap_model_call(request(), amodel),
                await middleware.awrap_tool_call(tool_request(), atool),
                await middleware.abefore_model(state(), RUNTIME),  # type: ignore[arg-type]
                await middleware.aafter_model(state(), RUNTIME),  # type: ignore[arg-type]
            )

        results = asyncio.run(all_async())
    model_result, tool_result, before, after = results
    return (
        list(log),
        shape_model(model_result),
        tool_result.content,  # type: ignore[union-attr]
        shape_update(before),
        shape_update(after),
    )


def reference(found: list[Spec]) -> Outcome:
    """What the onion must do, computed straight from the specs."""
    wraps = [s for s in found if s.kind != "node-only"]

    def model_call(index: int, count: int) -> tuple[list[str], str, list[Spec]]:
        """(trace, answer, layers whose commands count) of the layers from ``index`` in."""
        if index == len(wraps):
            return [f"model {count}"], f"model saw {count}", []
        spec = wraps[index]
        trace, answer, reached = [f"{spec.name}> {count}"], f"{spec.name} answered", []
        for _ in range(spec.calls):
            inner_trace, answer, reached = model_call(index + 1, count + 1)
            trace += inner_trace
        return [*trace, f"<{spec.name}"], answer, [*reached, spec]

    def nodes(hook: str, order: list[Spec]) -> tuple[list[str], dict[str, Any] | None]:
        trace, written, plain = [], [], "start"
        for spec in order:
            trace.append(f"{spec.name}.{hook} {1 + len(written)} {plain}")
            if spec.updates:
                written.append(f"{spec.name}.{hook}")
                plain = spec.name if spec.plain else plain
        update: dict[str, Any] = {"messages": written}
        if plain != "start":
            update["plain"] = plain
        return trace, update if written else None

    model_trace, answer, reached = model_call(0, 1)
    commanded = [s for s in reached if s.returns == "extended"]
    update: dict[str, Any] = {"messages": [s.name for s in commanded]}
    plains = [s.name for s in commanded if s.plain]
    if plains:
        update["plain"] = plains[-1]
    before_trace, before = nodes("before_model", found)
    after_trace, after = nodes("after_model", found[::-1])
    return (
        [*model_trace, *(f"{s.name} tool" for s in wraps), "tool", *before_trace, *after_trace],
        ([answer], update if commanded else None),
        "tool ran",
        before,
        after,
    )


def grouped(members: list[AgentMiddleware[Any, Any, Any]]) -> AgentMiddleware[Any, Any, Any]:
    return members[0] if len(members) == 1 else compose(*members)


# -- the laws -----------------------------------------------------------------------------


@LAWS
@given(specs())
def test_compose_agrees_with_a_reference_model_of_the_onion(found: list[Spec]) -> None:
    log: list[str] = []
    onion = compose(*build(found, log))
    expected = reference(found)
    for mode in MODES:
        assert run(onion, log, mode) == expected


@LAWS
@given(specs(0, 3), specs(0, 3), specs(0, 3))
def test_compose_is_associative(a: list[Spec], b: list[Spec], c: list[Spec]) -> None:
    log: list[str] = []
    members = build(named(a + b + c), log)
    x, y, z = (
        grouped(members[: len(a)]),
        grouped(members[len(a) : len(a) + len(b)]),
        grouped(members[len(a) + len(b) :]),
    )
    forms = [
        compose(compose(x, y), z),
        compose(x, compose(y, z)),
        compose(x, y, z),
        compose(compose(), x, compose(y, compose()), z),
    ]
    for mode in MODES:
        outcomes = [run(form, log, mode) for form in forms]
        assert all(outcome == outcomes[0] for outcome in outcomes)
    assert forms[0].members == forms[1].members == tuple(members)


@LAWS
@given(st.lists(st.text(max_size=8), max_size=3), st.sampled_from(MODES))
def test_compose_of_nothing_changes_nothing(texts: list[str], mode: str) -> None:
    empty = compose()
    req = ModelRequest(
        model=GenericFakeChatModel(messages=iter([])), messages=[HumanMessage(t) for t in texts]
    )
    response = ModelResponse(result=[AIMessage("model")])
    message = ToolMessage("tool ran", tool_call_id="1")
    seen: list[object] = []

    def model(r: ModelRequest[None]) -> ModelResponse[Any]:
        seen.append(r)
        return response

    def tool(r: ToolCallRequest) -> ToolMessage:
        seen.append(r)
        return message

    async def amodel(r: ModelRequest[None]) -> ModelResponse[Any]:
        return model(r)

    async def atool(r: ToolCallRequest) -> ToolMessage:
        return tool(r)

    tool_req = tool_request()
    node_state = {"messages": [HumanMessage(t) for t in texts]}
    if mode == "sync":
        results = [empty.wrap_model_call(req, model), empty.wrap_tool_call(tool_req, tool)]
        nodes = [getattr(empty, hook)(node_state, RUNTIME) for hook in NODE_HOOKS]
    else:

        async def all_async() -> tuple[list[Any], list[Any]]:
            wraps = [
                await empty.awrap_model_call(req, amodel),
                await empty.awrap_tool_call(tool_req, atool),
            ]
            nodes = [await getattr(empty, "a" + hook)(node_state, RUNTIME) for hook in NODE_HOOKS]
            return wraps, nodes

        results, nodes = asyncio.run(all_async())
    assert results[0] is response
    assert results[1] is message
    assert seen[0] is req
    assert seen[1] is tool_req
    assert nodes == [None] * len(NODE_HOOKS)
    assert hook_impls(empty) == {}
    assert list(empty.tools) == []


@LAWS
@given(specs(1, 1))
def test_compose_of_one_behaves_as_that_one(found: list[Spec]) -> None:
    log: list[str] = []
    [member] = build(found, log)
    impls = hook_impls(member)
    direct_modes = [
        mode
        for mode in MODES
        if all(
            getattr(impl, "sync" if mode == "sync" else "async_") is not None
            for impl in impls.values()
        )
    ]
    direct = run(member, log, direct_modes[0])
    assert direct == reference(found)
    for mode in MODES:
        assert run(compose(member), log, mode) == direct
