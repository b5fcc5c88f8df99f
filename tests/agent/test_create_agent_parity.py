"""create_agent's parameters, run metadata, tool order and the smaller parity points.

Runs without langchain; the side-by-side checks against LangChain live in
``tests/interop/test_interop_parity.py``.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from fresh_python import run_python
from harness import tool_calls
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END
from typing_extensions import NotRequired

from funcware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    after_model,
    create_agent,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.testing import ScriptedChatModel

LANGCHAIN_PARAMETERS = [
    "model",
    "tools",
    "system_prompt",
    "middleware",
    "response_format",
    "state_schema",
    "context_schema",
    "checkpointer",
    "store",
    "interrupt_before",
    "interrupt_after",
    "debug",
    "name",
    "cache",
    "transformers",
]


def test_create_agent_takes_langchains_parameters_in_its_order() -> None:
    parameters = inspect.signature(create_agent).parameters
    # LangChain's, in its order, then funcware's own keywords
    assert list(parameters)[: len(LANGCHAIN_PARAMETERS)] == LANGCHAIN_PARAMETERS
    assert list(parameters)[len(LANGCHAIN_PARAMETERS) :] == [
        "order",
        "effects",
        "tool_pairing",
        "node_policies",
    ]
    assert parameters["response_format"].default is None
    assert parameters["transformers"].default is None


def test_response_format_and_transformers_none_are_accepted() -> None:
    create_agent(ScriptedChatModel(responses=[]), response_format=None, transformers=None)


def test_transformers_are_registered_on_the_compiled_graph() -> None:
    def factory(scope: tuple[str, ...]) -> Any:
        raise AssertionError("not streamed here")

    agent = create_agent(ScriptedChatModel(responses=[]), transformers=[factory])
    assert factory in agent.stream_transformers


def test_the_run_metadata_is_langchains() -> None:
    named = create_agent(ScriptedChatModel(responses=[]), name="helper")
    plain = create_agent(ScriptedChatModel(responses=[]))

    assert named.config is not None and plain.config is not None
    assert named.config["metadata"] == {
        "ls_integration": "langchain_create_agent",
        "lc_agent_name": "helper",
    }
    assert plain.config["metadata"] == {"ls_integration": "langchain_create_agent"}
    assert named.config["recursion_limit"] == 9_999


def test_a_model_name_without_the_langchain_extra_names_the_extra() -> None:
    result = run_python(
        """
        import json
        from funcware import create_agent
        try:
            create_agent("openai:gpt-5")
        except ImportError as exc:
            print(json.dumps({"message": str(exc)}))
        """,
        block=True,
    )
    assert "pip install -e '.[langchain]' from a funcware checkout" in str(result["message"])
    assert "init_chat_model" in str(result["message"])


def test_a_model_that_is_neither_a_chat_model_nor_a_name_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="BaseChatModel"):
        create_agent(42)  # type: ignore[arg-type]


@tool
def agent_tool(x: str) -> str:
    """The agent's own tool."""
    return x


@tool
def middleware_tool(x: str) -> str:
    """A tool a middleware brings."""
    return x


class BringsATool(AgentMiddleware[AgentState[Any], Any, Any]):
    tools = [middleware_tool]  # noqa: RUF012


def test_middleware_tools_come_first_in_the_request_the_binding_and_the_tool_node() -> None:
    seen: list[list[str]] = []

    @wrap_model_call
    def record(request: ModelRequest[Any], handler: Any) -> Any:
        seen.append([t.name for t in request.tools if not isinstance(t, dict)])
        return handler(request)

    model = ScriptedChatModel(responses=[tool_calls(("nope", {})), "done"])
    agent = create_agent(model, [agent_tool], middleware=[BringsATool(), record])
    messages = agent.invoke({"messages": [HumanMessage("hi")]})["messages"]

    assert seen[0] == ["middleware_tool", "agent_tool"]
    assert model.calls[0].tool_names == ["middleware_tool", "agent_tool"]
    reply = next(m for m in messages if isinstance(m, ToolMessage))
    assert "middleware_tool, agent_tool" in str(reply.content)


def test_wrap_tool_call_takes_a_state_schema() -> None:
    class Audited(AgentState[Any]):
        audited: NotRequired[int]

    @wrap_tool_call(state_schema=Audited)
    def audit(request: Any, handler: Any) -> Any:
        return handler(request)

    agent = create_agent(ScriptedChatModel(responses=[]), [agent_tool], middleware=[audit])
    assert audit.state_schema is Audited
    assert "audited" in agent.builder.state_schema.__annotations__


def test_the_model_loops_back_only_when_something_after_it_can_answer_tool_calls() -> None:
    bare = create_agent(ScriptedChatModel(responses=[]), [agent_tool]).get_graph()
    model_edges = {(e.target, e.conditional) for e in bare.edges if e.source == "model"}
    assert model_edges == {("tools", True), (END, True)}

    @after_model
    def check(state: Any) -> None:
        return None

    looped = create_agent(ScriptedChatModel(responses=[]), [agent_tool], middleware=[check])
    exits = {e.target for e in looped.get_graph().edges if e.source == "check.after_model"}
    assert exits == {"tools", END, "model"}
