"""LangChain middleware inside funcware: built-ins and hand-written classes next to funcware.

LangChain v1's built-in middleware (``langchain.agents.middleware``) run in
``funcware.create_agent`` mixed with decorated funcware functions, each with an assertion
on its effect. Every built-in scenario runs four ways (the ``harness`` fixture): funcware's
``create_agent`` and LangChain's own (the funcware functions converted by
``to_langchain``), each with ``invoke`` and ``ainvoke``; the same assertions hold in all
four. Then a hand-written LangChain class middleware (``hook_config`` jumps, a state schema
with LangChain's ``PrivateStateAttr``, its own tools) in a funcware agent and in
``compose()``, the LangChain request/response types it sees, and the places where funcware
deliberately differs from LangChain.

Needs the ``langchain`` extra; skipped without it, failed when ``FUNCWARE_REQUIRE_LANGCHAIN=1``
(CI). The other direction (funcware middleware inside LangChain) is in
``test_interop_roundtrip.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from support import require_langchain
from typing_extensions import NotRequired

from funcware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    PrivateStateAttr,
    ToolCallRequest,
    after_agent,
    after_model,
    before_model,
    compose,
    create_agent,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.compose.graph.schema import input_output_schemas
from funcware.errors import BrokenStackError, InvalidJumpError
from funcware.hooks.middleware import HOOKS, hook_impls
from funcware.interop import to_langchain
from funcware.testing import ScriptedChatModel

lc_agents = require_langchain("langchain.agents")
lm = require_langchain("langchain.agents.middleware")
lt = require_langchain("langchain.agents.middleware.types")


# -- building and running an agent four ways ------------------------------------------


@dataclass
class Harness:
    """Builds agents with one library's ``create_agent`` and runs them one way."""

    library: str  # "funcware" or "langchain"
    mode: str  # "invoke" or "ainvoke"

    def agent(
        self, model: Any, tools: Sequence[Any] = (), middleware: Sequence[Any] = (), **kw: Any
    ) -> Any:
        """The agent; for LangChain, funcware middleware goes through ``to_langchain``."""
        if self.library == "funcware":
            return create_agent(model, list(tools), middleware=list(middleware), **kw)
        converted = [to_langchain(m) for m in middleware]
        return lc_agents.create_agent(model, list(tools), middleware=converted, **kw)

    def run(self, agent: Any, inputs: Any, config: Any = None) -> dict[str, Any]:
        if self.mode == "ainvoke":
            result: dict[str, Any] = asyncio.run(agent.ainvoke(inputs, config))
        else:
            result = agent.invoke(inputs, config)
        return result


WAYS = [(lib, mode) for lib in ("funcware", "langchain") for mode in ("invoke", "ainvoke")]


@pytest.fixture(params=WAYS, ids=[f"{lib}-{mode}" for lib, mode in WAYS])
def harness(request: pytest.FixtureRequest) -> Harness:
    return Harness(*request.param)


