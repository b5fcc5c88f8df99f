"""Structured output: strategies, schema kinds, error handling, routing, middleware."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Union

import pytest
from harness import Driver, StreamingScriptedModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command, interrupt
from pydantic import BaseModel
from support import call, calls_tool, hi
from typing_extensions import TypedDict

from funcware import (
    AgentMiddleware,
    AgentState,
    AutoStrategy,
    ModelRequest,
    ModelResponse,
    MultipleStructuredOutputsError,
    ProviderStrategy,
    StructuredOutputError,
    StructuredOutputValidationError,
    ToolStrategy,
    after_model,
    before_model,
    create_agent,
    explain,
    wrap_model_call,
)
from funcware.structured_output import (
    OutputToolBinding,
    ProviderStrategyBinding,
    SchemaSpec,
)
from funcware.testing import ScriptedChatModel, StructuredAnswer


class Forecast(BaseModel):
    """A weather forecast."""

    city: str
    high: int


class Refund(BaseModel):
    """A refund decision."""

    approved: bool


@dataclasses.dataclass
class Ticket:
    """A support ticket."""

    title: str
    priority: int


class Contact(TypedDict):
    """A contact card."""

    name: str
    email: str


SCORE_SCHEMA: dict[str, Any] = {
    "title": "Score",
    "description": "A score out of ten.",
    "type": "object",
    "properties": {"value": {"type": "integer"}},
    "required": ["value"],
}


@tool
def lookup(city: str) -> str:
    """Look up the weather of a city."""
    return f"sunny in {city}"


def run(driver: Driver, agent: Any, inputs: dict[str, Any] | None = None, **kw: Any) -> Any:
    return driver.invoke(agent, inputs if inputs is not None else hi(), **kw)


def replies(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


# -- strategies and schemas, without an agent ----------------------------------------


@pytest.mark.parametrize(
    ("schema", "name", "kind", "description"),
    [
        (Forecast, "Forecast", "pydantic", "A weather forecast."),
        (Ticket, "Ticket", "dataclass", "A support ticket."),
        (Contact, "Contact", "typeddict", "A contact card."),
        (SCORE_SCHEMA, "Score", "json_schema", "A score out of ten."),
    ],
)
def test_a_schema_spec_names_and_classifies_each_schema_kind(
    schema: Any, name: str, kind: str, description: str
) -> None:
    spec = SchemaSpec(schema)
    assert (spec.name, spec.schema_kind, spec.description) == (name, kind, description)
    assert spec.json_schema["type"] == "object"
    assert SchemaSpec(schema, name="other").name == "other"


def test_a_json_schema_without_title_gets_a_generated_name() -> None:
    spec = SchemaSpec({"type": "object", "properties": {}})
    assert re.fullmatch(r"response_format_[0-9a-f]{4}", spec.name)


@pytest.mark.parametrize("schema", [int, "Forecast", list[int], Forecast | Refund])
def test_an_unsupported_schema_is_refused_naming_it(schema: Any) -> None:
    with pytest.raises(ValueError, match=r"^Unsupported schema type: ") as caught:
        ProviderStrategy(schema)
    assert repr(schema) in str(caught.value)
    assert "pass a pydantic BaseModel subclass" in str(caught.value)


def test_a_union_given_to_provider_strategy_points_to_tool_strategy() -> None:
    with pytest.raises(ValueError, match=r"ToolStrategy\(A \| B\)"):
        ProviderStrategy(Forecast | Refund)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "schema",
    [
        Forecast | Refund,
        Union[Forecast, Refund],  # noqa: UP007 - the typing spelling is taken too
        {"oneOf": [Forecast.model_json_schema(), Refund.model_json_schema()]},
    ],
)
def test_tool_strategy_makes_one_tool_per_union_member(schema: Any) -> None:
    strategy = ToolStrategy(schema)
    assert [spec.name for spec in strategy.schema_specs] == ["Forecast", "Refund"]
    assert strategy.handle_errors is True
    assert strategy.tool_message_content is None


def test_provider_strategy_model_kwargs_use_the_json_schema_form() -> None:
    kwargs = ProviderStrategy(Forecast, strict=True).to_model_kwargs()
    assert kwargs["response_format"]["type"] == "json_schema"
    inner = kwargs["response_format"]["json_schema"]
    assert (inner["name"], inner["strict"]) == ("Forecast", True)
    assert inner["schema"]["properties"]["high"] == {"title": "High", "type": "integer"}
    assert (
        "strict"
        not in ProviderStrategy(Forecast).to_model_kwargs()["response_format"]["json_schema"]
    )


def test_bindings_parse_tool_arguments_and_native_json() -> None:
    binding = OutputToolBinding.from_schema_spec(SchemaSpec(Ticket))
    assert binding.tool.name == "Ticket"
    assert binding.parse({"title": "t", "priority": "2"}) == Ticket("t", 2)
    with pytest.raises(ValueError, match=r"^Failed to parse data to Ticket: "):
        binding.parse({"title": "t"})
    native = ProviderStrategyBinding.from_schema_spec(SchemaSpec(Contact))
    blocks = AIMessage(content=[{"type": "text", "text": '{"name": "a", '}, '"email": "b"}'])
    assert native.parse(blocks) == {"name": "a", "email": "b"}
    with pytest.raises(ValueError, match=r"^Native structured output expected valid JSON"):
        native.parse(AIMessage(content="not json"))


# -- the tool strategy in an agent ---------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "args", "expected"),
    [
        (Forecast, {"city": "Oslo", "high": 3}, Forecast(city="Oslo", high=3)),
        (Ticket, {"title": "down", "priority": 1}, Ticket("down", 1)),
        (Contact, {"name": "Ann", "email": "a@x"}, {"name": "Ann", "email": "a@x"}),
        (SCORE_SCHEMA, {"value": 7}, {"value": 7}),
    ],
)
def test_tool_strategy_answers_in_the_model_step_and_ends(
    driver: Driver, schema: Any, args: dict[str, Any], expected: Any
) -> None:
    name = SchemaSpec(schema).name
    model = ScriptedChatModel(responses=[calls_tool(call(name, args, "s1"))])
    agent = create_agent(model, [lookup], response_format=ToolStrategy(schema))
    result = run(driver, agent)
    assert result["structured_response"] == expected
    assert type(result["structured_response"]) is type(expected)
    [reply] = replies(result)
    assert (reply.tool_call_id, reply.name) == ("s1", name)
    assert reply.content == f"Returning structured response: {expected}"
    sent = model.calls[0]
    assert sent.tool_names == ["lookup", name]
    assert sent.tool_choice == "any"


def test_a_plain_schema_without_native_support_uses_tools(driver: Driver) -> None:
    model = ScriptedChatModel(responses=[Forecast(city="Rome", high=30)])
    agent = create_agent(model, response_format=Forecast)
    result = run(driver, agent)
    assert result["structured_response"] == Forecast(city="Rome", high=30)
    assert model.calls[0].response_format is None
    assert model.calls[0].tool_names == ["Forecast"]


def test_tool_message_content_is_the_reply_to_the_structured_call(driver: Driver) -> None:
    model = ScriptedChatModel(responses=[Refund(approved=True)])
    agent = create_agent(
        model, response_format=ToolStrategy(Refund, tool_message_content="Refund recorded.")
    )
    assert [m.content for m in replies(run(driver, agent))] == ["Refund recorded."]


def test_a_tool_less_agent_asks_again_until_it_gets_a_structured_answer(
    driver: Driver,
) -> None:
    model = ScriptedChatModel(responses=["let me think", Refund(approved=False)])
    agent = create_agent(model, response_format=ToolStrategy(Refund))
    result = run(driver, agent)
    assert result["structured_response"] == Refund(approved=False)
    assert len(model.calls) == 2


def test_an_agent_with_tools_ends_on_a_plain_answer_without_structure(driver: Driver) -> None:
    model = ScriptedChatModel(responses=["no structure today"])
    agent = create_agent(model, [lookup], response_format=ToolStrategy(Refund))
    result = run(driver, agent)
    assert result["structured_response"] is None
    assert result["messages"][-1].content == "no structure today"


def test_tools_then_structured_answer(driver: Driver) -> None:
    model = ScriptedChatModel(
        responses=[
            calls_tool(call("lookup", {"city": "Oslo"}, "t1")),
            Forecast(city="Oslo", high=12),
        ]
    )
    agent = create_agent(model, [lookup], response_format=Forecast)
    result = run(driver, agent)
    assert result["structured_response"].high == 12
    assert replies(result)[0].content == "sunny in Oslo"


def test_a_tool_call_beside_the_structured_call_runs_then_the_agent_ends(
    driver: Driver,
) -> None:
    model = ScriptedChatModel(
        responses=[
            calls_tool(
                call("lookup", {"city": "Oslo"}, "t1"),
                call("Forecast", {"city": "Oslo", "high": 4}, "s1"),
            )
        ]
    )
    agent = create_agent(model, [lookup], response_format=Forecast)
    result = run(driver, agent)
    assert result["structured_response"] == Forecast(city="Oslo", high=4)
    assert sorted(m.tool_call_id for m in replies(result)) == ["s1", "t1"]
    assert len(model.calls) == 1


# -- handle_errors -------------------------------------------------------------------

BAD = calls_tool(call("Forecast", {"city": "Oslo", "high": "warm"}, "bad"))
GOOD = Forecast(city="Oslo", high=9)


@pytest.mark.parametrize(
    ("handle_errors", "expected"),
    [
        (True, "Error: Failed to parse structured output for tool 'Forecast': "),
        ("Use an integer for high.", "Use an integer for high."),
        (StructuredOutputValidationError, "Error: Failed to parse"),
        ((KeyError, StructuredOutputError), "Error: Failed to parse"),
        (lambda exc: f"retry: {type(exc).__name__}", "retry: StructuredOutputValidationError"),
    ],
)
def test_a_bad_structured_answer_is_sent_back_for_a_retry(
    driver: Driver, handle_errors: Any, expected: str
) -> None:
    model = ScriptedChatModel(responses=[BAD, GOOD])
    strategy = ToolStrategy(Forecast, handle_errors=handle_errors)
    result = run(driver, create_agent(model, response_format=strategy))
    assert result["structured_response"] == GOOD
    first = replies(result)[0]
    assert first.tool_call_id == "bad"
    assert first.content.startswith(expected)
    if handle_errors is True:
        assert first.content.endswith("\n Please fix your mistakes.")
    assert len(model.calls) == 2


@pytest.mark.parametrize("handle_errors", [False, KeyError, (KeyError, TypeError)])
def test_a_bad_structured_answer_raises_when_not_handled(
    driver: Driver, handle_errors: Any
) -> None:
    model = ScriptedChatModel(responses=[BAD])
    strategy = ToolStrategy(Forecast, handle_errors=handle_errors)
    with pytest.raises(StructuredOutputValidationError) as caught:
        run(driver, create_agent(model, response_format=strategy))
    error = caught.value
    assert error.tool_name == "Forecast"
    assert isinstance(error.source, ValueError)
    assert error.ai_message.tool_calls[0]["id"] == "bad"
    assert str(error).startswith("Failed to parse structured output for tool 'Forecast': ")


def test_a_json_schema_dict_is_not_validated(driver: Driver) -> None:
    model = ScriptedChatModel(responses=[calls_tool(call("Score", {"value": "ten"}, "s"))])
    agent = create_agent(model, response_format=ToolStrategy(SCORE_SCHEMA, handle_errors=False))
    assert run(driver, agent)["structured_response"] == {"value": "ten"}


TWO = calls_tool(
    call("Forecast", {"city": "a", "high": 1}, "f"), call("Refund", {"approved": 1}, "r")
)


def test_several_structured_calls_are_all_answered_with_the_error(driver: Driver) -> None:
    model = ScriptedChatModel(responses=[TWO, Refund(approved=True)])
    agent = create_agent(model, response_format=ToolStrategy(Forecast | Refund))
    result = run(driver, agent)
    assert result["structured_response"] == Refund(approved=True)
    first_two = replies(result)[:2]
    assert [m.tool_call_id for m in first_two] == ["f", "r"]
    assert all("multiple structured responses (Forecast, Refund)" in m.content for m in first_two)


def test_several_structured_calls_raise_when_errors_are_not_handled(driver: Driver) -> None:
    model = ScriptedChatModel(responses=[TWO])
    strategy = ToolStrategy(Union[Forecast, Refund], handle_errors=False)  # noqa: UP007
    with pytest.raises(MultipleStructuredOutputsError) as caught:
        run(driver, create_agent(model, response_format=strategy))
    assert caught.value.tool_names == ["Forecast", "Refund"]
    assert caught.value.ai_message.tool_calls[1]["id"] == "r"


# -- provider-native output and the automatic choice ----------------------------------


class NamedModel(ScriptedChatModel):
    """A scripted model with a provider model name (for the name-based fallback)."""

    model_name: str = "gpt-4o-mini"


def test_provider_strategy_binds_the_format_and_parses_json(driver: Driver) -> None:
    model = ScriptedChatModel(responses=[Ticket("printer", 2)])
    agent = create_agent(model, [lookup], response_format=ProviderStrategy(Ticket))
    result = run(driver, agent)
    assert result["structured_response"] == Ticket("printer", 2)
    assert result["messages"][-1].content == '{"title": "printer", "priority": 2}'
    sent = model.calls[0]
    assert sent.response_format["json_schema"]["name"] == "Ticket"
    assert sent.tool_names == ["lookup"]
    assert sent.tool_choice is None


def test_provider_strategy_runs_tools_first(driver: Driver) -> None:
    model = ScriptedChatModel(
        responses=[calls_tool(call("lookup", {"city": "Bern"}, "t")), '{"city": "Bern", "high": 8}']
    )
    agent = create_agent(model, [lookup], response_format=ProviderStrategy(Forecast))
    assert run(driver, agent)["structured_response"] == Forecast(city="Bern", high=8)


def test_a_bad_native_answer_raises_a_validation_error(driver: Driver) -> None:
    model = ScriptedChatModel(responses=["It will be warm."])
    with pytest.raises(StructuredOutputValidationError, match="expected valid JSON") as caught:
        run(driver, create_agent(model, response_format=ProviderStrategy(Forecast)))
    assert caught.value.ai_message.content == "It will be warm."


@pytest.mark.parametrize(
    "model",
    [
        ScriptedChatModel(responses=[], profile={"structured_output": True}),
        NamedModel(responses=[]),
    ],
)
def test_auto_strategy_goes_native_when_the_model_supports_it(
    driver: Driver, model: ScriptedChatModel
) -> None:
    model.responses = [Forecast(city="Lima", high=20)]
    for response_format in (Forecast, AutoStrategy(Forecast)):
        model._calls.clear()
        result = run(driver, create_agent(model, response_format=response_format))
        assert result["structured_response"] == Forecast(city="Lima", high=20)
        assert model.calls[0].response_format is not None
        assert model.calls[0].tool_names == []


def test_provider_strategy_is_refused_for_a_model_whose_profile_lacks_it(driver: Driver) -> None:
    model = ScriptedChatModel(responses=["{}"], profile={"structured_output": False})
    with pytest.raises(ValueError, match=r"ProviderStrategy\(Forecast\) needs provider-native"):
        run(driver, create_agent(model, response_format=ProviderStrategy(Forecast)))


def test_a_model_that_cannot_bind_tools_gets_a_clear_error(driver: Driver) -> None:
    class NoTools(ScriptedChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    agent = create_agent(NoTools(responses=[]), response_format=ToolStrategy(Refund))
    with pytest.raises(NotImplementedError, match=r"NoTools cannot serve ToolStrategy\(Refund\)"):
        run(driver, agent)


# -- middleware of both kinds ---------------------------------------------------------


def test_wraps_see_the_format_and_the_structured_response(driver: Driver) -> None:
    seen: list[Any] = []

    @wrap_model_call
    def watch(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        response = handler(request)
        seen.append((request.response_format, response.structured_response))
        return response

    model = ScriptedChatModel(responses=[Refund(approved=True)])
    run(driver, create_agent(model, middleware=[watch], response_format=Refund))
    [(response_format, structured)] = seen
    assert isinstance(response_format, AutoStrategy)
    assert response_format.schema is Refund
    assert structured == Refund(approved=True)


def test_a_wrap_narrows_a_union_to_one_schema(driver: Driver) -> None:
    @wrap_model_call
    def refunds_only(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        return handler(request.override(response_format=ToolStrategy(Refund)))

    model = ScriptedChatModel(responses=[Refund(approved=False)])
    agent = create_agent(
        model, middleware=[refunds_only], response_format=ToolStrategy(Forecast | Refund)
    )
    assert run(driver, agent)["structured_response"] == Refund(approved=False)
    assert model.calls[0].tool_names == ["Refund"]


def test_a_wrap_may_not_add_a_schema_the_agent_did_not_declare(driver: Driver) -> None:
    @wrap_model_call
    def switch(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        return handler(request.override(response_format=ToolStrategy(Ticket)))

    agent = create_agent(
        ScriptedChatModel(responses=[]), middleware=[switch], response_format=Refund
    )
    with pytest.raises(ValueError) as caught:
        run(driver, agent)
    message = str(caught.value)
    assert message.startswith(
        "ToolStrategy specifies tool 'Ticket' which wasn't declared in the original "
        "response format when creating the agent."
    )
    assert "middleware 'switch', hook wrap_model_call (defined at " in message
    assert "['Refund']" in message


def test_a_wrap_can_ask_for_native_output_on_an_agent_without_a_format(driver: Driver) -> None:
    @wrap_model_call
    def native(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        assert request.response_format is None
        return handler(request.override(response_format=ProviderStrategy(Refund)))

    model = ScriptedChatModel(responses=['{"approved": true}'])
    result = run(driver, create_agent(model, middleware=[native]))
    assert result["structured_response"] == Refund(approved=True)


def test_a_wrap_can_turn_structured_output_off_for_a_call(driver: Driver) -> None:
    @wrap_model_call
    def plain(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        return handler(request.override(response_format=None))

    model = ScriptedChatModel(responses=["just words"])
    agent = create_agent(model, [lookup], middleware=[plain], response_format=Refund)
    result = run(driver, agent)
    assert result["structured_response"] is None
    assert model.calls[0].tool_names == ["lookup"]
    assert model.calls[0].tool_choice is None


class Audit(AgentMiddleware[Any, Any, Any]):
    """A class middleware that records the structured answers it sees after the model."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def after_model(self, state: AgentState[Any], runtime: Any) -> dict[str, Any] | None:
        self.seen.append(state.get("structured_response"))
        return None


