"""Writes to state keys the agent does not have: dropped with one warning, or refused when strict.

Published middleware return keys no state schema declares, as LangChain (langgraph) drops
such a write without a word. funcware keeps the run going the same way, applies the rest of
the update, and warns once per middleware, hook and key, naming the fix;
``effects="strict"`` and the test kit raise ``UnknownStateKeyError`` instead.
"""

from __future__ import annotations

import inspect
import re
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command
from support import Runner, call, calls_tool
from typing_extensions import NotRequired

from funcware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    UnknownStateKeyError,
    UnknownStateKeyWarning,
    before_model,
    compose,
    create_agent,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.testing import ScriptedChatModel, run_hook

MODES = ["invoke", "ainvoke"]


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


class TurnCounterMiddleware(AgentMiddleware):
    """Written the way published packages write it: no state_schema, a key of its own."""

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any]:
        count = state.get("my_counter", 0) + 1
        return {"my_counter": count, "messages": [HumanMessage(f"turn {count}")]}


class AsyncTurnCounterMiddleware(AgentMiddleware):
    """The same, async-only."""

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any]:
        count = state.get("my_counter", 0) + 1
        return {"my_counter": count, "messages": [HumanMessage(f"turn {count}")]}


def line_of(obj: Any) -> str:
    """``file:line`` of a function or method, as funcware cites it."""
    code = inspect.unwrap(obj).__code__
    return f"{code.co_filename}:{code.co_firstlineno}"


@pytest.fixture
def caught() -> Iterator[list[warnings.WarningMessage]]:
    """Every warning raised in the test, none filtered out as a repeat."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        yield seen


def key_warnings(seen: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in seen if issubclass(w.category, UnknownStateKeyWarning)]


def who_wrote(message: str) -> tuple[str, ...]:
    """``(middleware, hook, key)`` a warning names."""
    found = re.search(r"middleware '(\w+)', hook (\w+) .* wrote state key '(\w+)'", message)
    assert found is not None, message
    return found.groups()


def tool_loop_model() -> ScriptedChatModel:
    return ScriptedChatModel(responses=[calls_tool(call("echo", {"text": "x"}, "e1")), "done"])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("cls", [TurnCounterMiddleware, AsyncTurnCounterMiddleware])
def test_a_published_style_class_writing_its_own_key_runs_and_warns_once(
    mode: str, cls: type[AgentMiddleware], caught: list[warnings.WarningMessage]
) -> None:
    agent = create_agent(tool_loop_model(), [echo], middleware=[cls()])
    result = Runner(mode)(agent)
    # the valid part of each update applied: both turns' messages are there; the counter
    # itself never reached the state, so it counted from 0 each turn (as on LangChain)
    assert [m.content for m in result["messages"] if isinstance(m, HumanMessage)] == [
        "hi",
        "turn 1",
        "turn 1",
    ]
    assert result["messages"][-1].content == "done"
    assert "my_counter" not in result  # dropped, as langgraph drops it
    # the hook ran twice; one warning for this middleware, hook and key
    [message] = key_warnings(caught)
    hook = "abefore_model" if cls is AsyncTurnCounterMiddleware else "before_model"
    assert f"middleware '{cls.__name__}', hook before_model" in message
    assert line_of(getattr(cls, hook)) in message
    assert "'my_counter'" in message
    assert "Declare it in a state_schema" in message and "AgentState" in message
    assert "effects='strict'" in message


def test_the_warning_suggests_the_closest_declared_key(
    caught: list[warnings.WarningMessage],
) -> None:
    @before_model
    def typo(state: Any) -> Any:
        return {"mesages": [AIMessage("lost")]}

    result = Runner("invoke")(create_agent(ScriptedChatModel(responses=["ok"]), middleware=[typo]))
    assert [m.content for m in result["messages"]] == ["hi", "ok"]
    [message] = key_warnings(caught)
    assert "middleware 'typo', hook before_model" in message
    assert "'mesages'" in message and "Did you mean 'messages'?" in message
    assert line_of(typo) in message


def test_one_warning_per_middleware_hook_and_key(caught: list[warnings.WarningMessage]) -> None:
    @before_model
    def first(state: Any) -> Any:
        return {"shared": 1, "own": 2}

    @before_model
    def second(state: Any) -> Any:
        return {"shared": 1}

    agent = create_agent(tool_loop_model(), [echo], middleware=[first, second])
    Runner("invoke")(agent)
    Runner("invoke")(create_agent(ScriptedChatModel(responses=["again"]), middleware=[first]))
    # first's hook ran twice in the tool loop: one warning per (middleware, hook, key)
    # within an agent; the second agent warns anew
    assert sorted(map(who_wrote, key_warnings(caught))) == [
        ("first", "before_model", "own"),
        ("first", "before_model", "own"),
        ("first", "before_model", "shared"),
        ("first", "before_model", "shared"),
        ("second", "before_model", "shared"),
    ]


@pytest.mark.parametrize("mode", MODES)
def test_a_node_hook_command_keeps_its_valid_part(
    mode: str, caught: list[warnings.WarningMessage]
) -> None:
    @before_model
    def commanding(state: Any) -> Any:
        return Command(update={"note": "x", "messages": [HumanMessage("kept")]})

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[commanding])
    result = Runner(mode)(agent)
    assert [m.content for m in result["messages"]] == ["hi", "kept", "ok"]
    assert "note" not in result
    [message] = key_warnings(caught)
    assert "'note'" in message and "middleware 'commanding', hook before_model" in message


@pytest.mark.parametrize("mode", MODES)
def test_a_model_wrap_command_keeps_its_valid_part(
    mode: str, caught: list[warnings.WarningMessage]
) -> None:
    class Tally(AgentMiddleware):
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            note = AIMessage("noted")
            return ExtendedModelResponse(
                handler(request), Command(update={"calls_seen": 1, "messages": [note]})
            )

        async def awrap_model_call(self, request: Any, handler: Any) -> Any:
            note = AIMessage("noted")
            return ExtendedModelResponse(
                await handler(request), Command(update={"calls_seen": 1, "messages": [note]})
            )

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[Tally()])
    result = Runner(mode)(agent)
    assert [m.content for m in result["messages"]] == ["hi", "ok", "noted"]
    assert "calls_seen" not in result
    [message] = key_warnings(caught)
    assert "middleware 'Tally', hook wrap_model_call" in message and "'calls_seen'" in message


@pytest.mark.parametrize("mode", MODES)
def test_a_tool_wrap_command_keeps_its_valid_part(
    mode: str, caught: list[warnings.WarningMessage]
) -> None:
    @wrap_tool_call
    def remember(request: Any, handler: Any) -> Any:
        result = handler(request)
        return Command(update={"messages": [result], "last_tool": "echo"})

    agent = create_agent(tool_loop_model(), [echo], middleware=[remember])
    result = Runner(mode)(agent)
    [reply] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert reply.content == "x" and result["messages"][-1].content == "done"
    assert "last_tool" not in result
    [message] = key_warnings(caught)
    assert "middleware 'remember', hook wrap_tool_call" in message and "'last_tool'" in message


def strict_cases() -> list[tuple[str, Any, Any]]:
    @wrap_model_call
    def tally(request: ModelRequest[Any], handler: Any) -> Any:
        return ExtendedModelResponse(handler(request), Command(update={"tally": 1}))

    @wrap_tool_call
    def remember(request: Any, handler: Any) -> Any:
        return Command(update={"messages": [handler(request)], "last_tool": "echo"})

    return [
        ("node hook", TurnCounterMiddleware(), "'my_counter'"),
        ("model wrap", tally, "middleware 'tally', hook wrap_model_call"),
        ("tool wrap", remember, "'last_tool'"),
    ]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", strict_cases(), ids=lambda c: c[0])
def test_effects_strict_refuses_the_write(mode: str, case: tuple[str, Any, Any]) -> None:
    _, middleware, says = case
    agent = create_agent(tool_loop_model(), [echo], middleware=[middleware], effects="strict")
    with pytest.raises(UnknownStateKeyError, match=says) as error:
        Runner(mode)(agent)
    assert "so langgraph would drop it" in str(error.value)


@pytest.mark.parametrize("mode", MODES)
def test_declared_keys_from_any_schema_are_accepted(
    mode: str, caught: list[warnings.WarningMessage]
) -> None:
    class Extra(AgentState):
        tally: NotRequired[int]
        last_tool: NotRequired[str]

    @wrap_model_call
    def tally(request: ModelRequest[Any], handler: Any) -> Any:
        return ExtendedModelResponse(handler(request), Command(update={"tally": 1}))

    @wrap_tool_call
    def remember(request: Any, handler: Any) -> Any:
        result = handler(request)
        assert isinstance(result, ToolMessage)
        return Command(update={"messages": [result], "last_tool": request.tool_call["name"]})

    agent = create_agent(
        tool_loop_model(), [echo], middleware=[compose(tally, remember)], state_schema=Extra
    )
    result = Runner(mode)(agent, {"messages": [HumanMessage("go")]})
    assert result["tally"] == 1 and result["last_tool"] == "echo"
    assert key_warnings(caught) == []


def test_compose_alone_does_not_check_keys() -> None:
    """Standalone, a composite cannot know the agent's schema, so it does not guess."""

    @wrap_model_call
    def tally(request: ModelRequest[Any], handler: Any) -> Any:
        return ExtendedModelResponse(handler(request), Command(update={"tally": 1}))

    request = ModelRequest(model=ScriptedChatModel(responses=[]), messages=[HumanMessage("x")])
    result = compose(tally).wrap_model_call(request, lambda r: AIMessage("ok"))
    assert isinstance(result, ExtendedModelResponse)
    assert result.command is not None and result.command.update == {"tally": 1}