def ask(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


def thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


def calling(*calls: tuple[str, dict[str, Any]], tag: str = "call", text: str = "") -> AIMessage:
    """An ``AIMessage`` calling ``(name, args)`` tools, with ids ``{tag}-0``, ``{tag}-1``..."""
    return AIMessage(
        text,
        tool_calls=[
            {"name": name, "args": args, "id": f"{tag}-{i}", "type": "tool_call"}
            for i, (name, args) in enumerate(calls)
        ],
    )


def texts(messages: Sequence[BaseMessage]) -> list[str]:
    return [m.text for m in messages]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def mul(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


# -- LangChain's built-in middleware in a funcware agent -------------------------------


def test_summarization_replaces_old_messages_with_the_summary(harness: Harness) -> None:
    summariser = ScriptedChatModel(responses=["They spoke of alpha, bravo and charlie."])
    model = ScriptedChatModel(responses=["done"])
    seen: list[list[str]] = []

    @before_model
    def record(state: AgentState) -> None:
        seen.append(texts(state["messages"]))

    summarise = lm.SummarizationMiddleware(
        summariser, trigger=("messages", 4), keep=("messages", 2)
    )
    agent = harness.agent(model, middleware=[summarise, record])
    history = [
        HumanMessage("alpha"),
        AIMessage("bravo"),
        HumanMessage("charlie"),
        AIMessage("delta"),
        HumanMessage("echo"),
    ]
    state = harness.run(agent, {"messages": history})

    summary = "Here is a summary of the conversation to date:\n\n" + summariser.responses[0]
    assert texts(state["messages"]) == [summary, "delta", "echo", "done"]
    assert seen == [[summary, "delta", "echo"]]  # the funcware hook after it sees the summary
    assert texts(model.calls[0].messages) == [summary, "delta", "echo"]
    [summary_call] = summariser.calls
    prompt = summary_call.messages[-1].text
    assert "alpha" in prompt and "charlie" in prompt and "echo" not in prompt


HITL_ANSWERS: dict[str, dict[str, Any]] = {
    "approve": {"type": "approve"},
    "edit": {"type": "edit", "edited_action": {"name": "add", "args": {"a": 20, "b": 22}}},
    "reject": {"type": "reject", "message": "not today"},
}


@pytest.mark.parametrize("decision", list(HITL_ANSWERS))
def test_human_in_the_loop_pauses_then_resumes(harness: Harness, decision: str) -> None:
    model = ScriptedChatModel(responses=[calling(("add", {"a": 1, "b": 2})), "finished"])
    ran: list[dict[str, Any]] = []

    @wrap_tool_call
    def log_tools(request: ToolCallRequest, handler: Any) -> Any:
        ran.append(request.tool_call["args"])
        return handler(request)

    hitl = lm.HumanInTheLoopMiddleware({"add": True})
    agent = harness.agent(model, [add], [hitl, log_tools], checkpointer=InMemorySaver())
    config = thread(f"hitl-{decision}")

    paused = harness.run(agent, ask("add 1 and 2"), config)
    [pause] = paused["__interrupt__"]
    [action] = pause.value["action_requests"]
    assert (action["name"], action["args"]) == ("add", {"a": 1, "b": 2})
    assert ran == [] and len(model.calls) == 1

    final = harness.run(agent, Command(resume={"decisions": [HITL_ANSWERS[decision]]}), config)
    answer = final["messages"][2]
    assert isinstance(answer, ToolMessage) and answer.tool_call_id == "call-0"
    if decision == "approve":
        assert ran == [{"a": 1, "b": 2}] and answer.text == "3"
    elif decision == "edit":
        assert ran == [{"a": 20, "b": 22}] and answer.text.endswith("42")
    else:
        assert ran == [] and "not today" in answer.text and answer.status == "error"
    assert final["messages"][-1].text == "finished"
    assert set(final) == {"messages"}  # its private hitl state stays out of the output


def test_model_call_limit_ends_the_run(harness: Harness) -> None:
    model = ScriptedChatModel(
        responses=[calling(("add", {"a": 1, "b": i}), tag=f"t{i}") for i in range(5)]
    )
    ended: list[str] = []

    @after_agent
    def note_end(state: AgentState) -> None:
        ended.append(state["messages"][-1].text)

    limit = lm.ModelCallLimitMiddleware(run_limit=2, exit_behavior="end")
    state = harness.run(harness.agent(model, [add], [limit, note_end]), ask("loop"))

    assert len(model.calls) == 2
    stop = "Model call limits exceeded: run limit (2/2)"
    assert texts(state["messages"])[-1] == stop
    assert ended == [stop]  # the jump to end still runs the after_agent hooks
    assert set(state) == {"messages"}  # its private counters stay out of the output


def test_model_call_limit_counts_the_whole_thread(harness: Harness) -> None:
    model = ScriptedChatModel(responses=["first answer", "never sent"])
    limit = lm.ModelCallLimitMiddleware(thread_limit=1, exit_behavior="end")
    agent = harness.agent(model, middleware=[limit], checkpointer=InMemorySaver())
    config = thread("limit")

    assert texts(harness.run(agent, ask("one"), config)["messages"]) == ["one", "first answer"]
    second = harness.run(agent, ask("two"), config)

    assert len(model.calls) == 1
    assert second["messages"][-1].text == "Model call limits exceeded: thread limit (1/1)"
    assert agent.get_state(config).values["thread_model_call_count"] == 1


def test_tool_call_limit_blocks_the_calls_over_the_limit(harness: Harness) -> None:
    three_adds_and_a_mul = calling(
        ("add", {"a": 1, "b": 1}),
        ("add", {"a": 2, "b": 2}),
        ("add", {"a": 3, "b": 3}),
        ("mul", {"a": 4, "b": 4}),
    )
    model = ScriptedChatModel(responses=[three_adds_and_a_mul, "done"])
    ran: list[str] = []

    @wrap_tool_call
    def log_tools(request: ToolCallRequest, handler: Any) -> Any:
        ran.append(request.tool_call["name"])
        return handler(request)

    limit = lm.ToolCallLimitMiddleware(tool_name="add", run_limit=2)
    state = harness.run(harness.agent(model, [add, mul], [limit, log_tools]), ask("go"))

    assert sorted(ran) == ["add", "add", "mul"]  # the third add never ran
    results = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}
    assert [results[f"call-{i}"].text for i in (0, 1, 3)] == ["2", "4", "16"]
    assert results["call-2"].status == "error"
    assert results["call-2"].text == "Tool call limit exceeded. Do not call 'add' again."
    assert state["messages"][-1].text == "done"


def test_model_retry_retries_a_failing_model(harness: Harness) -> None:
    model = ScriptedChatModel(
        responses=[ConnectionError("reset"), TimeoutError("slow"), "third time lucky"]
    )
    attempts: list[int] = []

    @wrap_model_call
    def count(request: ModelRequest, handler: Any) -> Any:
        attempts.append(len(request.messages))
        return handler(request)

    retry = lm.ModelRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)
    state = harness.run(harness.agent(model, middleware=[retry, count]), ask("hi"))

    assert texts(state["messages"]) == ["hi", "third time lucky"]
    assert attempts == [1, 1, 1] and len(model.calls) == 3


