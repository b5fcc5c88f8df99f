"""Structured output next to LangChain: its strategies, errors and middleware in funcware.

Every scenario runs in LangChain's ``create_agent`` and in funcware's with the same script
and the same assertions (the ``build`` fixture), sync and async: LangChain's own strategy
objects, its error classes caught by ``except`` clauses written for LangChain, the
structured-output retry middleware of LangChain's documentation (written here as a
LangChain class), ``ModelRefusalMiddleware`` with a provider strategy, and a LangChain
middleware that narrows the format per call.

Needs the ``langchain`` extra; skipped without it, failed when ``FUNCWARE_REQUIRE_LANGCHAIN=1``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from pydantic import BaseModel
from support import call, calls_tool, hi, require_langchain

import funcware
from funcware.interop import to_langchain
from funcware.testing import ScriptedChatModel

lc_agents = require_langchain("langchain.agents")
lc_so = require_langchain("langchain.agents.structured_output")
lc_mw = require_langchain("langchain.agents.middleware")
lc_exceptions = require_langchain("langchain_core.exceptions")


class Invoice(BaseModel):
    """An invoice total."""

    total: int


class Receipt(BaseModel):
    """A receipt number."""

    number: str


BUILDERS = {"langchain": lc_agents.create_agent, "funcware": funcware.create_agent}
STRATEGIES = {"langchain": lc_so, "funcware": funcware}
"""Where each library's own ToolStrategy/ProviderStrategy come from."""


class Build:
    """``build(model, **create_agent_kwargs)`` -> a function running that agent on input;
    ``build.so`` has the library's own strategy classes."""

    def __init__(self, lib: str, mode: str) -> None:
        self.lib, self.mode = lib, mode
        self.so: Any = STRATEGIES[lib]

    def __call__(self, model: Any, **kwargs: Any) -> Callable[[dict[str, Any]], Any]:
        agent = BUILDERS[self.lib](model, **kwargs)
        if self.mode == "async":
            return lambda inputs: asyncio.run(agent.ainvoke(inputs))
        return agent.invoke


@pytest.fixture(
    params=[(lib, mode) for lib in BUILDERS for mode in ("sync", "async")],
    ids=lambda p: "-".join(p),
)
def build(request: pytest.FixtureRequest) -> Build:
    """Each scenario in LangChain's agent and in funcware's, sync and async."""
    return Build(*request.param)


class StructuredRetry(lc_mw.AgentMiddleware):  # type: ignore[misc, name-defined]
    """The retry middleware LangChain documents for structured output, as a LangChain class.

    Catches LangChain's ``StructuredOutputError``, tells the model what went wrong in a
    human message and calls again, up to ``max_retries`` times.
    """

    def __init__(self, max_retries: int) -> None:
        super().__init__()
        self.max_retries = max_retries

    def _feedback(self, request: Any, exc: Any) -> None:
        request.messages.append(
            HumanMessage(f"Your answer was:\n{exc.ai_message.content}\n\nError: {exc}. Try again.")
        )

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        for attempt in range(self.max_retries + 1):
            try:
                return handler(request)
            except lc_so.StructuredOutputError as exc:
                if attempt == self.max_retries:
                    raise
                self._feedback(request, exc)
        raise AssertionError("unreachable")

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        for attempt in range(self.max_retries + 1):
            try:
                return await handler(request)
            except lc_so.StructuredOutputError as exc:
                if attempt == self.max_retries:
                    raise
                self._feedback(request, exc)
        raise AssertionError("unreachable")


def test_langchains_tool_strategy_is_accepted(build: Build) -> None:
    model = ScriptedChatModel(
        responses=[calls_tool(call("Invoice", {"total": "many"}, "a")), Invoice(total=3)]
    )
    strategy = lc_so.ToolStrategy(Invoice, handle_errors="Give total as an integer.")
    result = build(model, response_format=strategy)(hi())
    assert result["structured_response"] == Invoice(total=3)
    first = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert first.content == "Give total as an integer."


def test_langchains_provider_and_auto_strategies_are_accepted(build: Build) -> None:
    model = ScriptedChatModel(responses=[Invoice(total=5)])
    result = build(model, response_format=lc_so.ProviderStrategy(Invoice, strict=True))(hi())
    assert result["structured_response"] == Invoice(total=5)
    assert model.calls[0].response_format["json_schema"]["strict"] is True
    native = ScriptedChatModel(responses=[Invoice(total=6)], profile={"structured_output": True})
    result = build(native, response_format=lc_so.AutoStrategy(Invoice))(hi())
    assert result["structured_response"] == Invoice(total=6)
    assert native.calls[0].tool_names == []


