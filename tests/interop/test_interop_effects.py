"""Declared effects with LangChain's middleware: the table of built-ins' effects and constraints.

The two clashes reported upstream are caught when the agent is built, with the fix in the
message: langchain#40700 (``ModelRouterMiddleware`` and ``ModelFallbackMiddleware`` both
write ``request.model``; the router must sit outside) and langchain#40694
(``AutoModeMiddleware``'s classifier decides on a tool call that an inner
``HumanInTheLoopMiddleware`` edit can replace; auto mode must sit inside). Built-ins run
under ``effects="strict"`` as their table entries say, and a hand-written LangChain class
that declares its effects is watched like a funcware one. Needs the ``langchain`` extra.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage
from support import hi, require_langchain

from funcware import MiddlewareOrderError, UndeclaredEffectError, create_agent, explain
from funcware.effects.declarations import declarations
from funcware.testing import ScriptedChatModel

lc = require_langchain("langchain.agents.middleware")


def bare(cls: type) -> Any:
    """An instance for build-time checks only (the order check reads the class)."""
    return cls.__new__(cls)


def test_router_inside_fallback_is_refused_with_the_fix() -> None:
    fallback = lc.ModelFallbackMiddleware(ScriptedChatModel(responses=[]))
    router = bare(lc.ModelRouterMiddleware)
    with pytest.raises(MiddlewareOrderError) as info:
        create_agent(ScriptedChatModel(responses=[]), middleware=[fallback, router])
    text = str(info.value)
    assert "middleware 'ModelFallbackMiddleware' (" in text
    assert "must sit inside 'ModelRouterMiddleware' (" in text
    assert "a router inside the fallback would put the routed model back" in text
    assert "langchain#40700" in text
    assert "an order that satisfies every constraint: [ModelRouterMiddleware, " in text
    agent = create_agent(
        ScriptedChatModel(responses=[]), middleware=[fallback, router], order="auto"
    )
    assert [m.name for m in explain(agent).plan.middleware] == [
        "ModelRouterMiddleware",
        "ModelFallbackMiddleware",
    ]


def test_auto_mode_outside_human_review_is_refused_with_the_fix() -> None:
    hitl = lc.HumanInTheLoopMiddleware(interrupt_on={"echo": True})
    auto = bare(lc.AutoModeMiddleware)
    with pytest.raises(MiddlewareOrderError) as info:
        create_agent(ScriptedChatModel(responses=[]), middleware=[auto, hitl])
    text = str(info.value)
    assert "middleware 'AutoModeMiddleware' (" in text
    assert "must sit inside 'HumanInTheLoopMiddleware' (" in text
    assert "the edited call would run without being classified (langchain#40694)" in text
    assert "[HumanInTheLoopMiddleware, AutoModeMiddleware]" in text
    create_agent(ScriptedChatModel(responses=[]), middleware=[hitl, auto])


def test_the_table_declares_the_built_ins() -> None:
    retry = lc.ModelRetryMiddleware()
    decl = declarations(retry)
    assert decl is not None and decl.writes == {"handler.retry", "model.error.recover"}
    assert declarations(lc.ModelFallbackMiddleware(ScriptedChatModel(responses=[]))) is not None


def test_a_built_in_runs_under_strict_effects() -> None:
    failing = ScriptedChatModel(responses=[RuntimeError("down")])
    backup = ScriptedChatModel(responses=["from the backup"])
    agent = create_agent(failing, middleware=[lc.ModelFallbackMiddleware(backup)], effects="strict")
    assert agent.invoke(hi())["messages"][-1].content == "from the backup"


class Swapper(lc.AgentMiddleware):  # type: ignore[misc]
    """A LangChain class that declares it writes nothing, then changes the model."""

    writes = ()

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        return handler(request.override(model=ScriptedChatModel(responses=["other"])))

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        return await handler(request.override(model=ScriptedChatModel(responses=["other"])))


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_a_declared_langchain_class_is_watched(mode: str) -> None:
    import asyncio

    agent = create_agent(
        ScriptedChatModel(responses=[AIMessage("mine")]), middleware=[Swapper()], effects="strict"
    )
    with pytest.raises(UndeclaredEffectError, match=r"^middleware 'Swapper', hook wrap_model_call"):
        if mode == "invoke":
            agent.invoke(hi())
        else:
            asyncio.run(agent.ainvoke(hi()))


def test_a_stack_of_langchain_built_ins_builds_without_order_warnings() -> None:
    import warnings

    from funcware import MiddlewareOrderWarning

    stack = [
        lc.ModelCallLimitMiddleware(run_limit=2),
        lc.HumanInTheLoopMiddleware(interrupt_on={}),
        lc.ToolCallLimitMiddleware(run_limit=3),
        lc.ModelRetryMiddleware(),
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        create_agent(ScriptedChatModel(responses=["ok"]), [], middleware=stack)
    assert [w for w in caught if issubclass(w.category, MiddlewareOrderWarning)] == []
