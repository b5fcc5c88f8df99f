"""funcware.hooks.middleware: the AgentMiddleware base class and hook_impls()."""

from __future__ import annotations

import asyncio
import inspect
import os
import sys
from dataclasses import dataclass
from typing import Any, get_args

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime
from support import hi
from typing_extensions import NotRequired

from funcware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
    before_model,
    create_agent,
    hook_config,
)
from funcware.hooks.middleware import HOOKS, NODE_HOOKS, WRAP_HOOKS, HookImpl, hook_impls
from funcware.testing import ScriptedChatModel


class MyState(AgentState[Any]):
    count: NotRequired[int]


@dataclass
class MyContext:
    user: str


class Plain(AgentMiddleware):
    pass


STATE: AgentState[Any] = {"messages": []}
RUNTIME: Runtime[None] = Runtime(context=None)


def test_hook_name_tables() -> None:
    assert NODE_HOOKS == ("before_agent", "before_model", "after_model", "after_agent")
    assert WRAP_HOOKS == ("wrap_model_call", "wrap_tool_call")
    assert HOOKS == NODE_HOOKS + WRAP_HOOKS


def test_defaults() -> None:
    middleware = Plain()
    assert middleware.name == "Plain"
    assert middleware.state_schema is AgentState
    assert list(middleware.tools) == []
    assert hook_impls(middleware) == {}
    assert repr(middleware) == "<Plain middleware 'Plain'>"


def test_name_setter_is_per_instance() -> None:
    renamed, other = Plain(), Plain()
    renamed.name = "custom"
    assert renamed.name == "custom"
    assert other.name == "Plain"


async def test_default_hooks_do_nothing_and_pass_through() -> None:
    middleware = Plain()
    request: ModelRequest[None] = ModelRequest(
        model=GenericFakeChatModel(messages=iter([])), messages=[]
    )
    response = ModelResponse(result=[AIMessage("done")])

    async def ahandler(_: ModelRequest[None]) -> ModelResponse[Any]:
        return response

    for hook in NODE_HOOKS:
        assert getattr(middleware, hook)(STATE, RUNTIME) is None
        assert await getattr(middleware, "a" + hook)(STATE, RUNTIME) is None
    assert middleware.wrap_model_call(request, lambda r: response) is response
    assert await middleware.awrap_model_call(request, ahandler) is response
    assert middleware.wrap_tool_call("call", lambda r: f"ran {r}") == "ran call"  # type: ignore[arg-type,return-value]


def test_generic_subscription() -> None:
    assert get_args(AgentMiddleware[MyState])[0] is MyState
    if sys.version_info >= (3, 11):  # 3.10's typing does not fill in TypeVar defaults
        assert len(get_args(AgentMiddleware[MyState])) == 3
    assert get_args(AgentMiddleware[MyState, MyContext, Any]) == (MyState, MyContext, Any)

    class Counting(AgentMiddleware[MyState, MyContext, Any]):
        state_schema = MyState
        tools = ({"name": "count", "description": "d", "parameters": {}},)

        def before_model(self, state: MyState, runtime: Runtime[MyContext]) -> dict[str, Any]:
            return {"count": state.get("count", 0) + 1}

    middleware = Counting()
    assert middleware.name == "Counting"
    assert middleware.state_schema is MyState
    assert [tool["name"] for tool in middleware.tools] == ["count"]  # type: ignore[index]
    assert middleware.before_model({"messages": [], "count": 1}, Runtime(context=MyContext("u")))
    assert list(hook_impls(middleware)) == ["before_model"]


class SyncOnly(AgentMiddleware):
    def after_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> None:
        return None

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        return handler(request)


class AsyncOnly(AgentMiddleware):
    async def abefore_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> None:
        return None


class Both(AgentMiddleware):
    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        return handler(request)

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        return await handler(request)


class Inherited(SyncOnly):
    async def aafter_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> None:
        return None