def test_node_hooks_of_both_kinds_see_the_structured_response(driver: Driver) -> None:
    seen: list[Any] = []

    @after_model
    def peek(state: AgentState[Any]) -> None:
        seen.append(state.get("structured_response"))

    audit = Audit()
    model = ScriptedChatModel(responses=["thinking", Refund(approved=True)])
    agent = create_agent(model, middleware=[audit, peek], response_format=ToolStrategy(Refund))
    run(driver, agent)
    assert seen == audit.seen == [None, Refund(approved=True)]


def test_a_retry_wrap_catches_the_error_and_asks_again(driver: Driver) -> None:
    @wrap_model_call
    def retry_once(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        try:
            return handler(request)
        except StructuredOutputError as exc:
            feedback = HumanMessage(f"Your answer {exc.ai_message.content!r} failed: {exc}")
            return handler(request.override(messages=[*request.messages, feedback]))

    model = ScriptedChatModel(responses=["not json", '{"approved": false}'])
    agent = create_agent(model, middleware=[retry_once], response_format=ProviderStrategy(Refund))
    result = run(driver, agent)
    assert result["structured_response"] == Refund(approved=False)
    assert "failed: Failed to parse structured output" in model.calls[1].messages[-1].text


# -- state across turns, streaming, explain -------------------------------------------


def test_a_later_turn_clears_the_previous_structured_response(
    driver: Driver, checkpointer: Any, thread: dict[str, Any]
) -> None:
    model = ScriptedChatModel(responses=[Refund(approved=True), "anything else?"])
    agent = create_agent(
        model, [lookup], response_format=ToolStrategy(Refund), checkpointer=checkpointer
    )
    first = run(driver, agent, hi(), config=thread)
    assert first["structured_response"] == Refund(approved=True)
    second = run(driver, agent, {"messages": [HumanMessage("thanks")]}, config=thread)
    assert second["structured_response"] is None
    assert len(second["messages"]) == 5


def test_streaming_shows_the_structured_answer_in_the_model_update(driver: Driver) -> None:
    model = ScriptedChatModel(responses=[Refund(approved=True), Refund(approved=True)])
    agent = create_agent(model, response_format=Refund)
    chunks = driver.stream(agent, hi(), stream_mode="updates")
    [update] = [c["model"] for c in chunks if "model" in c]
    assert update["structured_response"] == Refund(approved=True)
    assert [type(m).__name__ for m in update["messages"]] == ["AIMessage", "ToolMessage"]
    values = driver.stream(agent, hi(), stream_mode="values")
    assert values[-1]["structured_response"] == Refund(approved=True)


def test_explain_shows_the_response_format() -> None:
    model = ScriptedChatModel(responses=[])
    tool_agent = create_agent(model, response_format=ToolStrategy(Forecast | Refund))
    assert "  response      ToolStrategy(" in str(explain(tool_agent))
    assert "[tools: Forecast, Refund]" in str(explain(tool_agent))
    native = str(explain(create_agent(model, response_format=ProviderStrategy(Ticket))))
    assert "  response      ProviderStrategy(Ticket)" in native
    assert "response" not in str(explain(create_agent(model)))


# -- the scripted model ----------------------------------------------------------------


def test_a_structured_answer_for_a_dict_schema_needs_the_tool_name(driver: Driver) -> None:
    model = ScriptedChatModel(responses=[StructuredAnswer({"value": 3}, tool="Score", id="x")])
    result = run(driver, create_agent(model, response_format=ToolStrategy(SCORE_SCHEMA)))
    assert result["structured_response"] == {"value": 3}
    assert replies(result)[0].tool_call_id == "x"
    unnamed = ScriptedChatModel(responses=[StructuredAnswer({"value": 3})])
    with pytest.raises(
        ValueError, match=r"StructuredAnswer for tool None.*bound tools: \['Score'\]"
    ):
        run(driver, create_agent(unnamed, response_format=ToolStrategy(SCORE_SCHEMA)))


# -- interrupts, class wraps, async-only hooks, the recipe -----------------------------


def test_an_interrupt_after_the_structured_answer_resumes_to_the_end(
    driver: Driver, checkpointer: Any, thread: dict[str, Any]
) -> None:
    @after_model
    def approve(state: AgentState[Any]) -> dict[str, Any] | None:
        answer = state.get("structured_response")
        if answer is not None and not interrupt({"approve": answer.approved}):
            return {"messages": [HumanMessage("not approved")]}
        return None

    model = ScriptedChatModel(responses=[Refund(approved=True)])
    agent = create_agent(
        model, middleware=[approve], response_format=Refund, checkpointer=checkpointer
    )
    paused = run(driver, agent, hi(), config=thread)
    assert paused["__interrupt__"][0].value == {"approve": True}
    assert paused["structured_response"] == Refund(approved=True)
    done = run(driver, agent, Command(resume=True), config=thread)
    assert done["structured_response"] == Refund(approved=True)
    assert len(model.calls) == 1
    assert not driver.get_state(agent, thread).next


def test_an_interrupt_before_the_model_then_a_structured_answer(
    driver: Driver, checkpointer: Any, thread: dict[str, Any]
) -> None:
    @before_model
    def ask_first(state: AgentState[Any]) -> dict[str, Any]:
        reply = interrupt("which city?")
        return {"messages": [HumanMessage(f"the city is {reply}")]}

    model = ScriptedChatModel(responses=[Forecast(city="Turku", high=-2)])
    agent = create_agent(
        model, middleware=[ask_first], response_format=Forecast, checkpointer=checkpointer
    )
    assert run(driver, agent, hi(), config=thread)["__interrupt__"][0].value == "which city?"
    done = run(driver, agent, Command(resume="Turku"), config=thread)
    assert done["structured_response"] == Forecast(city="Turku", high=-2)
    assert model.calls[0].messages[-1].text == "the city is Turku"


class Narrow(AgentMiddleware[Any, Any, Any]):
    """A class wrap (async only) that narrows the union and records the answer."""

    def __init__(self) -> None:
        self.answers: list[Any] = []

    async def awrap_model_call(self, request: ModelRequest[Any], handler: Any) -> Any:
        response = await handler(request.override(response_format=ToolStrategy(Ticket)))
        self.answers.append(response.structured_response)
        return response


def test_an_async_only_class_wrap_works_in_both_modes(driver: Driver) -> None:
    narrow = Narrow()
    model = ScriptedChatModel(responses=[Ticket("login broken", 1)])
    agent = create_agent(model, middleware=[narrow], response_format=ToolStrategy(Ticket | Contact))
    assert run(driver, agent)["structured_response"] == Ticket("login broken", 1)
    assert narrow.answers == [Ticket("login broken", 1)]
    assert model.calls[0].tool_names == ["Ticket"]


def test_a_wrap_may_answer_with_its_own_structured_response(driver: Driver) -> None:
    @wrap_model_call
    def cached(request: ModelRequest[Any], handler: Any) -> ModelResponse[Any]:
        return ModelResponse(result=[AIMessage("from cache")], structured_response={"hit": 1})

    model = ScriptedChatModel(responses=[])
    result = run(driver, create_agent(model, [lookup], middleware=[cached], response_format=Refund))
    assert result["structured_response"] == {"hit": 1}
    assert model.calls == []


def test_the_triage_recipe_offers_escalation_only_to_callers_allowed_it() -> None:
    from funcware.cookbook import structured_triage as recipe

    model = ScriptedChatModel(responses=[StructuredAnswer(recipe.Escalation("legal threat"))])
    agent = recipe.build(model)
    state = agent.invoke(hi(), context=recipe.Caller(can_escalate=True))
    assert state["structured_response"] == recipe.Escalation("legal threat")
    assert model.calls[0].tool_names == ["Triage", "Escalation"]
    _, demo_state = recipe.demo()
    assert demo_state["structured_response"].priority == 1


def test_messages_streaming_carries_the_structured_call(driver: Driver) -> None:
    model = StreamingScriptedModel(responses=[Refund(approved=True)])
    agent = create_agent(model, response_format=Refund)
    chunks = driver.stream(agent, hi(), stream_mode=["messages", "values"])
    streamed = [item for mode, item in chunks if mode == "messages"]
    calls = [m for m, _ in streamed if getattr(m, "tool_call_chunks", None)]
    assert calls[0].tool_call_chunks[0]["name"] == "Refund"
    answered = [m for m, _ in streamed if isinstance(m, ToolMessage)]
    assert answered[0].content == "Returning structured response: approved=True"
    final = [item for mode, item in chunks if mode == "values"][-1]
    assert final["structured_response"] == Refund(approved=True)


def test_provider_strategy_asks_openai_compatible_models_for_strict_tools(
    driver: Driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    class BaseChatOpenAI(ScriptedChatModel):  # known by its class, as langchain-openai's is
        use_responses_api: bool = False

    BaseChatOpenAI.__module__ = "langchain_openai.chat_models.base"
    chat = BaseChatOpenAI(responses=['{"approved": true}'])
    run(driver, create_agent(chat, response_format=ProviderStrategy(Refund)))
    assert chat.calls[0].settings["strict"] is True
    responses_api = BaseChatOpenAI(responses=['{"approved": true}'], use_responses_api=True)
    run(driver, create_agent(responses_api, response_format=ProviderStrategy(Refund)))
    assert "strict" not in responses_api.calls[0].settings
    plain = ScriptedChatModel(responses=['{"approved": true}'])
    run(driver, create_agent(plain, response_format=ProviderStrategy(Refund)))
    assert "strict" not in plain.calls[0].settings