def test_model_retry_gives_up_with_a_message(harness: Harness) -> None:
    model = ScriptedChatModel(responses=[RuntimeError("down")] * 2)
    retry = lm.ModelRetryMiddleware(max_retries=1, initial_delay=0, jitter=False)
    state = harness.run(harness.agent(model, middleware=[retry]), ask("hi"))

    assert len(model.calls) == 2
    assert (
        state["messages"][-1].text == "Model call failed after 2 attempts with RuntimeError: down"
    )


def test_tool_retry_retries_a_failing_tool(harness: Harness) -> None:
    failures = [ConnectionError("one"), ConnectionError("two")]

    @tool
    def fetch(url: str) -> str:
        """Fetch a page."""
        if failures:
            raise failures.pop(0)
        return f"<html>{url}</html>"

    attempts: list[str] = []

    @wrap_tool_call
    def count(request: ToolCallRequest, handler: Any) -> Any:
        attempts.append(request.tool_call["args"]["url"])
        return handler(request)

    model = ScriptedChatModel(responses=[calling(("fetch", {"url": "x.org"})), "fetched"])
    retry = lm.ToolRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)
    state = harness.run(harness.agent(model, [fetch], [retry, count]), ask("get x.org"))

    assert attempts == ["x.org"] * 3
    assert texts(state["messages"]) == ["get x.org", "", "<html>x.org</html>", "fetched"]


def test_model_fallback_answers_with_the_fallback_model(harness: Harness) -> None:
    primary = ScriptedChatModel(responses=[RuntimeError("primary is down")])
    backup = ScriptedChatModel(responses=["from the backup"])
    used: list[Any] = []

    @wrap_model_call
    def which_model(request: ModelRequest, handler: Any) -> Any:
        used.append(request.model)
        return handler(request)

    fallback = lm.ModelFallbackMiddleware(backup)
    state = harness.run(harness.agent(primary, middleware=[fallback, which_model]), ask("hi"))

    assert texts(state["messages"]) == ["hi", "from the backup"]
    assert len(used) == 2 and used[0] is primary and used[1] is backup
    assert len(backup.calls) == 1


def test_pii_is_redacted_in_and_out(harness: Harness) -> None:
    model = ScriptedChatModel(responses=["Sure, I will write to jane@example.com."])
    seen: list[str] = []

    @before_model
    def record(state: AgentState) -> None:
        seen.append(state["messages"][-1].text)

    pii = lm.PIIMiddleware("email", strategy="redact", apply_to_output=True)
    state = harness.run(
        harness.agent(model, middleware=[pii, record]), ask("Mail jane@example.com")
    )

    assert texts(state["messages"]) == [
        "Mail [REDACTED_EMAIL]",
        "Sure, I will write to [REDACTED_EMAIL].",
    ]
    assert seen == ["Mail [REDACTED_EMAIL]"]
    assert "jane@example.com" not in model.calls[0].messages[-1].text


