"""create_agent: the merged state schema, omitted/private fields, custom input, context."""

from __future__ import annotations

import operator
import os
from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from harness import Driver, tool_calls
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime
from support import lookup
from typing_extensions import NotRequired, TypedDict, get_type_hints

from funcware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
    OmitFromInput,
    OmitFromOutput,
    PrivateStateAttr,
    ToolCallRequest,
    after_agent,
    after_model,
    before_agent,
    before_model,
    create_agent,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.errors import StateSchemaConflictWarning
from funcware.testing import ScriptedChatModel

HERE = os.path.basename(__file__)


def hi(**fields: Any) -> dict[str, Any]:
    return {"messages": [HumanMessage("hi")], **fields}


# -- the merged schema --------------------------------------------------------------


class AlphaState(AgentState[Any]):
    alpha: NotRequired[int]


class BetaState(AgentState[Any]):
    beta: NotRequired[str]


class UserState(AgentState[Any]):
    gamma: NotRequired[list[str]]


@before_model(state_schema=AlphaState)
def alpha(state: AlphaState) -> dict[str, Any]:
    return {"alpha": state.get("alpha", 0) + 1}


class Beta(AgentMiddleware[BetaState, Any, Any]):
    state_schema = BetaState

    def after_model(self, state: BetaState, runtime: Runtime[Any]) -> dict[str, Any]:
        return {"beta": f"alpha was {state.get('alpha')}"}


def test_the_state_merges_agent_state_every_middleware_schema_and_the_users() -> None:
    agent = create_agent(
        ScriptedChatModel(responses=["ok"]), middleware=[alpha, Beta()], state_schema=UserState
    )

    assert {"messages", "jump_to", "structured_response", "alpha", "beta", "gamma"} <= set(
        agent.channels
    )
    inputs = agent.get_input_jsonschema()["properties"]
    assert {"messages", "alpha", "beta", "gamma"} <= set(inputs)
    result = agent.invoke(hi(gamma=["from the caller"]))
    assert result["alpha"] == 1
    assert result["beta"] == "alpha was 1"
    assert result["gamma"] == ["from the caller"]


def test_a_field_declared_by_two_middleware_with_the_same_type_is_one_field() -> None:
    class TotalFalseAlpha(AgentState[Any], total=False):
        alpha: int  # the same type as AlphaState's NotRequired[int]

    @after_agent(state_schema=TotalFalseAlpha)
    def also_alpha(state: TotalFalseAlpha) -> dict[str, Any]:
        return {"alpha": state.get("alpha", 0) * 10}

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[alpha, also_alpha])

    assert agent.invoke(hi())["alpha"] == 10
    input_schema = agent.get_input_jsonschema()
    assert "alpha" in input_schema["properties"]
    assert "alpha" not in input_schema.get("required", [])  # optional everywhere it is declared


class TextAlphaState(AgentState[Any]):
    alpha: NotRequired[str]


def test_a_field_declared_with_conflicting_types_by_two_middleware_is_a_warning_naming_both() -> (
    None
):
    @before_model(state_schema=TextAlphaState, name="text_alpha")
    def text_alpha(state: TextAlphaState) -> None:
        return None

    with pytest.warns(StateSchemaConflictWarning) as caught:
        agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[alpha, text_alpha])

    (warning,) = caught
    message = str(warning.message)
    assert "'alpha'" in message
    assert "middleware 'alpha'" in message
    assert "middleware 'text_alpha'" in message
    assert "int" in message and "str" in message
    assert message.count(HERE) == 2  # where each middleware is defined
    # built as LangChain builds it: the later declaration wins, and the agent runs
    assert get_type_hints(agent.builder.state_schema)["alpha"] is str
    assert agent.invoke(hi())["messages"][-1].content == "ok"


def test_the_users_state_schema_wins_a_field_clash_with_a_middleware() -> None:
    agent = create_agent(
        ScriptedChatModel(responses=[]), middleware=[alpha], state_schema=TextAlphaState
    )

    assert get_type_hints(agent.builder.state_schema)["alpha"] is str