def test_errors_are_caught_as_langchains_classes(build: Build) -> None:
    model = ScriptedChatModel(
        responses=[calls_tool(call("Invoice", {"total": 1}, "a"), call("Receipt", {}, "b"))]
    )
    strategy = build.so.ToolStrategy(Invoice | Receipt, handle_errors=False)
    with pytest.raises(lc_so.MultipleStructuredOutputsError) as caught:
        build(model, response_format=strategy)(hi())
    assert isinstance(caught.value, lc_so.StructuredOutputError)
    assert caught.value.tool_names == ["Invoice", "Receipt"]
    bad = ScriptedChatModel(responses=["no json"])
    with pytest.raises(lc_so.StructuredOutputValidationError) as invalid:
        build(bad, response_format=build.so.ProviderStrategy(Invoice))(hi())
    assert invalid.value.ai_message.content == "no json"


def test_funcware_errors_are_langchains_too() -> None:
    error = funcware.StructuredOutputValidationError("Invoice", ValueError("x"), AIMessage(""))
    from funcware.structured.errors import with_langchain_class

    twin = with_langchain_class(error)
    assert isinstance(twin, funcware.StructuredOutputValidationError)
    assert isinstance(twin, lc_so.StructuredOutputValidationError)
    assert (twin.tool_name, str(twin)) == ("Invoice", str(error))
    assert type(with_langchain_class(error)) is type(twin)  # one twin class per pair


@pytest.mark.parametrize(
    ("response_format", "script"),
    [
        (
            lambda so: so.ToolStrategy(Invoice, handle_errors=False),
            [calls_tool(call("Invoice", {"total": "?"}, "a")), Invoice(total=9)],
        ),
        (lambda so: so.ProviderStrategy(Invoice), ["about nine", '{"total": 9}']),
    ],
    ids=["tool", "provider"],
)
def test_the_documented_retry_middleware_retries_in_both_agents(
    build: Build, response_format: Callable[[Any], Any], script: list[Any]
) -> None:
    model = ScriptedChatModel(responses=script)
    run = build(model, response_format=response_format(build.so), middleware=[StructuredRetry(1)])
    result = run(hi())
    assert result["structured_response"] == Invoice(total=9)
    feedback = model.calls[1].messages[-1]
    assert isinstance(feedback, HumanMessage)
    assert "Error: Failed to parse structured output for tool 'Invoice'" in feedback.text


def test_the_retry_middleware_gives_up_after_its_budget(build: Build) -> None:
    model = ScriptedChatModel(responses=["one", "two"])
    run = build(
        model,
        response_format=build.so.ProviderStrategy(Invoice),
        middleware=[StructuredRetry(1)],
    )
    with pytest.raises(lc_so.StructuredOutputValidationError):
        run(hi())
    assert len(model.calls) == 2


def test_refusal_middleware_with_a_provider_strategy(build: Build) -> None:
    refusal = AIMessage(content=[{"type": "refusal", "refusal": "I won't total that."}])
    model = ScriptedChatModel(responses=[refusal])
    run = build(
        model,
        response_format=build.so.ProviderStrategy(Invoice),
        middleware=[lc_mw.ModelRefusalMiddleware()],
    )
    with pytest.raises(lc_exceptions.ModelRefusalError, match=r"I won't total that\."):
        run(hi())


def test_without_refusal_middleware_a_refusal_is_a_validation_error(build: Build) -> None:
    refusal = AIMessage(content=[{"type": "refusal", "refusal": "No."}])
    run = build(
        ScriptedChatModel(responses=[refusal]), response_format=build.so.ProviderStrategy(Invoice)
    )
    with pytest.raises(lc_so.StructuredOutputValidationError):
        run(hi())