def test_pii_block_stops_the_run(harness: Harness) -> None:
    model = ScriptedChatModel(responses=["never"])
    pii = lm.PIIMiddleware("email", strategy="block")
    with pytest.raises(lm.PIIDetectionError):
        harness.run(harness.agent(model, middleware=[pii]), ask("I am jane@example.com"))
    assert model.calls == []


def test_todo_list_tool_updates_the_todos_state(harness: Harness) -> None:
    todos = [
        {"content": "draft the plan", "status": "in_progress"},
        {"content": "review it", "status": "pending"},
    ]
    model = ScriptedChatModel(responses=[calling(("write_todos", {"todos": todos})), "planned"])
    seen: list[Any] = []

    @after_agent
    def record(state: AgentState) -> None:
        seen.append(state.get("todos"))

    agent = harness.agent(model, middleware=[lm.TodoListMiddleware(), record])
    state = harness.run(agent, ask("plan it"))

    assert model.calls[0].tool_names == ["write_todos"]  # the middleware brought the tool
    assert "write_todos" in (model.calls[0].system_prompt or "")
    assert state["todos"] == todos and seen == [todos]
    assert state["messages"][2].text.startswith("Updated todo list")
    assert state["messages"][-1].text == "planned"


def test_context_editing_clears_old_tool_results_for_the_model_only(harness: Harness) -> None:
    model = ScriptedChatModel(
        responses=[
            calling(("add", {"a": 1, "b": 2}), tag="first"),
            calling(("add", {"a": 3, "b": 4}), tag="second"),
            "done",
        ]
    )
    outer_saw: list[list[str]] = []

    @wrap_model_call
    def record(request: ModelRequest, handler: Any) -> Any:
        outer_saw.append(texts(request.messages))
        return handler(request)

    editing = lm.ContextEditingMiddleware(
        edits=[lm.ClearToolUsesEdit(trigger=1, keep=1, placeholder="[cleared]")]
    )
    state = harness.run(harness.agent(model, [add], [record, editing]), ask("sum"))

    assert texts(model.calls[2].messages) == ["sum", "", "[cleared]", "", "7"]
    assert outer_saw[2] == ["sum", "", "3", "", "7"]  # outer layers see the real history
    assert texts(state["messages"]) == ["sum", "", "3", "", "7", "done"]  # so does the state


def test_llm_tool_selector_narrows_the_tools(harness: Harness) -> None:
    pick_mul = AIMessage(
        "",
        tool_calls=[
            {"name": "ToolSelectionResponse", "args": {"tools": ["mul"]}, "id": "pick"},
        ],
    )
    selector = ScriptedChatModel(responses=[pick_mul, pick_mul])
    model = ScriptedChatModel(responses=[calling(("mul", {"a": 6, "b": 7})), "42"])
    offered: list[list[str]] = []

    @wrap_model_call
    def record(request: ModelRequest, handler: Any) -> Any:
        offered.append(sorted(t.name for t in request.tools))
        return handler(request)

    select = lm.LLMToolSelectorMiddleware(model=selector)
    state = harness.run(harness.agent(model, [add, mul], [record, select]), ask("6 times 7?"))

    assert [call.tool_names for call in model.calls] == [["mul"], ["mul"]]
    assert offered == [["add", "mul"], ["add", "mul"]]
    assert selector.calls[0].tool_names == ["ToolSelectionResponse"]
    assert selector.calls[0].messages[-1].text == "6 times 7?"
    assert texts(state["messages"]) == ["6 times 7?", "", "42", "42"]


def test_tool_error_turns_exceptions_into_messages(harness: Harness) -> None:
    @tool
    def explode(reason: str) -> str:
        """Always fails."""
        raise LookupError(reason)

    model = ScriptedChatModel(responses=[calling(("explode", {"reason": "no such row"})), "ok"])
    errors = lm.ToolErrorMiddleware(lambda exc, request: f"{type(exc).__name__}: {exc}")
    state = harness.run(harness.agent(model, [explode], [errors]), ask("try"))

    failure = state["messages"][2]
    assert isinstance(failure, ToolMessage) and failure.status == "error"
    assert failure.text == "LookupError: no such row"


