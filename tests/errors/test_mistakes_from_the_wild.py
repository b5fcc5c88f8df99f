"""Mistakes seen in code from the wild get errors that name what, where, and the fix."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.prebuilt import ToolNode
from langgraph.runtime import Runtime
from pydantic import BaseModel
from typing_extensions import TypedDict

from funcware import AgentMiddleware, before_model, create_agent
from funcware.testing import ScriptedChatModel


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return query


def hi() -> dict[str, Any]:
    return {"messages": [HumanMessage("hi")]}


def test_a_hook_decorator_on_a_class_names_the_class_and_its_file_and_line() -> None:
    with pytest.raises(TypeError) as caught:

        @before_model  # type: ignore[arg-type]
        class Guard:
            def before_model(self, state: Any) -> None:
                return None

    message = str(caught.value)
    assert "the class" in message and "Guard" in message
    assert re.search(r"test_mistakes_from_the_wild\.py:\d+", message), message
    assert "subclass AgentMiddleware" in message


def test_the_same_instance_twice_names_the_middleware_and_hook_in_the_first_sentence() -> None:
    @before_model
    def guard(state: Any) -> None:
        return None

    with pytest.raises(AssertionError) as caught:
        create_agent(ScriptedChatModel(responses=["x"]), middleware=[guard, guard])
    first_line = str(caught.value).splitlines()[0]
    assert first_line.startswith("Please remove duplicate middleware instances. ")
    assert "'guard'" in first_line and "before_model" in first_line


def test_two_instances_of_one_class_name_the_middleware_and_its_hooks() -> None:
    class Wrapper(AgentMiddleware):
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            return handler(request)

    with pytest.raises(AssertionError) as caught:
        create_agent(ScriptedChatModel(responses=["x"]), middleware=[Wrapper(), Wrapper()])
    first_line = str(caught.value).splitlines()[0]
    assert first_line.startswith("Please remove duplicate middleware instances. ")
    assert "'Wrapper'" in first_line and "wrap_model_call" in first_line


def test_a_tool_node_as_tools_starts_with_pythons_sentence_and_says_to_pass_the_tools() -> None:
    with pytest.raises(TypeError) as caught:
        create_agent(ScriptedChatModel(responses=["x"]), ToolNode([lookup]))  # type: ignore[arg-type]
    message = str(caught.value)
    assert message.startswith("'ToolNode' object is not iterable.")
    assert "lookup" in message  # the tools it holds
    assert "tools=[tools]" not in message  # the advice that was also refused
    assert "tools=list(tool_node.tools_by_name.values())" in message


@dataclass
class UserCtx:
    user_id: str


class ModelCtx(BaseModel):
    user_id: str


class DictCtx(TypedDict):
    user_id: str


def _agent_reading_context(schema: type[Any], seen: list[Any]) -> Any:
    @before_model
    def reads(state: Any, runtime: Runtime[Any]) -> None:
        context = runtime.context
        seen.append(context["user_id"] if isinstance(context, dict) else context.user_id)

    return create_agent(
        ScriptedChatModel(responses=["ok"] * 3), middleware=[reads], context_schema=schema
    )


@pytest.mark.parametrize("schema", [UserCtx, ModelCtx, DictCtx])
def test_a_context_of_the_wrong_kind_is_refused_before_any_hook_runs(schema: type[Any]) -> None:
    seen: list[Any] = []
    agent = _agent_reading_context(schema, seen)
    with pytest.raises(TypeError) as caught:
        agent.invoke(hi(), context="u1")
    message = str(caught.value)
    assert "context='u1' (str)" in message
    assert f"context_schema={schema.__name__}" in message
    assert "Pass context=" in message
    assert seen == []


async def test_a_wrong_context_is_refused_under_ainvoke_too() -> None:
    agent = _agent_reading_context(UserCtx, [])
    with pytest.raises(TypeError, match="context_schema=UserCtx"):
        await agent.ainvoke(hi(), context="u1")


def test_a_matching_context_a_dict_of_fields_or_a_duck_typed_object_runs() -> None:
    seen: list[Any] = []
    agent = _agent_reading_context(UserCtx, seen)

    class LooksLikeUserCtx:
        user_id = "u3"

    agent.invoke(hi(), context=UserCtx("u1"))
    agent.invoke(hi(), context={"user_id": "u2"})
    agent.invoke(hi(), context=LooksLikeUserCtx())
    assert seen == ["u1", "u2", "u3"]


def test_a_protocol_context_schema_is_not_checked() -> None:
    class HasUser(Protocol):
        user_id: str

    agent = create_agent(ScriptedChatModel(responses=["ok"]), context_schema=HasUser)
    assert agent.invoke(hi(), context="anything")["messages"][-1].content == "ok"