class ReceiptsOnly(lc_mw.AgentMiddleware):  # type: ignore[misc, name-defined]
    """A LangChain middleware that narrows the agent's union to ``Receipt``."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Any] = []

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self.seen.append(request.response_format)
        return handler(request.override(response_format=lc_so.ToolStrategy(Receipt)))

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        self.seen.append(request.response_format)
        return await handler(request.override(response_format=lc_so.ToolStrategy(Receipt)))


def test_a_langchain_middleware_narrows_the_format(build: Build) -> None:
    narrow = ReceiptsOnly()
    model = ScriptedChatModel(responses=[Receipt(number="R-1")])
    run = build(
        model,
        response_format=build.so.ToolStrategy(Invoice | Receipt),
        middleware=[narrow],
    )
    assert run(hi())["structured_response"] == Receipt(number="R-1")
    assert model.calls[0].tool_names == ["Receipt"]


def test_a_langchain_middleware_sees_langchains_strategy_type() -> None:
    narrow = ReceiptsOnly()
    model = ScriptedChatModel(responses=[Receipt(number="R-2")])
    agent = funcware.create_agent(
        model, response_format=funcware.ToolStrategy(Invoice | Receipt), middleware=[narrow]
    )
    agent.invoke(hi())
    [seen] = narrow.seen
    assert isinstance(seen, lc_so.ToolStrategy)
    assert [spec.name for spec in seen.schema_specs] == ["Invoice", "Receipt"]


def test_funcware_middleware_with_structured_output_in_langchains_agent(build: Build) -> None:
    seen: list[Any] = []

    @funcware.wrap_model_call
    def watch(request: funcware.ModelRequest[Any], handler: Any) -> Any:
        response = handler(request)
        seen.append(response.structured_response)
        return response

    model = ScriptedChatModel(responses=[Invoice(total=2)])
    result = build(model, response_format=Invoice, middleware=[to_langchain(watch)])(hi())
    assert result["structured_response"] == seen[0] == Invoice(total=2)


def test_to_langchain_format_converts_funcware_strategies_once() -> None:
    from funcware.interop import to_langchain_format

    ours = funcware.ToolStrategy(Invoice | Receipt, tool_message_content="ok")
    theirs = to_langchain_format(ours)
    assert isinstance(theirs, lc_so.ToolStrategy)
    assert [s.name for s in theirs.schema_specs] == ["Invoice", "Receipt"]
    assert theirs.tool_message_content == "ok"
    assert to_langchain_format(ours) is theirs
    assert isinstance(to_langchain_format(funcware.AutoStrategy(Invoice)), lc_so.AutoStrategy)
    native = to_langchain_format(funcware.ProviderStrategy(Invoice, strict=True))
    assert isinstance(native, lc_so.ProviderStrategy) and native.schema_spec.strict is True
    assert to_langchain_format(Invoice) is Invoice
    assert to_langchain_format(None) is None


def test_each_kind_of_middleware_sees_its_own_librarys_strategy() -> None:
    users = lc_so.ToolStrategy(Invoice | Receipt)
    seen: list[Any] = []

    @funcware.wrap_model_call
    def ours(request: funcware.ModelRequest[Any], handler: Any) -> Any:
        seen.append(request.response_format)
        return handler(request)

    theirs = ReceiptsOnly()
    model = ScriptedChatModel(responses=[Receipt(number="R-3")])
    agent = funcware.create_agent(model, response_format=users, middleware=[ours, theirs])
    assert agent.invoke(hi())["structured_response"] == Receipt(number="R-3")
    assert isinstance(seen[0], funcware.ToolStrategy)
    assert [spec.name for spec in seen[0].schema_specs] == ["Invoice", "Receipt"]
    assert theirs.seen == [users]  # the user's own object, not a copy


def test_a_funcware_wrap_in_langchains_agent_sees_funcwares_strategy() -> None:
    seen: list[Any] = []

    @funcware.wrap_model_call
    def narrow(request: funcware.ModelRequest[Any], handler: Any) -> Any:
        seen.append(request.response_format)
        if isinstance(request.response_format, funcware.ToolStrategy):
            request = request.override(response_format=funcware.ToolStrategy(Invoice))
        return handler(request)

    model = ScriptedChatModel(responses=[Invoice(total=4)])
    agent = lc_agents.create_agent(
        model,
        response_format=lc_so.ToolStrategy(Invoice | Receipt),
        middleware=[to_langchain(narrow)],
    )
    assert agent.invoke(hi())["structured_response"] == Invoice(total=4)
    assert isinstance(seen[0], funcware.ToolStrategy)
    assert model.calls[0].tool_names == ["Invoice"]


@pytest.mark.parametrize(
    "name",
    [
        "gpt-4o",
        "openai:gpt-4o-mini",
        "gpt-4",
        "gpt-4.1-nano",
        "gpt-5",
        "gpt-5.2",
        "gpt-5.2-2025-12-11",
        "gpt-5.2-mini",
        "gpt-5.2-codex",
        "gpt-5.4-nano",
        "gpt-5.4-pro",
        "gpt-6-sol",
        "azure/gpt-5.5",
        "claude-sonnet-4-5-20250929",
        "anthropic:claude-opus-4-8",
        "claude-opus-4-1",
        "claude-haiku-4-5-20251001-v1:0",
        "claude-3-5-sonnet",
        "grok-4",
        "grok-4.1-fast",
        "grok-3",
        "grok-build",
        "gemini-2.5-pro",
        "llama-3.1-70b",
        "",
    ],
)
def test_the_native_choice_by_model_name_matches_langchain(name: str) -> None:
    from funcware.structured.runtime import supports_provider_strategy

    factory = require_langchain("langchain.agents.factory")
    assert supports_provider_strategy(name) == factory._supports_provider_strategy(name)

    class Named(ScriptedChatModel):
        model_name: str = name

    model = Named(responses=[])
    assert supports_provider_strategy(model) == factory._supports_provider_strategy(model)


@pytest.mark.parametrize(
    ("name", "tools"),
    [("gemini-2.5-pro", []), ("gemini-2.5-pro", ["t"]), ("gemini-3-pro", ["t"]), ("x", ["t"])],
)
def test_the_native_choice_by_profile_matches_langchain(name: str, tools: list[Any]) -> None:
    from funcware.structured.runtime import supports_provider_strategy

    factory = require_langchain("langchain.agents.factory")

    class Profiled(ScriptedChatModel):
        model_name: str = name

    model = Profiled(responses=[], profile={"structured_output": True})
    ours = supports_provider_strategy(model, tools)
    assert ours == factory._supports_provider_strategy(model, tools=tools)
    assert ours is not (name == "gemini-2.5-pro" and bool(tools))
