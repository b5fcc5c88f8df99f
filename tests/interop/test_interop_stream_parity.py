"""Streaming parity with LangChain 1.5: transformers, projections, streams."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any

import pytest
from harness import tool_calls
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.types import Command
from support import hi, require_langchain
from typing_extensions import NotRequired

import funcware
from funcware import create_agent
from funcware.interop import to_langchain
from funcware.testing import ScriptedChatModel

lc_agents = require_langchain("langchain.agents")
lc_middleware = require_langchain("langchain.agents.middleware")

pytestmark = pytest.mark.filterwarnings("ignore:The v3 streaming protocol")


@tool
def directory(person: str) -> str:
    """Find a person's address."""
    return f"{person} is at bob@example.com"


def _model() -> ScriptedChatModel:
    return ScriptedChatModel(
        responses=[tool_calls(("directory", {"person": "bob"})), "Write to alice@example.com"]
    )


def _pii_agent(factory: Any) -> Any:
    pii = lc_middleware.PIIMiddleware("email", apply_to_output=True)
    return factory(_model(), [directory], middleware=[pii], name="mailer")


def test_pii_middleware_keeps_the_address_out_of_the_v3_stream() -> None:
    agent = _pii_agent(create_agent)
    run = agent.stream_events(hi(), version="v3")
    events = list(run)
    streamed = repr([event["params"]["data"] for event in events])
    assert "alice@example.com" not in streamed
    assert "[REDACTED_EMAIL]" in streamed
    final = _pii_agent(create_agent).invoke(hi())["messages"][-1]
    assert "alice@example.com" not in final.text


def test_pii_stream_is_langchains() -> None:
    def methods_and_texts(factory: Any) -> list[tuple[str, str]]:
        run = _pii_agent(factory).stream_events(hi(), version="v3")
        out = []
        for event in run:
            data = event["params"]["data"]
            if event["method"] == "messages":
                out.append(("messages", data[0].text))
            elif event["method"] == "tools":
                out.append(("tools", str(data.get("event"))))
            else:
                out.append((event["method"], ""))
        return out

    assert methods_and_texts(create_agent) == methods_and_texts(lc_agents.create_agent)


def test_same_transformers_as_langchain_for_the_same_stack() -> None:
    ours = [getattr(f, "func", f) for f in _pii_agent(create_agent).stream_transformers]
    theirs = [getattr(f, "func", f) for f in _pii_agent(lc_agents.create_agent).stream_transformers]
    assert [f.__name__ for f in ours] == [f.__name__ for f in theirs]
    assert ours[0] is theirs[0]  # langgraph's ToolCallTransformer itself
    assert ours[2:] == theirs[2:]


def test_to_langchain_keeps_a_funcware_middlewares_transformers() -> None:
    from transformers_support import MethodLog, Redacting

    converted = to_langchain(Redacting())
    assert list(converted.transformers) == list(Redacting.transformers)
    agent = lc_agents.create_agent(ScriptedChatModel(responses=["ok"]), middleware=[converted])
    assert Redacting.transformers[0] in agent.stream_transformers
    assert MethodLog not in agent.stream_transformers


def test_run_metadata_matches_langchains() -> None:
    def metadata(factory: Any) -> dict[str, Any]:
        agent = factory(ScriptedChatModel(responses=["ok"]), name="bot")
        return dict(agent.config["metadata"])

    assert metadata(create_agent) == metadata(lc_agents.create_agent)


# -- the same stacks, side by side: invoke() and the messages/updates/values streams -----


def _stack(lib: Any, case: str) -> tuple[list[Any], list[Any]]:
    """``(middleware, model script)`` for ``case``, built with ``lib``'s decorators."""

    class Counted(lib.AgentState):  # type: ignore[misc, name-defined]
        count: NotRequired[int]
        log: NotRequired[Annotated[list[str], operator.add]]

    @lib.wrap_model_call(state_schema=Counted)
    def logged(request: Any, handler: Any) -> Any:
        return lib.ExtendedModelResponse(
            model_response=handler(request),
            command=Command(update={"log": [f"saw {len(request.messages)}"], "count": 2}),
        )

    @lib.wrap_model_call
    def cached(request: Any, handler: Any) -> Any:
        return lib.ExtendedModelResponse(
            model_response=lib.ModelResponse(result=[AIMessage("from the cache")]),
            command=Command(update={"messages": [HumanMessage("cache hit")]}),
        )

    @lib.wrap_model_call
    def fallback(request: Any, handler: Any) -> Any:
        try:
            return handler(request)
        except RuntimeError:
            return AIMessage("the fallback answer")

    @lib.wrap_model_call
    def rewrite(request: Any, handler: Any) -> Any:
        message = handler(request).result[0]
        return AIMessage(f"[{message.text}]", tool_calls=message.tool_calls)

    @lib.after_model(can_jump_to=["model"])
    def retry_invalid(state: Any, runtime: Any) -> Any:
        last = state["messages"][-1]
        return {"jump_to": "model"} if getattr(last, "invalid_tool_calls", None) else None

    invalid = AIMessage(
        "",
        invalid_tool_calls=[
            {
                "name": "directory",
                "args": "{",
                "id": "bad1",
                "error": "x",
                "type": "invalid_tool_call",
            }
        ],
    )
    call = tool_calls(("directory", {"person": "bob"}))
    cases: dict[str, tuple[list[Any], list[Any]]] = {
        "cached": ([logged, cached], []),
        "fallback": ([logged, fallback], [RuntimeError("down"), "unused"]),
        "rewrite": ([rewrite, logged], [call, "done"]),
        "invalid": ([retry_invalid, logged], [invalid, "fixed"]),
        "invalid-rewrite": ([retry_invalid, rewrite, cached], [invalid, "fixed"]),
    }
    return cases[case]


