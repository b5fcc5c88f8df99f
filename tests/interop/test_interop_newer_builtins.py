"""LangChain 1.5's newer built-ins run in funcware agents and inside ``compose()``, as on LangChain.

``ModelRefusalMiddleware`` and ``ToolErrorMiddleware`` are driven the way LangChain's unit
tests drive them, on both ``funcware.create_agent`` and LangChain's. Then all five newer
built-ins (those two, ``AutoModeMiddleware``, ``ModelRouterMiddleware``,
``ProviderToolSearchMiddleware``; ``tests/interop/test_interop_catalog.py`` covers the last three
alone) are combined: as one ``compose()`` in a funcware agent against the same list in
LangChain's, as a ``compose()`` unit-tested alone with a stub handler, and all together
under ``effects="strict"``, where their declared effects are watched.

Needs the ``langchain`` extra; skipped without it, failed when ``FUNCWARE_REQUIRE_LANGCHAIN=1``.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import interrupt
from pydantic import BaseModel, Field
from support import call, calls_tool, require_langchain
from test_interop_catalog import (
    AnthropicScripted,
    ScriptedDecisions,
    catalog_tools,
    decisions,
    noul,
    route,
    router,
)

import funcware
from funcware import ModelRequest, ToolCallRequest, compose
from funcware.testing import ScriptedChatModel

lc_agents = require_langchain("langchain.agents")
lc_mw = require_langchain("langchain.agents.middleware")
lc_exceptions = require_langchain("langchain_core.exceptions")

SIDES = ["funcware", "langchain"]
MODES = ["invoke", "ainvoke"]


def build(side: str, model: Any, tools: Sequence[Any] = (), **kw: Any) -> Any:
    """The same agent on either library."""
    make = funcware.create_agent if side == "funcware" else lc_agents.create_agent
    return make(model, list(tools), **kw)


def stack(side: str, *middleware: Any) -> list[Any]:
    """``middleware`` as one ``compose()`` for funcware, as the plain list for LangChain."""
    return [compose(*middleware)] if side == "funcware" else list(middleware)


def run(agent: Any, mode: str, inputs: Any = None, config: Any = None) -> dict[str, Any]:
    inputs = inputs if inputs is not None else {"messages": [HumanMessage("hi")]}
    if mode == "ainvoke":
        result: dict[str, Any] = asyncio.run(agent.ainvoke(inputs, config))
    else:
        result = agent.invoke(inputs, config)
    return result


def shape(result: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    return [(type(m).__name__, m.content, getattr(m, "status", None)) for m in result["messages"]]


def refusal(text: str = "I can't help with that.") -> AIMessage:
    return AIMessage(content=[{"type": "refusal", "refusal": text}])


# --- ModelRefusalMiddleware -----------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("side", SIDES)
def test_a_refusal_fails_the_run_with_model_refusal_error(side: str, mode: str) -> None:
    agent = build(
        side, ScriptedChatModel(responses=[refusal()]), middleware=[lc_mw.ModelRefusalMiddleware()]
    )
    with pytest.raises(lc_exceptions.ModelRefusalError, match=r"I can.t help with that\."):
        run(agent, mode)


@pytest.mark.parametrize("side", SIDES)
def test_an_ordinary_answer_passes_the_refusal_check(side: str) -> None:
    agent = build(
        side, ScriptedChatModel(responses=["sure"]), middleware=[lc_mw.ModelRefusalMiddleware()]
    )
    assert run(agent, "invoke")["messages"][-1].content == "sure"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("side", SIDES)
def test_a_fallback_outside_the_refusal_check_answers_instead(side: str, mode: str) -> None:
    primary = ScriptedChatModel(responses=[refusal()])
    backup = ScriptedChatModel(responses=["from the backup"])
    middleware = stack(side, lc_mw.ModelFallbackMiddleware(backup), lc_mw.ModelRefusalMiddleware())
    result = run(build(side, primary, middleware=middleware), mode)
    assert shape(result) == [("HumanMessage", "hi", None), ("AIMessage", "from the backup", None)]
    assert len(primary.calls) == len(backup.calls) == 1


class Verdict(BaseModel):
    ok: bool


@pytest.mark.parametrize("side", SIDES)
def test_a_refusal_instead_of_structured_output_is_a_refusal_error(side: str) -> None:
    # the model refuses where a ProviderStrategy expects JSON: the parse fails inside the
    # handler, and the middleware turns that validation error into the refusal it was
    strategy = (
        funcware if side == "funcware" else require_langchain("langchain.agents.structured_output")
    ).ProviderStrategy(Verdict)
    agent = build(
        side,
        ScriptedChatModel(responses=[refusal("No.")]),
        middleware=[lc_mw.ModelRefusalMiddleware()],
        response_format=strategy,
    )
    with pytest.raises(lc_exceptions.ModelRefusalError, match=r"No\."):
        run(agent, "invoke")


# --- ToolErrorMiddleware --------------------------------------------------------------


def failing_tools(raised: list[str]) -> list[BaseTool]:
    @tool
    def divide(a: int, b: int) -> float:
        """Divide a by b."""
        raised.append("divide")
        return a / b

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        raised.append("lookup")
        raise KeyError(key)

    return [divide, lookup]


def describe_error(exc: Exception, request: Any) -> str | None:
    if isinstance(exc, ZeroDivisionError):
        return f"`{request.tool_call['name']}` failed ({type(exc).__name__}); fix the input."
    return None


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("side", SIDES)
def test_a_handled_tool_error_goes_back_to_the_model(side: str, mode: str) -> None:
    raised: list[str] = []
    model = ScriptedChatModel(
        responses=[calls_tool(call("divide", {"a": 1, "b": 0}, "c1")), "sorry"]
    )
    middleware = [lc_mw.ToolErrorMiddleware(describe_error)]
    result = run(build(side, model, failing_tools(raised), middleware=middleware), mode)
    [reply] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert (reply.content, reply.status, reply.name, reply.tool_call_id) == (
        "`divide` failed (ZeroDivisionError); fix the input.",
        "error",
        "divide",
        "c1",
    )
    assert model.calls[1].messages[-1].content == reply.content
    assert result["messages"][-1].content == "sorry"


@pytest.mark.parametrize("side", SIDES)
def test_an_unhandled_tool_error_propagates(side: str) -> None:
    model = ScriptedChatModel(responses=[calls_tool(call("lookup", {"key": "k"}, "c1"))])
    middleware = [lc_mw.ToolErrorMiddleware(describe_error)]
    with pytest.raises(KeyError, match="'k'"):
        run(build(side, model, failing_tools([]), middleware=middleware), "invoke")


@pytest.mark.parametrize("side", SIDES)
def test_tools_outside_the_filter_are_not_handled(side: str) -> None:
    model = ScriptedChatModel(responses=[calls_tool(call("divide", {"a": 1, "b": 0}, "c1"))])
    middleware = [lc_mw.ToolErrorMiddleware(lambda exc, req: "handled", tools=["lookup"])]
    with pytest.raises(ZeroDivisionError):
        run(build(side, model, failing_tools([]), middleware=middleware), "invoke")


@pytest.mark.parametrize("side", SIDES)
def test_the_async_handler_serves_the_async_path_only(side: str) -> None:
    seen: list[str] = []

    async def aon_error(exc: Exception, request: Any) -> str:
        seen.append(type(exc).__name__)
        return "async handled"

    def agent() -> Any:
        model = ScriptedChatModel(
            responses=[calls_tool(call("divide", {"a": 1, "b": 0}, "c1")), "ok"]
        )
        middleware = [lc_mw.ToolErrorMiddleware(aon_error=aon_error)]
        return build(side, model, failing_tools([]), middleware=middleware)

    result = run(agent(), "ainvoke")
    [reply] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert reply.content == "async handled" and seen == ["ZeroDivisionError"]
    with pytest.raises(RuntimeError, match="ToolErrorMiddleware has no sync `on_error`"):
        run(agent(), "invoke")


@pytest.mark.parametrize("side", SIDES)
def test_an_interrupt_in_a_tool_is_not_turned_into_an_error(side: str) -> None:
    @tool
    def confirm(action: str) -> str:
        """Ask a person to confirm."""
        return f"{action}: {interrupt('go ahead?')}"

    model = ScriptedChatModel(responses=[calls_tool(call("confirm", {"action": "x"}, "c1"))])
    middleware = [lc_mw.ToolErrorMiddleware(lambda exc, req: "swallowed")]
    agent = build(side, model, [confirm], middleware=middleware, checkpointer=InMemorySaver())
    result = run(agent, "invoke", config={"configurable": {"thread_id": "t"}})
    assert [i.value for i in result["__interrupt__"]] == ["go ahead?"]
    assert not [m for m in result["messages"] if isinstance(m, ToolMessage)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("side", SIDES)
def test_tool_errors_surface_after_an_inner_retry_gives_up(side: str, mode: str) -> None:
    raised: list[str] = []
    model = ScriptedChatModel(responses=[calls_tool(call("divide", {"a": 1, "b": 0}, "c1")), "ok"])
    retry = lc_mw.ToolRetryMiddleware(
        max_retries=2, on_failure="error", initial_delay=0, retry_on=(ZeroDivisionError,)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the documented pairing builds without a warning
        middleware = stack(side, lc_mw.ToolErrorMiddleware(describe_error), retry)
        agent = build(side, model, failing_tools(raised), middleware=middleware)
    result = run(agent, mode)
    assert raised == ["divide"] * 3
    [reply] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert reply.status == "error" and "ZeroDivisionError" in str(reply.content)


# --- all five, combined -----------------------------------------------------------------


class DecisionsByTool(ScriptedDecisions):
    """Answers by the tool call asked about: a tool node runs its calls concurrently, so
    they ask in any order."""

    by_tool: dict[str, Any] = Field(default_factory=dict)

    def _classify(self, state: Any, questions: dict[str, Any]) -> Any:
        self.seen.append({"state": state, "questions": questions})
        answer = self.by_tool[state["tool_call"]["name"]]
        return decisions.ClassifierResponse(model=self.model, answers=answer)


@pytest.mark.parametrize("mode", MODES)
def test_auto_mode_and_tool_errors_in_one_compose_match_langchain(mode: str) -> None:
    def outcome(side: str) -> list[tuple[str, Any, Any]]:
        raised: list[str] = []
        classifier = DecisionsByTool(by_tool={"lookup": noul(0.9), "divide": noul(0.1)})
        model = ScriptedChatModel(
            responses=[
                calls_tool(
                    call("lookup", {"key": "secret"}, "c1"),
                    call("divide", {"a": 1, "b": 0}, "c2"),
                ),
                "ok",
            ]
        )
        middleware = stack(
            side,
            lc_mw.ToolErrorMiddleware(describe_error),
            lc_mw.AutoModeMiddleware(tools=["lookup", "divide"], classifier=classifier),
        )
        result = run(build(side, model, failing_tools(raised), middleware=middleware), mode)
        assert raised == ["divide"]  # the risky lookup never ran
        return shape(result)

    ours = outcome("funcware")
    assert ours == outcome("langchain")
    blocked, handled = [m for m in ours if m[0] == "ToolMessage"]
    assert "classified as risky" in blocked[1] and blocked[2] == "error"
    assert "ZeroDivisionError" in handled[1] and handled[2] == "error"


@pytest.mark.parametrize("mode", MODES)
def test_router_fallback_and_refusal_in_one_compose_match_langchain(mode: str) -> None:
    def outcome(side: str) -> tuple[list[tuple[str, Any, Any]], tuple[int, int, int]]:
        default = ScriptedChatModel(responses=[])
        deep = ScriptedChatModel(responses=[refusal()])
        backup = ScriptedChatModel(responses=["from the backup"])
        classifier = ScriptedDecisions(answers=[route("deep")], seen=[])
        middleware = stack(
            side,
            router(classifier, ScriptedChatModel(responses=[]), deep),
            lc_mw.ModelFallbackMiddleware(backup),
            lc_mw.ModelRefusalMiddleware(),
        )
        result = run(build(side, default, middleware=middleware), mode)
        return shape(result), (len(default.calls), len(deep.calls), len(backup.calls))

    ours = outcome("funcware")
    assert ours == outcome("langchain")
    assert ours[0][-1] == ("AIMessage", "from the backup", None)
    assert ours[1] == (0, 1, 1)


@pytest.mark.parametrize("mode", MODES)
def test_tool_search_and_refusal_in_one_compose_match_langchain(mode: str) -> None:
    def outcome(side: str) -> tuple[list[list[str]], list[tuple[str, Any, Any]]]:
        model = AnthropicScripted(
            responses=[calls_tool(call("lookup_order", {"order_id": "7"}, "c1")), "done"],
            bound=[],
        )
        middleware = stack(
            side,
            lc_mw.ModelRefusalMiddleware(),
            lc_mw.ProviderToolSearchMiddleware(searchable_tools=["lookup_order"]),
        )
        result = run(build(side, model, catalog_tools(), middleware=middleware), mode)
        deferred = [
            [t.name for t in tools[:-1] if (t.extras or {}).get("defer_loading")]
            for tools in model.bound
        ]
        return deferred, shape(result)

    ours = outcome("funcware")
    assert ours == outcome("langchain")
    assert ours[0] == [["send_email", "lookup_order"]] * 2
    assert ours[1][-1] == ("AIMessage", "done", None)


def test_a_compose_of_the_newer_built_ins_unit_tests_with_a_stub_handler() -> None:
    model_layers = compose(lc_mw.ModelRefusalMiddleware(), lc_mw.ProviderToolSearchMiddleware())
    request = ModelRequest(model=ScriptedChatModel(responses=[]), messages=[HumanMessage("x")])
    with pytest.raises(lc_exceptions.ModelRefusalError):
        model_layers.wrap_model_call(request, lambda r: refusal())
    answer = model_layers.wrap_model_call(request, lambda r: AIMessage("fine"))
    assert answer.result[0].content == "fine"

    tool_layers = compose(
        lc_mw.ToolErrorMiddleware(describe_error),
        lc_mw.AutoModeMiddleware(
            tools=["divide"], classifier=ScriptedDecisions(answers=[noul(0.0)], seen=[])
        ),
    )
    tool_request = ToolCallRequest(
        tool_call=call("divide", {"a": 1, "b": 0}, "c1"),
        tool=None,
        state={"messages": []},
        runtime=None,
    )

    def divide_by_zero(req: Any) -> Any:
        raise ZeroDivisionError

    async def adivide_by_zero(req: Any) -> Any:
        raise ZeroDivisionError

    reply = tool_layers.wrap_tool_call(tool_request, divide_by_zero)
    assert isinstance(reply, ToolMessage) and reply.status == "error"
    tool_layers = compose(lc_mw.ToolErrorMiddleware(describe_error))
    areply = asyncio.run(tool_layers.awrap_tool_call(tool_request, adivide_by_zero))
    assert areply.content == reply.content


@pytest.mark.parametrize("mode", MODES)
def test_all_five_together_under_effects_strict(mode: str) -> None:
    raised: list[str] = []
    model = AnthropicScripted(
        responses=[calls_tool(call("get_weather", {"city": "Oslo"}, "c1")), "done"], bound=[]
    )
    classifier = ScriptedDecisions(answers=[route("fast"), noul(0.1)], seen=[])
    tools = [*catalog_tools(), *failing_tools(raised)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the stack builds without a warning
        agent = funcware.create_agent(
            ScriptedChatModel(responses=[]),
            tools,
            middleware=[
                router(classifier, model, ScriptedChatModel(responses=[])),
                lc_mw.ModelRefusalMiddleware(),
                lc_mw.ProviderToolSearchMiddleware(searchable_tools=["lookup_order"]),
                lc_mw.ToolErrorMiddleware(describe_error),
                lc_mw.AutoModeMiddleware(tools=["get_weather"], classifier=classifier),
            ],
            effects="strict",
        )
    result = run(agent, mode)
    [reply] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert (reply.content, reply.status) == ("sunny in Oslo", "success")
    assert result["messages"][-1].content == "done"
    assert result["model_route"].choice == "fast"


def test_the_table_orders_tool_errors_outside_retries_and_tool_search_inside_fallbacks() -> None:
    retry = lc_mw.ToolRetryMiddleware(max_retries=1, on_failure="error")
    with pytest.raises(funcware.MiddlewareOrderError, match="ToolErrorMiddleware must sit"):
        funcware.create_agent(
            ScriptedChatModel(responses=[]),
            middleware=[retry, lc_mw.ToolErrorMiddleware(describe_error)],
        )
    fallback = lc_mw.ModelFallbackMiddleware(ScriptedChatModel(responses=[]))
    search = lc_mw.ProviderToolSearchMiddleware(searchable_tools=["lookup_order"])
    with pytest.raises(funcware.MiddlewareOrderError, match="ProviderToolSearchMiddleware must"):
        funcware.create_agent(ScriptedChatModel(responses=[]), middleware=[search, fallback])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        funcware.create_agent(ScriptedChatModel(responses=[]), middleware=[fallback, search])