def test_tool_emulator_answers_instead_of_the_tool(harness: Harness) -> None:
    ran: list[str] = []

    @tool
    def weather(city: str) -> str:
        """The weather in a city."""
        ran.append(city)
        return "real weather"

    emulator_model = ScriptedChatModel(responses=["Sunny, 25 degrees."])
    model = ScriptedChatModel(responses=[calling(("weather", {"city": "Rome"})), "nice"])
    emulate = lm.LLMToolEmulator(tools=["weather"], model=emulator_model)
    state = harness.run(harness.agent(model, [weather], [emulate]), ask("weather in Rome?"))

    assert ran == []
    assert state["messages"][2].text == "Sunny, 25 degrees."
    assert "Rome" in emulator_model.calls[0].messages[-1].text


def test_built_ins_get_the_same_graph_in_both_libraries() -> None:
    """funcware reads a LangChain middleware's hooks as LangChain does: same hook nodes."""
    stack = [
        lm.SummarizationMiddleware(ScriptedChatModel(responses=[]), trigger=("messages", 50)),
        lm.HumanInTheLoopMiddleware({"add": True}),
        lm.ModelCallLimitMiddleware(run_limit=3),
        lm.ToolCallLimitMiddleware(run_limit=3),
        lm.ModelRetryMiddleware(),
        lm.ToolRetryMiddleware(),
        lm.ModelFallbackMiddleware(ScriptedChatModel(responses=[])),
        lm.PIIMiddleware("email"),
        lm.TodoListMiddleware(),
        lm.ContextEditingMiddleware(),
        lm.LLMToolSelectorMiddleware(model=ScriptedChatModel(responses=[])),
    ]
    model = ScriptedChatModel(responses=[])
    ours = create_agent(model, [add], middleware=stack).get_graph()
    theirs = lc_agents.create_agent(model, [add], middleware=stack).get_graph()

    assert set(ours.nodes) == set(theirs.nodes)
    assert {(e.source, e.target) for e in ours.edges} == {
        (e.source, e.target) for e in theirs.edges
    }
    for middleware in stack:
        overridden = {
            hook
            for hook in HOOKS
            if getattr(type(middleware), hook) is not getattr(lt.AgentMiddleware, hook)
            or getattr(type(middleware), "a" + hook) is not getattr(lt.AgentMiddleware, "a" + hook)
        }
        assert set(hook_impls(middleware)) == overridden, middleware.name


def test_a_mixed_stack_streams_the_same_updates_in_both_libraries() -> None:
    @before_model
    def note(state: AgentState) -> None:
        return None

    @after_agent
    def sign(state: AgentState) -> dict[str, Any]:
        return {"messages": [AIMessage("(signed)")]}

    updates: dict[str, list[list[str]]] = {}
    for library in ("funcware", "langchain"):
        model = ScriptedChatModel(responses=[calling(("add", {"a": 1, "b": 2})), "three"])
        stack = [
            lm.ModelCallLimitMiddleware(run_limit=5),
            note,
            lm.HumanInTheLoopMiddleware({"add": False}),
            lm.ToolRetryMiddleware(initial_delay=0),
            sign,
        ]
        agent = Harness(library, "invoke").agent(model, [add], stack)
        updates[library] = [list(chunk) for chunk in agent.stream(ask("hi"), stream_mode="updates")]
    loop = [
        ["ModelCallLimitMiddleware.before_model"],
        ["note.before_model"],
        ["model"],
        ["HumanInTheLoopMiddleware.after_model"],
        ["ModelCallLimitMiddleware.after_model"],
    ]
    assert updates["funcware"] == [*loop, ["tools"], *loop, ["sign.after_agent"]]
    assert updates["langchain"] == updates["funcware"]


# -- a hand-written LangChain class middleware -----------------------------------------


class BudgetState(lt.AgentState):
    turns: NotRequired[Annotated[int, lt.PrivateStateAttr]]
    stopped_by: NotRequired[str]