def test_a_reducer_declared_by_a_middleware_accumulates_across_hooks_and_loops() -> None:
    class LogState(AgentState[Any]):
        log: NotRequired[Annotated[list[str], operator.add]]

    @before_model(state_schema=LogState)
    def log_before(state: LogState) -> dict[str, Any]:
        return {"log": ["before"]}

    @after_model(state_schema=LogState)
    def log_after(state: LogState) -> dict[str, Any]:
        return {"log": ["after"]}

    model = ScriptedChatModel(responses=[tool_calls(("lookup", {"key": "k"})), "done"])
    agent = create_agent(model, [lookup], middleware=[log_before, log_after])

    assert agent.invoke(hi(log=["input"]))["log"] == [
        "input",
        *["before", "after"] * 2,
    ]


# -- omitted and private fields -----------------------------------------------------


class CounterState(AgentState[Any]):
    model_calls: NotRequired[Annotated[int, PrivateStateAttr]]


@before_model(state_schema=CounterState)
def count_calls(state: CounterState) -> dict[str, Any]:
    return {"model_calls": state.get("model_calls", 0) + 1}


def test_a_private_counter_is_read_and_written_by_hooks_but_never_shown(driver: Driver) -> None:
    seen: list[tuple[str, int | None]] = []

    @wrap_model_call
    def watch(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        seen.append(("model", request.state.get("model_calls")))
        return handler(request)

    @wrap_tool_call
    def watch_tools(request: ToolCallRequest, handler: Any) -> Any:
        seen.append(("tool", request.state.get("model_calls")))
        return handler(request)

    @after_agent
    def final(state: dict[str, Any]) -> None:
        seen.append(("end", state.get("model_calls")))

    model = ScriptedChatModel(responses=[tool_calls(("lookup", {"key": "k"})), "done"])
    agent = create_agent(model, [lookup], middleware=[count_calls, watch, watch_tools, final])

    result = driver.invoke(agent, hi(model_calls=100))  # not an input: ignored

    assert seen == [("model", 1), ("tool", 1), ("model", 2), ("end", 2)]
    assert "model_calls" not in result
    assert "model_calls" not in agent.get_input_jsonschema()["properties"]
    assert "model_calls" not in agent.get_output_jsonschema()["properties"]


class SidesState(AgentState[Any]):
    made_here: NotRequired[Annotated[str, OmitFromInput]]
    caller_hint: NotRequired[Annotated[str, OmitFromOutput]]


def test_omit_from_input_and_omit_from_output_each_hide_one_side(driver: Driver) -> None:
    seen: list[dict[str, Any]] = []

    @before_agent(state_schema=SidesState)
    def sides(state: SidesState) -> dict[str, Any]:
        seen.append({k: v for k, v in state.items() if k != "messages"})
        return {"made_here": f"hint was {state.get('caller_hint')}"}

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[sides])

    result = driver.invoke(agent, hi(made_here="forged", caller_hint="be brief"))

    assert seen == [{"caller_hint": "be brief"}]  # made_here is not accepted as input
    assert result["made_here"] == "hint was be brief"
    assert "caller_hint" not in result
    inputs = agent.get_input_jsonschema()["properties"]
    outputs = agent.get_output_jsonschema()["properties"]
    assert "caller_hint" in inputs and "made_here" not in inputs
    assert "made_here" in outputs and "caller_hint" not in outputs


def test_the_merged_schema_keeps_the_omit_markers_of_each_field() -> None:
    agent = create_agent(ScriptedChatModel(responses=[]), middleware=[count_calls])
    hints = get_type_hints(agent.builder.state_schema, include_extras=True)

    assert hints["model_calls"] == NotRequired[Annotated[int, PrivateStateAttr]]


# -- custom input reaches every hook ------------------------------------------------


class TopicState(AgentState[Any]):
    topic: NotRequired[str]


class UserTopicState(AgentState[Any]):
    audience: NotRequired[str]