@pytest.mark.parametrize(
    ("cls", "expected"),
    [
        (SyncOnly, {"after_model": "sync", "wrap_tool_call": "sync"}),
        (AsyncOnly, {"before_agent": "async"}),
        (Both, {"wrap_model_call": "both"}),
        (Inherited, {"after_model": "sync", "after_agent": "async", "wrap_tool_call": "sync"}),
    ],
)
def test_hook_impls_reports_exactly_the_overridden_hooks(
    cls: type[AgentMiddleware], expected: dict[str, str]
) -> None:
    middleware = cls()
    impls = hook_impls(middleware)
    assert list(impls) == [hook for hook in HOOKS if hook in expected]  # HOOKS order
    for hook, flavour in expected.items():
        impl = impls[hook]  # type: ignore[index]
        assert impl.middleware is middleware
        assert impl.hook == hook
        assert (impl.sync is not None, impl.async_ is not None) == (
            flavour in ("sync", "both"),
            flavour in ("async", "both"),
        )
        if impl.sync is not None:
            assert impl.sync == getattr(middleware, hook)
        if impl.async_ is not None:
            assert impl.async_ == getattr(middleware, "a" + hook)


class Jumping(AgentMiddleware):
    @hook_config(can_jump_to=["end", "model"])
    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> None:
        return None

    @hook_config(can_jump_to=["end"])
    def after_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> None:
        return None

    @hook_config(can_jump_to=["tools"])
    async def aafter_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> None:
        return None

    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> None:
        return None


def test_jump_targets_come_from_hook_config_on_methods() -> None:
    impls = hook_impls(Jumping())
    assert impls["before_model"].can_jump_to == ("model", "end")  # canonical order
    assert impls["after_model"].can_jump_to == ("tools", "end")  # sync and async united
    assert impls["after_agent"].can_jump_to == ()


def test_hook_impl_label_and_where_for_a_class() -> None:
    middleware = SyncOnly()
    middleware.name = "renamed"
    impl = hook_impls(middleware)["after_model"]
    line = inspect.getsourcelines(SyncOnly.after_model)[1]
    assert impl.label == "renamed.after_model"
    assert impl.where == f"{__file__}:{line}"
    assert impl.describe() == (f"middleware 'renamed', hook after_model (defined at {impl.where})")


def test_hook_impl_where_points_at_the_users_function() -> None:
    line = inspect.currentframe().f_lineno + 2  # type: ignore[union-attr]

    async def watch(state: AgentState[Any]) -> None:
        return None

    impl = hook_impls(before_model(watch))["before_model"]
    assert impl.sync is None
    assert impl.where == f"{__file__}:{line}"
    assert impl.label == "watch.before_model"
    assert os.path.basename(__file__) in impl.describe()


def test_hook_impls_asks_a_composite_for_its_hooks() -> None:
    inner = SyncOnly()
    computed = {"after_model": HookImpl(inner, "after_model", inner.after_model, None)}

    class Composite(AgentMiddleware):
        def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> None:
            return None

        def __funcware_hooks__(self) -> dict[str, HookImpl]:
            return computed  # type: ignore[return-value]

    assert hook_impls(Composite()) is computed


def test_hook_config_on_a_wrap_method_is_refused() -> None:
    class Jumpy(AgentMiddleware):
        @hook_config(can_jump_to=["end"])
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            return handler(request)

    with pytest.raises(TypeError, match=r"Jumpy\.wrap_model_call .*only before_agent"):
        hook_impls(Jumpy())


# -- class hooks written as (self, state) -----------------------------------------


def test_class_node_hooks_may_take_state_alone_sync_and_async() -> None:
    class Greets(AgentMiddleware):
        def before_model(self, state: Any) -> dict[str, Any]:  # type: ignore[override]
            return {"messages": [HumanMessage(f"{len(state['messages'])} so far")]}

        async def aafter_model(self, state: Any) -> None:  # type: ignore[override]
            seen.append(state["messages"][-1].content)

    seen: list[str] = []
    agent = create_agent(ScriptedChatModel(responses=["a", "b"]), middleware=[Greets()])
    assert [m.content for m in agent.invoke(hi())["messages"]] == ["hi", "1 so far", "a"]
    result = asyncio.run(agent.ainvoke(hi()))
    assert [m.content for m in result["messages"]] == ["hi", "1 so far", "b"]
    assert seen == ["a", "b"]