# -- the test kit is strict -----------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_run_hook_refuses_a_key_the_middleware_does_not_declare(mode: Any) -> None:
    with pytest.raises(UnknownStateKeyError, match="'my_counter'"):
        run_hook(TurnCounterMiddleware(), "before_model", mode=mode)
    with pytest.raises(UnknownStateKeyError, match="'calls'"):
        run_hook(
            wrap_model_call(
                lambda request, handler: ExtendedModelResponse(
                    handler(request), Command(update={"calls": 1})
                ),
                name="counting",
            ),
            "wrap_model_call",
            responses=["ok"],
            mode=mode,
        )


def test_run_hook_accepts_keys_of_its_schema_or_the_agents() -> None:
    class Counted(AgentState):
        my_counter: NotRequired[int]

    class Declaring(TurnCounterMiddleware):
        state_schema = Counted

    assert run_hook(Declaring(), "before_model").update is not None
    # a key another middleware declares: give the agent's schema
    result = run_hook(TurnCounterMiddleware(), "before_model", state_schema=Counted)
    assert result.update is not None and result.update["my_counter"] == 1


def test_run_hook_with_effects_warn_behaves_like_the_agent(
    caught: list[warnings.WarningMessage],
) -> None:
    result = run_hook(TurnCounterMiddleware(), "before_model", effects="warn")
    assert result.update is not None and result.update["my_counter"] == 1
    [message] = key_warnings(caught)
    assert "'my_counter'" in message