class Budget(lt.AgentMiddleware):
    """A LangChain middleware: ends the run after ``runtime.context["turns"]`` model calls.

    It brings its own tool, keeps its counter in a private state field, and records the
    requests and responses it sees, to check they are LangChain's.
    """

    state_schema = BudgetState

    def __init__(self) -> None:
        super().__init__()
        self.tools = [add]
        self.seen: list[Any] = []

    @lt.hook_config(can_jump_to=["end"])
    def before_model(self, state: Any, runtime: Any) -> dict[str, Any]:
        turns = state.get("turns", 0)
        if turns >= runtime.context["turns"]:
            return {
                "jump_to": "end",
                "messages": [AIMessage("budget spent")],
                "stopped_by": "Budget",
            }
        return {"turns": turns + 1}

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        turn = request.state["turns"]
        changed = request.override(system_message=SystemMessage(f"turn {turn}"))
        response = handler(changed)
        self.seen.append((request, changed, response))
        return response

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        self.seen.append(request)
        return handler(request.override(tool_call={**request.tool_call, "args": {"a": 1, "b": 1}}))


STACKINGS = ["alone", "in-compose", "in-compose-in-langchain"]


@pytest.mark.parametrize("stacking", STACKINGS)
@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_langchain_class_middleware_in_a_funcware_agent(stacking: str, mode: str) -> None:
    budget = Budget()
    ended: list[str] = []

    @after_agent
    def note_end(state: AgentState) -> None:
        ended.append(state["messages"][-1].text)

    @before_model
    def count(state: AgentState) -> dict[str, Any]:
        return {"messages": [HumanMessage(f"(count {len(state['messages'])})")]}

    model = ScriptedChatModel(
        responses=[
            calling(("add", {"a": 5, "b": 5}), tag="one"),
            calling(("add", {"a": 6, "b": 6}), tag="two"),
            "never sent",
        ]
    )
    stack: list[Any] = [budget, count, note_end]
    if stacking == "alone":
        agent = create_agent(model, middleware=stack, checkpointer=InMemorySaver())
    elif stacking == "in-compose":
        agent = create_agent(model, middleware=[compose(*stack)], checkpointer=InMemorySaver())
    else:
        agent = lc_agents.create_agent(
            model, middleware=[to_langchain(compose(*stack))], checkpointer=InMemorySaver()
        )
    config = thread(f"budget-{stacking}-{mode}")
    if mode == "ainvoke":
        state = asyncio.run(agent.ainvoke(ask("hi"), config, context={"turns": 2}))
    else:
        state = agent.invoke(ask("hi"), config, context={"turns": 2})

    # Two turns, then its before_model jumped to the end; the after_agent hook still ran.
    assert texts(state["messages"]) == [
        "hi", "(count 1)", "", "2",
        "(count 4)", "", "2",
        "budget spent",
    ]  # fmt: skip
    assert ended == ["budget spent"]
    assert [call.system_prompt for call in model.calls] == ["turn 1", "turn 2"]
    assert model.calls[0].tool_names == ["add"]  # its own tool
    # Its private field is in the state, not in the output; its public one is in both.
    assert set(state) == {"messages", "stopped_by"} and state["stopped_by"] == "Budget"
    assert agent.get_state(config).values["turns"] == 2

    # It saw LangChain's request, response and tool-call types, and override() copied.
    request, changed, response = budget.seen[0]
    assert type(request) is lt.ModelRequest and type(changed) is lt.ModelRequest
    assert request.system_message is None and changed.system_prompt == "turn 1"
    assert type(response) is lt.ModelResponse and response.result[0].tool_calls
    assert isinstance(budget.seen[1], ToolCallRequest) and budget.seen[1].tool.name == "add"

    # create_agent flattens a composite into its members; LangChain sees one middleware.
    name = "Budget+count+note_end" if stacking == "in-compose-in-langchain" else "Budget"
    nodes = set(agent.get_graph().nodes)
    assert f"{name}.before_model" in nodes and f"{name}.after_model" not in nodes


def test_langchain_class_middleware_in_a_composite_unit() -> None:
    """compose() takes a LangChain member: its jumps, private field and wraps carry over."""

    @wrap_model_call
    def outer(request: ModelRequest, handler: Any) -> Any:
        return handler(request.override(messages=[*request.messages, HumanMessage("outer")]))

    stack = compose(outer, Budget())
    hooks = hook_impls(stack)
    assert set(hooks) == {"before_model", "wrap_model_call", "wrap_tool_call"}
    assert hooks["before_model"].can_jump_to == ("end",)
    assert [tool.name for tool in stack.tools] == ["add"]
    inputs, outputs = input_output_schemas(stack.state_schema)
    assert "turns" in stack.state_schema.__annotations__
    assert "turns" not in inputs.__annotations__ and "turns" not in outputs.__annotations__
    assert "stopped_by" in outputs.__annotations__

    model = ScriptedChatModel(responses=[])
    request = ModelRequest(
        model=model, messages=[HumanMessage("hi")], state={"messages": [], "turns": 3}
    )
    seen: list[Any] = []

    def stub(req: ModelRequest) -> AIMessage:
        seen.append(req)
        return AIMessage("stubbed")

    result = stack.wrap_model_call(request, stub)
    assert texts(result.result) == ["stubbed"]
    [final] = seen
    assert type(final) is ModelRequest  # back in funcware's type for the inner handler
    assert texts(final.messages) == ["hi", "outer"] and final.system_prompt == "turn 3"


