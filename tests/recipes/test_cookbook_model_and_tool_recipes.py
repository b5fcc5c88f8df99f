"""Cookbook recipes, part A (model and tool wraps): each demo has the effect it promises.

The demos build their models with ``ScriptedChatModel``; the ``models`` fixture swaps in a
factory that keeps every model a demo creates, so a test can see what each model received.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.runtime import Runtime

from funcware import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
    compose,
    cookbook,
    create_agent,
    explain,
)
from funcware.cookbook.__main__ import main as tour
from funcware.testing import ScriptedChatModel

RECIPES_A = (
    "logging_around_model",
    "model_retry",
    "model_fallback",
    "prompt_from_context",
    "dynamic_model",
    "tool_selection",
    "tool_monitoring",
    "tool_call_limit",
    "tool_retry",
)

Models = Callable[[ModuleType], list[ScriptedChatModel]]


@pytest.fixture
def models(monkeypatch: pytest.MonkeyPatch) -> Models:
    """``models(module)``: the list that will hold every model ``module.demo()`` creates."""

    def track(module: ModuleType) -> list[ScriptedChatModel]:
        created: list[ScriptedChatModel] = []

        def make(**kwargs: Any) -> ScriptedChatModel:
            model = ScriptedChatModel(**kwargs)
            created.append(model)
            return model

        monkeypatch.setattr(module, "ScriptedChatModel", make)
        return created

    return track


def middleware_of(agent: Any, name: str) -> Any:
    """The middleware called ``name`` in an agent built by ``create_agent``."""
    (found,) = [m for m in explain(agent).plan.middleware if m.name == name]
    return found


def stub_request() -> ModelRequest[None]:
    return ModelRequest(model=ScriptedChatModel(responses=[]), messages=[HumanMessage("hi")])


def stub_tool_request(name: str = "t") -> ToolCallRequest:
    call = {"name": name, "args": {"x": 1}, "id": "c1", "type": "tool_call"}
    return ToolCallRequest(tool_call=call, tool=None, state={}, runtime=None)  # type: ignore[arg-type]


def failing(*errors: Exception, then: Any = None) -> tuple[Callable[[Any], Any], list[Any]]:
    """A handler raising ``errors`` one call at a time, then returning ``then``; and its calls."""
    seen: list[Any] = []

    def handler(request: Any) -> Any:
        seen.append(request)
        if len(seen) <= len(errors):
            raise errors[len(seen) - 1]
        return then

    return handler, seen


def ok_response(text: str = "ok") -> ModelResponse[Any]:
    return ModelResponse(result=[AIMessage(text)])


@pytest.mark.parametrize("name", RECIPES_A)
def test_the_recipe_runs_from_the_tour(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert tour([name]) == 0
    assert f"== {name}:" in capsys.readouterr().out


@pytest.mark.parametrize("name", RECIPES_A)
def test_the_recipe_is_registered_and_documented(name: str) -> None:
    module = cookbook.load(name)
    doc = module.__doc__ or ""
    assert name in cookbook.RECIPES
    assert "When to use" in doc and "How to adapt" in doc
    assert callable(module.demo)


# logging_around_model ------------------------------------------------------------------


def test_logging_logs_every_attempt_inside_the_retry(
    models: Models, caplog: pytest.LogCaptureFixture
) -> None:
    module = cookbook.load("logging_around_model")
    created = models(module)
    with caplog.at_level(logging.INFO, logger=module.logger.name):
        agent, state = module.demo()
    records = [r for r in caplog.records if r.name == module.logger.name]
    assert [r.levelname for r in records] == ["INFO", "WARNING", "INFO", "INFO", "INFO", "INFO"]
    messages = [r.getMessage() for r in records]
    assert messages[0] == "model call: 1 messages, tools ['lookup']"
    assert "ConnectionError: connection reset by peer" in messages[1]
    assert messages[3].endswith("tool calls lookup")
    assert messages[4] == "model call: 3 messages, tools ['lookup']"
    assert messages[5].endswith("text (33 chars)")
    (model,) = created
    assert len(model.calls) == 3
    assert state["messages"][-1].content == "Owls are nocturnal birds of prey."
    assert "retry_once ( log_model_call ( model ) )" in str(explain(agent))


def test_logging_outside_the_retry_logs_one_call(caplog: pytest.LogCaptureFixture) -> None:
    module = cookbook.load("logging_around_model")
    handler, seen = failing(ConnectionError("blip"), then=ok_response())
    stack = compose(module.log_model_call, module.retry_once)
    with caplog.at_level(logging.INFO, logger=module.logger.name):
        stack.wrap_model_call(stub_request(), handler)
    assert len(seen) == 2
    lines = [r.getMessage() for r in caplog.records if r.name == module.logger.name]
    assert len(lines) == 2 and lines[1].startswith("model answered")


def test_logging_reraises_the_error() -> None:
    module = cookbook.load("logging_around_model")
    handler, _ = failing(ValueError("bad request"))
    with pytest.raises(ValueError, match="bad request"):
        module.log_model_call(stub_request(), handler)


# model_retry ---------------------------------------------------------------------------


def test_model_retry_retries_twice_and_the_answer_arrives(models: Models) -> None:
    module = cookbook.load("model_retry")
    created = models(module)
    _, state = module.demo()
    (model,) = created
    assert len(model.calls) == 3  # two failures, then the answer
    assert state["messages"][-1].content == "Paris is the capital of France."
    assert [m.type for m in state["messages"]] == ["human", "ai"]


def test_model_retry_backs_off_exponentially_then_reraises() -> None:
    module = cookbook.load("model_retry")
    waits: list[float] = []
    retry = module.ModelRetry(max_retries=4, base_delay=1.0, max_delay=5.0, sleep=waits.append)
    handler, seen = failing(*(ConnectionError(str(i)) for i in range(5)))
    with pytest.raises(ConnectionError, match="4"):
        retry.wrap_model_call(stub_request(), handler)
    assert len(seen) == 5
    assert waits == [1.0, 2.0, 4.0, 5.0]


def test_model_retry_does_not_retry_other_errors() -> None:
    module = cookbook.load("model_retry")
    waits: list[float] = []
    retry = module.ModelRetry(retry_on=(ConnectionError,), sleep=waits.append)
    handler, seen = failing(ValueError("bad request"))
    with pytest.raises(ValueError):
        retry.wrap_model_call(stub_request(), handler)
    assert len(seen) == 1 and waits == []


# model_fallback ------------------------------------------------------------------------


def test_model_fallback_answers_with_the_backup(models: Models) -> None:
    module = cookbook.load("model_fallback")
    created = models(module)
    _, state = module.demo()
    primary, backup = created
    assert len(primary.calls) == 1 and len(backup.calls) == 1
    assert backup.calls[0].messages[-1].content == "What is the capital of France?"
    assert state["messages"][-1].content.startswith("(backup model)")


def test_model_fallback_tries_each_model_in_order_and_raises_the_last_error() -> None:
    module = cookbook.load("model_fallback")
    first, second = ScriptedChatModel(responses=[]), ScriptedChatModel(responses=[])
    handler, seen = failing(TimeoutError("primary"), ConnectionError("first"), KeyError("second"))
    with pytest.raises(KeyError) as raised:
        module.ModelFallback(first, second).wrap_model_call(stub_request(), handler)
    assert [request.model for request in seen[1:]] == [first, second]
    assert isinstance(raised.value.__context__, ConnectionError)
    assert isinstance(raised.value.__context__.__context__, TimeoutError)

    handler, seen = failing(TimeoutError("primary"), then=ok_response("saved"))
    result = module.ModelFallback(first, second).wrap_model_call(stub_request(), handler)
    assert result.result[0].content == "saved" and len(seen) == 2


# prompt_from_context -------------------------------------------------------------------


def test_prompt_from_context_puts_the_context_in_the_system_prompt(models: Models) -> None:
    module = cookbook.load("prompt_from_context")
    created = models(module)
    _, state = module.demo()
    (model,) = created
    ada, bo = (call.system_prompt or "" for call in model.calls)
    assert ada.startswith("You are a patient maths tutor.")
    assert "Ada" in ada and "French" in ada and "beginner" in ada
    assert "Bo" in bo and "German" in bo and "expert" in bo and "Ada" not in bo
    assert all(m.type != "system" for m in state["messages"])  # the prompt is not stored


def test_prompt_from_context_without_context_keeps_the_static_prompt() -> None:
    module = cookbook.load("prompt_from_context")
    request = stub_request().override(system_prompt="Base.", runtime=Runtime(context=None))
    assert module.prompt_from_context(request) == "Base."


# dynamic_model -------------------------------------------------------------------------


def test_dynamic_model_uses_the_large_model_for_the_long_conversation_only(
    models: Models,
) -> None:
    module = cookbook.load("dynamic_model")
    created = models(module)
    _, state = module.demo()
    small, large = created
    assert [len(call.messages) for call in small.calls] == [1, 3]
    assert [len(call.messages) for call in large.calls] == [5]
    answers = [m.content.split(")")[0] for m in state["messages"] if m.type == "ai"]
    assert answers == ["(small model", "(small model", "(large model"]


# tool_selection ------------------------------------------------------------------------


def test_tool_selection_shows_the_model_only_the_selected_tools(models: Models) -> None:
    module = cookbook.load("tool_selection")
    created = models(module)
    agent, state = module.demo()
    (model,) = created
    assert [sorted(call.tool_names) for call in model.calls] == [["add", "multiply"]] * 2
    assert state["toolset"] == "math"
    assert state["messages"][2].content == "42"  # the selected tool ran
    # The agent still knows every tool: the narrowing is per call.
    assert {t.name for t in explain(agent).plan.tools} == {
        "add",
        "multiply",
        "forecast",
        "find_flights",
    }


def test_tool_selection_without_a_toolset_keeps_every_tool() -> None:
    module = cookbook.load("tool_selection")
    tools = [module.add, module.multiply, module.forecast, module.find_flights]
    seen: list[ModelRequest[Any]] = []

    def handler(request: ModelRequest[Any]) -> ModelResponse[Any]:
        seen.append(request)
        return ok_response()

    base = stub_request().override(tools=list(tools))
    module.select_tools(base, handler)
    module.select_tools(base.override(state={"messages": [], "toolset": "travel"}), handler)
    assert [len(r.tools) for r in seen] == [4, 2]
    assert len(base.tools) == 4  # the original request is left alone
    with pytest.raises(ValueError, match="unknown toolset 'cooking'"):
        module.select_tools(base.override(state={"messages": [], "toolset": "cooking"}), handler)


# tool_monitoring -----------------------------------------------------------------------


def test_tool_monitoring_records_each_call_with_its_status() -> None:
    module = cookbook.load("tool_monitoring")
    agent, state = module.demo()
    monitor = middleware_of(agent, "ToolMonitor")
    first, second = monitor.records
    assert (first.name, first.args, first.status) == ("add", {"a": 2, "b": 3}, "success")
    assert first.detail == ""
    assert (second.name, second.args, second.status) == ("add", {"a": 2, "b": "x"}, "error")
    assert "b" in second.detail and second.detail == state["messages"][4].content
    assert all(r.seconds >= 0 for r in monitor.records)


def test_tool_monitoring_records_an_exception_and_reraises_it() -> None:
    module = cookbook.load("tool_monitoring")
    monitor = module.ToolMonitor()
    handler, _ = failing(TimeoutError("slow"))
    with pytest.raises(TimeoutError):
        monitor.wrap_tool_call(stub_tool_request("search"), handler)
    (record,) = monitor.records
    assert (record.name, record.status, record.detail) == ("search", "raised", "TimeoutError: slow")


# tool_call_limit -----------------------------------------------------------------------


@tool
def search(query: str) -> str:
    """Search."""
    return f"Results for {query!r}."


def search_turn(*queries: str) -> AIMessage:
    calls = [{"name": "search", "args": {"query": q}, "id": q} for q in queries]
    return AIMessage("", tool_calls=calls)


def test_tool_call_limit_refuses_the_third_call() -> None:
    module = cookbook.load("tool_call_limit")
    _, state = module.demo()
    tool_messages = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in tool_messages] == ["s1", "s2", "s3"]
    assert [m.status for m in tool_messages] == ["success", "success", "error"]
    assert tool_messages[2].text.startswith("Tool call limit reached (2 per run)")
    assert sum("Results for" in m.content for m in tool_messages) == 2  # the tool ran twice
    assert state["run_tool_calls"] == 2
    assert state["messages"][-1].content == "Owls are nocturnal and eat mice."


def test_tool_call_limit_counts_parallel_calls_and_resets_each_run() -> None:
    module = cookbook.load("tool_call_limit")
    model = ScriptedChatModel(
        responses=[search_turn("a", "b", "c"), "done 1", search_turn("d"), "done 2"]
    )
    agent = create_agent(
        model, [search], middleware=[module.ToolCallLimit(limit=2)], checkpointer=InMemorySaver()
    )
    config: RunnableConfig = {"configurable": {"thread_id": "t"}}
    state = agent.invoke({"messages": [HumanMessage("go")]}, config)
    assert [(m.tool_call_id, m.status) for m in state["messages"] if m.type == "tool"] == [
        ("c", "error"),
        ("a", "success"),
        ("b", "success"),
    ]
    state = agent.invoke({"messages": [HumanMessage("again")]}, config)
    assert state["messages"][-2].status == "success"  # a new run, a new budget
    assert state["run_tool_calls"] == 1


def test_tool_call_limit_can_end_the_run() -> None:
    module = cookbook.load("tool_call_limit")
    model = ScriptedChatModel(responses=[search_turn("a"), search_turn("b", "c")])
    limit: AgentMiddleware[Any, Any, Any] = module.ToolCallLimit(limit=2, exit_behavior="end")
    agent = create_agent(model, [search], middleware=[limit])
    state = agent.invoke({"messages": [HumanMessage("go")]})
    assert len(model.calls) == 2
    types = [m.type for m in state["messages"]]
    assert types == ["human", "ai", "tool", "ai", "tool", "tool", "ai"]
    assert [m.status for m in state["messages"][4:6]] == ["error", "error"]
    assert state["messages"][-1].content == "Stopping: the limit of 2 tool calls was reached."


# tool_retry ----------------------------------------------------------------------------


def test_tool_retry_turns_the_final_failure_into_an_error_message() -> None:
    module = cookbook.load("tool_retry")
    _, state = module.demo()
    by_id = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}
    quote, news = by_id["q1"], by_id["n1"]
    assert quote.status == "success" and quote.content == "ACME: 42.10 (attempt 3)"
    assert news.status == "error" and news.name == "get_news"
    assert "failed after 3 attempts (TimeoutError: news service timed out)" in news.content
    assert state["messages"][-1].type == "ai"  # the run completed with an answer
    assert state["messages"][-1].content.startswith("ACME trades at 42.10")


def test_tool_retry_leaves_other_tools_and_other_errors_alone() -> None:
    module = cookbook.load("tool_retry")
    waits: list[float] = []
    only_search = module.ToolRetry(tools=["search"], sleep=waits.append)
    handler, seen = failing(ConnectionError("down"))
    with pytest.raises(ConnectionError):
        only_search.wrap_tool_call(stub_tool_request("fetch"), handler)
    assert len(seen) == 1

    timeouts_only = module.ToolRetry(retry_on=(TimeoutError,), sleep=waits.append)
    handler, seen = failing(ValueError("bug"))
    with pytest.raises(ValueError):
        timeouts_only.wrap_tool_call(stub_tool_request("search"), handler)
    assert len(seen) == 1 and waits == []