def test_custom_input_fields_reach_every_kind_of_hook(driver: Driver) -> None:
    seen: dict[str, tuple[str | None, str | None]] = {}

    def record(where: str, state: Any) -> None:
        seen[where] = (state.get("topic"), state.get("audience"))

    @before_agent(state_schema=TopicState)
    def start(state: TopicState) -> None:
        record("before_agent", state)

    @before_model
    async def prepare(state: dict[str, Any]) -> None:
        record("before_model", state)

    @wrap_model_call
    async def around_model(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        record("wrap_model_call", request.state)
        return await handler(request)

    @after_model
    def check(state: dict[str, Any]) -> None:
        record("after_model", state)

    @wrap_tool_call
    def around_tool(request: ToolCallRequest, handler: Any) -> Any:
        record("wrap_tool_call", request.state)
        return handler(request)

    @after_agent
    async def finish(state: dict[str, Any]) -> None:
        record("after_agent", state)

    model = ScriptedChatModel(responses=[tool_calls(("lookup", {"key": "k"})), "done"])
    agent = create_agent(
        model,
        [lookup],
        middleware=[start, prepare, around_model, check, around_tool, finish],
        state_schema=UserTopicState,
    )

    result = driver.invoke(agent, hi(topic="tides", audience="kids"))

    expected = ("tides", "kids")
    assert seen == dict.fromkeys(
        [
            "before_agent",
            "before_model",
            "wrap_model_call",
            "after_model",
            "wrap_tool_call",
            "after_agent",
        ],
        expected,
    )
    assert (result["topic"], result["audience"]) == expected


# -- runtime context ----------------------------------------------------------------


@dataclass
class UserContext:
    user: str
    tier: str = "free"


class UserContextDict(TypedDict):
    user: str
    tier: str


def context_value(context: Any, key: str) -> Any:
    return context[key] if isinstance(context, dict) else getattr(context, key)


CONTEXTS = [
    pytest.param(UserContext, UserContext(user="ada", tier="pro"), id="dataclass"),
    pytest.param(UserContextDict, UserContextDict(user="ada", tier="pro"), id="typeddict"),
]


@pytest.mark.parametrize(("schema", "context"), CONTEXTS)
def test_hooks_and_requests_carry_the_runtime_context(
    driver: Driver, schema: type, context: Any
) -> None:
    seen: list[tuple[str, str, str]] = []

    def record(where: str, ctx: Any) -> None:
        seen.append((where, context_value(ctx, "user"), context_value(ctx, "tier")))

    @before_agent
    def start(state: Any, runtime: Runtime[Any]) -> None:
        record("before_agent", runtime.context)

    @before_model
    async def prepare(state: Any, runtime: Runtime[Any]) -> None:
        record("before_model", runtime.context)

    @wrap_model_call
    def around_model(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        record("wrap_model_call", request.runtime.context)
        return handler(request)

    @after_model
    async def check(state: Any, runtime: Runtime[Any]) -> None:
        record("after_model", runtime.context)

    @wrap_tool_call
    async def around_tool(request: ToolCallRequest, handler: Any) -> Any:
        record("wrap_tool_call", request.runtime.context)
        return await handler(request)

    @after_agent
    def finish(state: Any, runtime: Runtime[Any]) -> None:
        record("after_agent", runtime.context)

    model = ScriptedChatModel(responses=[tool_calls(("lookup", {"key": "k"})), "done"])
    agent = create_agent(
        model,
        [lookup],
        middleware=[start, prepare, around_model, check, around_tool, finish],
        context_schema=schema,
    )

    driver.invoke(agent, hi(), context=context)

    where = [w for w, _, _ in seen]
    assert where == [
        "before_agent",
        *["before_model", "wrap_model_call", "after_model"],
        "wrap_tool_call",
        *["before_model", "wrap_model_call", "after_model"],
        "after_agent",
    ]
    assert {(user, tier) for _, user, tier in seen} == {("ada", "pro")}


def test_a_dict_context_is_coerced_to_a_dataclass_context_schema(driver: Driver) -> None:
    seen: list[Any] = []

    @before_model
    def prepare(state: Any, runtime: Runtime[UserContext]) -> None:
        seen.append(runtime.context)

    agent = create_agent(
        ScriptedChatModel(responses=["ok"]), middleware=[prepare], context_schema=UserContext
    )
    driver.invoke(agent, hi(), context={"user": "bo"})

    assert seen == [UserContext(user="bo")]


def test_a_middleware_class_can_tailor_the_model_call_to_the_context(driver: Driver) -> None:
    class ByTier(AgentMiddleware[AgentState[Any], UserContext, Any]):
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            prompt = f"You serve {request.runtime.context.user} ({request.runtime.context.tier})."
            return handler(request.override(system_prompt=prompt))

    model = ScriptedChatModel(responses=[tool_calls(("lookup", {"key": "k"})), "done"])
    agent = create_agent(model, [lookup], middleware=[ByTier()], context_schema=UserContext)

    result = driver.invoke(agent, hi(), context=UserContext(user="cy", tier="pro"))

    assert [call.system_prompt for call in model.calls] == ["You serve cy (pro)."] * 2
    assert isinstance(result["messages"][2], ToolMessage)
    assert result["messages"][-1] == AIMessage("done", id=result["messages"][-1].id)