def test_langchain_model_wrap_returns_extended_model_response() -> None:
    """A LangChain command merges with funcware's: the outer layer wins, any library."""

    class NoteState(AgentState):
        note: NotRequired[str]

    class LangChainNote(lt.AgentMiddleware):
        class state_schema(lt.AgentState):
            note: NotRequired[str]

        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            extra = AIMessage("from langchain", id="lc-extra")
            return lt.ExtendedModelResponse(
                model_response=handler(request),
                command=Command(update={"note": "langchain", "messages": [extra]}),
            )

    @wrap_model_call(state_schema=NoteState)
    def funcware_note(request: ModelRequest, handler: Any) -> Any:
        return ExtendedModelResponse(handler(request), Command(update={"note": "funcware"}))

    orders = [
        ([funcware_note, LangChainNote()], "funcware"),
        ([LangChainNote(), funcware_note], "langchain"),
    ]
    for order, winner in orders:
        state = create_agent(ScriptedChatModel(responses=["answer"]), middleware=order).invoke(
            ask("hi")
        )
        assert texts(state["messages"]) == ["hi", "answer", "from langchain"]
        assert state["note"] == winner


def test_async_only_langchain_middleware_runs_under_invoke() -> None:
    """funcware bridges an async-only LangChain middleware; LangChain refuses it."""

    class AsyncOnly(lt.AgentMiddleware):
        async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any]:
            await asyncio.sleep(0)
            return {"messages": [HumanMessage("(async note)")]}

        async def awrap_model_call(self, request: Any, handler: Any) -> Any:
            response = await handler(request.override(system_prompt="from async"))
            message = response.result[0]
            return lt.ModelResponse(
                result=[message.model_copy(update={"content": message.text + "!"})]
            )

        async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
            result = await handler(request)
            return ToolMessage(f"[{result.text}]", tool_call_id=result.tool_call_id)

    assert set(hook_impls(AsyncOnly())) == {"before_model", "wrap_model_call", "wrap_tool_call"}
    assert all(impl.sync is None for impl in hook_impls(AsyncOnly()).values())

    model = ScriptedChatModel(responses=[calling(("add", {"a": 1, "b": 2})), "done"])
    state = create_agent(model, [add], middleware=[AsyncOnly()]).invoke(ask("hi"))
    assert texts(state["messages"]) == ["hi", "(async note)", "!", "[3]", "(async note)", "done!"]
    assert model.calls[0].system_prompt == "from async"

    lc_agent = lc_agents.create_agent(ScriptedChatModel(responses=["x"]), middleware=[AsyncOnly()])
    with pytest.raises(TypeError, match="No synchronous function"):
        lc_agent.invoke(ask("hi"))


def test_langchain_decorated_middleware(harness: Harness) -> None:
    """LangChain's own decorators make LangChain middleware; funcware runs them too."""

    @lm.dynamic_prompt
    def prompt(request: Any) -> str:
        return f"{len(request.messages)} messages so far"

    @lm.wrap_tool_call
    def double(request: Any, handler: Any) -> Any:
        args = {k: 2 * v for k, v in request.tool_call["args"].items()}
        return handler(request.override(tool_call={**request.tool_call, "args": args}))

    @lm.before_model(can_jump_to=["end"])
    def stop_after_tools(state: Any, runtime: Any) -> dict[str, Any] | None:
        return {"jump_to": "end"} if isinstance(state["messages"][-1], ToolMessage) else None

    @after_model
    def shout(state: AgentState) -> dict[str, Any]:
        last = state["messages"][-1]
        return {"messages": [last.model_copy(update={"content": last.text.upper()})]}

    model = ScriptedChatModel(responses=[calling(("add", {"a": 1, "b": 2}), text="adding")])
    agent = harness.agent(model, [add], [prompt, double, stop_after_tools, shout])
    if harness.library == "langchain" and harness.mode == "ainvoke":
        with pytest.raises(NotImplementedError):  # LangChain does not bridge a sync tool wrap
            harness.run(agent, ask("hi"))
        return
    state = harness.run(agent, ask("hi"))

    assert texts(state["messages"]) == ["hi", "ADDING", "6"]
    assert model.calls[0].system_prompt == "1 messages so far"
    assert "stop_after_tools.before_model" in agent.get_graph().nodes


