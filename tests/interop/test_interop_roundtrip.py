"""funcware middleware inside LangChain: ``to_langchain`` and ``langchain.agents.create_agent``.

A stack of funcware middleware (decorated, class and composite; a jump, a retrying model
wrap, a tool wrap, a command writing a custom field, a private field, a dynamic prompt,
sync-only and async-only hooks) runs in ``funcware.create_agent`` and, converted by
``to_langchain``, in LangChain's ``create_agent``: same final state, same model calls,
sync and async. Every cookbook recipe does the same. Then what the converted middleware
is made of, and where the two libraries deliberately differ.

Needs the ``langchain`` extra; skipped without it, failed when ``FUNCWARE_REQUIRE_LANGCHAIN=1``
(CI).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import InvalidUpdateError
from langgraph.types import Command, interrupt
from support import require_langchain
from typing_extensions import NotRequired

from funcware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    PrivateStateAttr,
    ToolCallRequest,
    after_agent,
    after_model,
    before_model,
    compose,
    cookbook,
    create_agent,
    dynamic_prompt,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.errors import InvalidJumpError
from funcware.hooks.middleware import HOOKS
from funcware.interop import to_langchain, to_langchain_format
from funcware.testing import ScriptedChatModel

lc_agents = require_langchain("langchain.agents")
lt = require_langchain("langchain.agents.middleware.types")

MODES = ["invoke", "ainvoke"]


def langchain_agent(
    model: Any, tools: Sequence[Any] | None = None, *, middleware: Sequence[Any] = (), **kw: Any
) -> Any:
    """LangChain's ``create_agent`` with every middleware converted by ``to_langchain``."""
    converted = [to_langchain(m) for m in middleware]
    if "response_format" in kw:
        kw["response_format"] = to_langchain_format(kw["response_format"])
    return lc_agents.create_agent(model, tools, middleware=converted, **kw)


BUILDERS = {"funcware": create_agent, "langchain": langchain_agent}


def run(agent: Any, inputs: Any, mode: str, config: Any = None) -> dict[str, Any]:
    if mode == "ainvoke":
        result: dict[str, Any] = asyncio.run(agent.ainvoke(inputs, config))
    else:
        result = agent.invoke(inputs, config)
    return result


def ask(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


def thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


def calling(name: str, args: dict[str, Any], call_id: str = "call-0") -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])


def texts(messages: Sequence[BaseMessage]) -> list[str]:
    return [m.text for m in messages]


def comparable(state: dict[str, Any]) -> dict[str, Any]:
    """A final state without message ids: type, text and tool calls of each message."""
    return {
        key: [
            (m.type, m.text, [(c["name"], c["args"]) for c in getattr(m, "tool_calls", [])])
            for m in value
        ]
        if key == "messages"
        else value
        for key, value in state.items()
    }


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


# -- one stack of funcware middleware, run by both libraries -----------------------------


class Notes(AgentState):
    note: NotRequired[str]
    calls_made: NotRequired[Annotated[int, PrivateStateAttr]]


class DoubleArgs(AgentMiddleware):
    """A class middleware: doubles every tool argument."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def wrap_tool_call(self, request: ToolCallRequest, handler: Any) -> Any:
        self.log.append(f"tool {request.tool_call['name']}")
        args = {key: 2 * value for key, value in request.tool_call["args"].items()}
        return handler(request.override(tool_call={**request.tool_call, "args": args}))


def recipe_stack(log: list[str]) -> list[Any]:
    """Fresh middleware: decorated, class and composite, sync-only and async-only."""

    @before_model(can_jump_to=["end"], state_schema=Notes)
    def gate(state: Notes) -> dict[str, Any]:
        if state["messages"][-1].text == "stop":
            return {"jump_to": "end", "messages": [AIMessage("stopped early")]}
        return {"calls_made": state.get("calls_made", 0) + 1}

    @wrap_model_call
    def retry_once(request: ModelRequest, handler: Any) -> Any:
        assert type(request) is ModelRequest  # funcware's own type, also inside LangChain
        try:
            return handler(request)
        except ConnectionError:
            log.append("retry")
            return handler(request)

    @wrap_model_call(state_schema=Notes)
    def take_note(request: ModelRequest, handler: Any) -> Any:
        response = handler(request)
        assert type(response) is ModelResponse
        update = {"note": f"saw {len(request.messages)} messages"}
        return ExtendedModelResponse(response, Command(update=update))

    @dynamic_prompt
    def prompt(request: ModelRequest) -> str:
        return f"model call {request.state.get('calls_made')}"

    @after_model
    def sync_only(state: AgentState) -> None:
        log.append(f"after model: {state['messages'][-1].text or 'tool call'}")

    @after_agent
    async def async_only(state: AgentState) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"messages": [AIMessage(f"{state['messages'][-1].text} (signed)")]}

    return [gate, compose(retry_once, take_note, prompt), DoubleArgs(log), sync_only, async_only]


@pytest.mark.parametrize("mode", MODES)
def test_the_same_stack_runs_the_same_in_both_libraries(mode: str) -> None:
    outcomes: dict[str, Any] = {}
    for library, build in BUILDERS.items():
        log: list[str] = []
        model = ScriptedChatModel(
            responses=[ConnectionError("reset"), calling("add", {"a": 1, "b": 2}), "it is 6"]
        )
        agent = build(model, [add], middleware=recipe_stack(log), checkpointer=InMemorySaver())
        config = thread(f"stack-{library}-{mode}")
        state = run(agent, ask("1 + 2, doubled?"), mode, config)
        stopped = run(agent, ask("stop"), mode, config)
        private = agent.get_state(config).values["calls_made"]
        calls = [(call.system_prompt, texts(call.messages)) for call in model.calls]
        outcomes[library] = (comparable(state), comparable(stopped), private, log, calls)

        answer = ["1 + 2, doubled?", "", "6", "it is 6", "it is 6 (signed)"]
        assert texts(state["messages"]) == answer
        assert state["note"] == "saw 3 messages"  # the command of the last model call
        assert set(state) == {"messages", "note"}  # calls_made is private
        assert texts(stopped["messages"])[-2:] == ["stopped early", "stopped early (signed)"]
        assert private == 2  # the jump happened before a third count
        assert log == ["retry", "after model: tool call", "tool add", "after model: it is 6"]
        assert [prompt for prompt, _ in calls] == ["model call 1"] * 2 + ["model call 2"]
    assert outcomes["funcware"] == outcomes["langchain"]


FUNCWARE_ONLY = {"resilient_hooks"}
"""Recipes whose demo needs funcware's create_agent (always-run cleanup; not convertible)."""