def _shape(value: Any) -> Any:
    if isinstance(value, BaseMessage):
        return (value.type, value.text, getattr(value, "tool_call_id", None))
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_shape(item) for item in value]
    return value


def _observe(lib: Any, factory: Any, case: str) -> dict[str, Any]:
    def agent() -> Any:
        middleware, script = _stack(lib, case)
        return factory(ScriptedChatModel(responses=script), [directory], middleware=middleware)

    seen: dict[str, Any] = {"invoke": _shape(agent().invoke(hi()))}
    seen["messages"] = [
        (_shape(message), metadata["langgraph_node"])
        for message, metadata in agent().stream(hi(), stream_mode="messages")
    ]
    for mode in ("updates", "values"):
        seen[mode] = _shape(list(agent().stream(hi(), stream_mode=mode)))
    return seen


@pytest.mark.parametrize("case", ["cached", "fallback", "rewrite", "invalid", "invalid-rewrite"])
def test_streams_match_langchains(case: str) -> None:
    ours = _observe(funcware, create_agent, case)
    theirs = _observe(lc_middleware, lc_agents.create_agent, case)
    assert ours == theirs


# -- compose() as one LangChain node ------------------------------------------------------


def _tags(left: list[str] | None, right: list[str]) -> list[str]:
    return [*(left or []), *right]


def test_a_composite_in_langchain_folds_with_the_agents_reducers() -> None:
    class Tagged(lc_middleware.AgentState):  # type: ignore[misc, name-defined]
        tags: NotRequired[Annotated[list[str], _tags]]

    seen: list[list[str]] = []

    @funcware.before_model
    def tag_a(state: Any) -> dict[str, Any]:
        return {"tags": ["a"]}

    @funcware.before_model
    def tag_b(state: Any) -> dict[str, Any]:
        seen.append(list(state.get("tags", [])))
        return {"tags": ["b"]}

    def run(middleware: list[Any], is_async: bool) -> Any:
        seen.clear()
        agent = lc_agents.create_agent(
            ScriptedChatModel(responses=["ok"]), middleware=middleware, state_schema=Tagged
        )
        inputs = {**hi(), "tags": ["t"]}
        result = asyncio.run(agent.ainvoke(inputs)) if is_async else agent.invoke(inputs)
        return result["tags"], list(seen)

    for is_async in (False, True):
        composite = run([to_langchain(funcware.compose(tag_a, tag_b))], is_async)
        separate = run([to_langchain(tag_a), to_langchain(tag_b)], is_async)
        assert composite == separate == (["t", "a", "b"], [["t", "a"]])


def test_a_composite_whose_later_member_jumps_to_model_is_refused_at_conversion() -> None:
    @funcware.before_model
    def note(state: Any) -> None:
        return None

    @funcware.before_model(can_jump_to=["model"])
    def again(state: Any) -> dict[str, Any] | None:
        if len(state["messages"]) == 1:
            return {"messages": [HumanMessage("again")], "jump_to": "model"}
        return None

    with pytest.raises(ValueError, match=r"cannot convert middleware 'again', hook before_model"):
        to_langchain(funcware.compose(note, again))
    # the advice works: one by one, the jump goes back to the first before_model node
    agent = lc_agents.create_agent(
        ScriptedChatModel(responses=["ok"]), middleware=[to_langchain(note), to_langchain(again)]
    )
    assert [m.text for m in agent.invoke(hi())["messages"]] == ["hi", "again", "ok"]
    ours = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[note, again])
    assert [m.text for m in ours.invoke(hi())["messages"]] == ["hi", "again", "ok"]


def test_with_langchain_installed_subagent_handles_are_langchains() -> None:
    """Code written for LangChain checks ``isinstance(handle, SubagentRunStream)`` (deepagents'
    tests do): with LangChain installed, a funcware agent streams LangChain's handle class."""
    lc_subagents = require_langchain("langchain.agents._subagent_transformer")
    inner = create_agent(ScriptedChatModel(responses=["inner answer"]), name="helper")

    @tool
    def ask_helper(question: str) -> str:
        """Ask the helper agent."""
        return str(inner.invoke({"messages": [HumanMessage(question)]})["messages"][-1].text)

    outer = create_agent(
        ScriptedChatModel(responses=[tool_calls(("ask_helper", {"question": "q"})), "done"]),
        [ask_helper],
        name="boss",
    )
    assert list(outer.stream_transformers)[1] is lc_subagents.SubagentTransformer
    run = outer.stream_events(hi(), version="v3")
    handles = list(run.subagents)
    assert handles and all(isinstance(h, lc_subagents.SubagentRunStream) for h in handles)