# -- state schemas from both libraries ---------------------------------------------------


def test_private_fields_from_both_libraries_merge_and_stay_private(harness: Harness) -> None:
    class LangChainHits(lt.AgentMiddleware):
        class state_schema(lt.AgentState):
            hits: NotRequired[Annotated[int, lt.PrivateStateAttr]]

        def before_model(self, state: Any, runtime: Any) -> dict[str, Any]:
            return {"hits": state.get("hits", 0) + 1}

    class Hits(AgentState):
        hits: NotRequired[Annotated[int, PrivateStateAttr]]

    @after_model(state_schema=Hits)
    def times_ten(state: Hits) -> dict[str, Any]:
        return {"hits": state["hits"] * 10}

    agent = harness.agent(
        ScriptedChatModel(responses=["answer"]),
        middleware=[LangChainHits(), times_ten],
        checkpointer=InMemorySaver(),
    )
    config = thread("hits")
    state = harness.run(agent, ask("hi"), config)

    assert set(state) == {"messages"}
    assert agent.get_state(config).values["hits"] == 10


def test_langchain_state_schema_for_the_whole_agent() -> None:
    class Schema(lt.AgentState):
        secret: NotRequired[Annotated[str, lt.PrivateStateAttr]]
        visible: NotRequired[str]

    @before_model(state_schema=Schema)
    def fill(state: Any) -> dict[str, Any]:
        return {"secret": "s", "visible": "v"}

    agent = create_agent(
        ScriptedChatModel(responses=["ok"]), middleware=[fill], state_schema=Schema
    )
    state = agent.invoke(ask("hi"))
    assert set(state) == {"messages", "visible"}


# -- where funcware deliberately differs -------------------------------------------------


def test_undeclared_jump_of_a_langchain_middleware_is_an_error_in_funcware() -> None:
    """LangChain ignores a jump its hook did not declare; funcware refuses it, by name."""

    class Loops(lt.AgentMiddleware):
        def after_model(self, state: Any, runtime: Any) -> dict[str, Any]:
            return {"jump_to": "model"}

    with pytest.raises(InvalidJumpError, match=r"middleware 'Loops', hook after_model"):
        create_agent(ScriptedChatModel(responses=["a", "b"]), middleware=[Loops()]).invoke(
            ask("hi")
        )
    lc_state = lc_agents.create_agent(
        ScriptedChatModel(responses=["a", "b"]), middleware=[Loops()]
    ).invoke(ask("hi"))
    assert texts(lc_state["messages"]) == ["hi", "a"]


def test_name_clash_across_libraries_is_refused() -> None:
    class limiter(lt.AgentMiddleware):
        def before_model(self, state: Any, runtime: Any) -> None:
            return None

    @before_model
    def limiter_fw(state: AgentState) -> None:
        return None

    limiter_fw.name = "limiter"
    with pytest.raises(BrokenStackError, match="two middleware are named 'limiter'"):
        create_agent(ScriptedChatModel(responses=[]), middleware=[limiter(), limiter_fw])


def test_funcware_middleware_must_be_converted_for_langchain() -> None:
    """funcware's own AgentMiddleware is not LangChain's: to_langchain makes it one."""

    class Note(AgentMiddleware):
        def before_model(self, state: Any, runtime: Any) -> dict[str, Any]:
            return {"messages": [HumanMessage("(note)")]}

    assert not isinstance(Note(), lt.AgentMiddleware)
    converted = to_langchain(Note())
    assert isinstance(converted, lt.AgentMiddleware)
    assert to_langchain(converted) is converted  # a LangChain middleware passes as it is
    state = lc_agents.create_agent(
        ScriptedChatModel(responses=["ok"]), middleware=[converted]
    ).invoke(ask("hi"))
    assert texts(state["messages"]) == ["hi", "(note)", "ok"]