@pytest.mark.parametrize("name", [r for r in cookbook.RECIPES if r not in FUNCWARE_ONLY])
def test_cookbook_recipe_runs_the_same_in_langchain(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each recipe's demo, its middleware converted: its own checks pass, same final state."""
    recipe = cookbook.load(name)
    _, ours = recipe.demo()
    built: list[Any] = []

    def build(*args: Any, **kwargs: Any) -> Any:
        built.append(langchain_agent(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(recipe, "create_agent", build)
    agent, theirs = recipe.demo()
    assert built and agent is built[-1]  # the demo ran on LangChain's create_agent
    assert comparable(theirs) == comparable(ours)


# -- what to_langchain builds -----------------------------------------------------------


class Gate(AgentState):
    secret: NotRequired[Annotated[str, PrivateStateAttr]]
    visible: NotRequired[str]


@before_model(can_jump_to=["end"], state_schema=Gate, tools=[add], name="gate")
def gate(state: Gate) -> dict[str, Any] | None:
    """Stops on "stop"; otherwise writes a private and a public field."""
    if state["messages"][-1].text == "stop":
        return {"jump_to": "end"}
    return {"secret": "hidden", "visible": "shown"}


def overridden(middleware: Any) -> set[str]:
    """The hook methods a LangChain middleware overrides, as LangChain's create_agent sees."""
    names = [prefix + hook for hook in HOOKS for prefix in ("", "a")]
    cls = type(middleware)
    return {n for n in names if getattr(cls, n) is not getattr(lt.AgentMiddleware, n)}


def test_to_langchain_keeps_hooks_name_schema_tools_and_jumps() -> None:
    converted = to_langchain(gate)
    assert isinstance(converted, lt.AgentMiddleware)
    assert converted.funcware_middleware is gate
    assert converted.name == "gate"
    assert overridden(converted) == {"before_model", "abefore_model"}
    assert type(converted).before_model.__can_jump_to__ == ["end"]
    assert [t.name for t in converted.tools] == ["add"]

    annotations = converted.state_schema.__annotations__
    assert {"messages", "jump_to", "structured_response", "secret", "visible"} <= set(annotations)
    [marker] = annotations["secret"].__args__[0].__metadata__  # NotRequired[Annotated[...]]
    assert isinstance(marker, lt.OmitFromSchema) and marker.input and marker.output

    agent = lc_agents.create_agent(
        ScriptedChatModel(responses=["ok"]), middleware=[converted], checkpointer=InMemorySaver()
    )
    assert "secret" not in agent.get_output_jsonschema()["properties"]
    assert "secret" not in agent.get_input_jsonschema()["properties"]
    state = agent.invoke(ask("hi"), thread("gate"))
    assert set(state) == {"messages", "visible"}
    assert agent.get_state(thread("gate")).values["secret"] == "hidden"
    assert texts(agent.invoke(ask("stop"), thread("gate"))["messages"])[-1] == "stop"


def test_to_langchain_defines_only_the_hooks_defined() -> None:
    class Wraps(AgentMiddleware):
        def wrap_model_call(self, request: ModelRequest, handler: Any) -> Any:
            return handler(request)

        async def awrap_tool_call(self, request: ToolCallRequest, handler: Any) -> Any:
            return await handler(request)

    converted = to_langchain(Wraps())
    assert overridden(converted) == {
        "wrap_model_call",
        "awrap_model_call",
        "wrap_tool_call",
        "awrap_tool_call",
    }
    assert converted.name == "Wraps" and converted.tools == []

    composite = to_langchain(compose(gate, Wraps()))
    assert composite.name == "gate+Wraps"
    assert overridden(composite) == overridden(converted) | {"before_model", "abefore_model"}
    assert type(composite).abefore_model.__can_jump_to__ == ["end"]


def test_a_composite_merges_commands_where_langchain_would_crash() -> None:
    """funcware merges two layers' writes to one plain key (outer wins); LangChain cannot."""

    class Note(AgentState):
        note: NotRequired[str]

    def writer(text: str) -> Any:
        @wrap_model_call(state_schema=Note, name=f"write_{text}")
        def write(request: ModelRequest, handler: Any) -> Any:
            return ExtendedModelResponse(handler(request), Command(update={"note": text}))

        return write

    model = ScriptedChatModel(responses=["answer"])
    agent = langchain_agent(model, middleware=[compose(writer("outer"), writer("inner"))])
    assert agent.invoke(ask("hi"))["note"] == "outer"

    apart = langchain_agent(
        ScriptedChatModel(responses=["answer"]), middleware=[writer("outer"), writer("inner")]
    )
    with pytest.raises(InvalidUpdateError):
        apart.invoke(ask("hi"))


@pytest.mark.parametrize("mode", MODES)
def test_jumps_are_still_checked_inside_langchain(mode: str) -> None:
    @after_model
    def loops(state: AgentState) -> dict[str, Any]:
        return {"jump_to": "model"}

    agent = langchain_agent(ScriptedChatModel(responses=["a", "b"]), middleware=[loops])
    with pytest.raises(InvalidJumpError, match=r"middleware 'loops', hook after_model"):
        run(agent, ask("hi"), mode)


@pytest.mark.parametrize("mode", MODES)
def test_errors_still_name_the_funcware_middleware(mode: str) -> None:
    @before_model
    def broken(state: AgentState) -> None:
        raise LookupError("no such key")

    agent = langchain_agent(ScriptedChatModel(responses=["a"]), middleware=[broken])
    with pytest.raises(LookupError) as caught:
        run(agent, ask("hi"), mode)
    [note] = [n for n in caught.value.__notes__ if n.startswith("raised in")]
    assert "middleware 'broken', hook before_model" in note
    assert os.path.basename(__file__) in note


@after_model
def confirm_sync(state: AgentState) -> dict[str, Any]:
    answer = interrupt({"confirm": state["messages"][-1].text})
    return {"messages": [AIMessage(f"confirmed: {answer}")]}


@after_model
async def confirm_async(state: AgentState) -> dict[str, Any]:
    answer = interrupt({"confirm": state["messages"][-1].text})
    return {"messages": [AIMessage(f"confirmed: {answer}")]}


@pytest.mark.parametrize("library", list(BUILDERS))
@pytest.mark.parametrize(
    ("hook", "mode"), [(confirm_sync, "ainvoke"), (confirm_async, "invoke")], ids=["sync", "async"]
)
def test_interrupts_cross_the_sync_async_bridge(library: str, hook: Any, mode: str) -> None:
    """A sync-only hook under ainvoke, an async-only one under invoke: both pause, resume."""
    model = ScriptedChatModel(responses=["draft"])
    agent = BUILDERS[library](model, middleware=[hook], checkpointer=InMemorySaver())
    config = thread(f"confirm-{library}-{mode}")

    paused = run(agent, ask("write"), mode, config)
    assert [i.value for i in paused["__interrupt__"]] == [{"confirm": "draft"}]
    final = run(agent, Command(resume="yes"), mode, config)
    assert texts(final["messages"]) == ["write", "draft", "confirmed: yes"]


def test_dict_schema_tools_are_refused_with_a_way_out() -> None:
    schema = {
        "type": "function",
        "function": {
            "name": "weather",
            "description": "The weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }

    def answer(request: ToolCallRequest, handler: Any) -> Any:
        if request.tool_call["name"] == "weather":
            return ToolMessage("sunny", tool_call_id=request.tool_call["id"])
        return handler(request)

    with pytest.raises(TypeError, match=r"dict-schema tools \('weather'\).*create_agent\(tools="):
        to_langchain(wrap_tool_call(tools=[schema], name="serve")(answer))

    model = ScriptedChatModel(responses=[calling("weather", {"city": "Rome"}), "nice"])
    agent = langchain_agent(model, [schema], middleware=[wrap_tool_call(answer)])
    assert texts(agent.invoke(ask("weather?"))["messages"]) == ["weather?", "", "sunny", "nice"]
    assert model.calls[0].tool_names == ["weather"]
