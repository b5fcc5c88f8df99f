"""What building an agent reads once, and what it still reads on every build.

A hook function's injectable parameters are read once per function, and a state schema's
derived schemas once per class; what a user can change on an instance (``on_error``,
declared effects) is read again on every build, and a schema conflict is warned about on
every build.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from typing_extensions import NotRequired

from funcware import AgentMiddleware, AgentState, MiddlewareOrderError, create_agent
from funcware.errors import StateSchemaConflictWarning
from funcware.hooks import injection
from funcware.testing import ScriptedChatModel


class _CountState(AgentState[Any]):
    count: NotRequired[int]


class _OtherCountState(AgentState[Any]):
    count: NotRequired[str]


class _Counting(AgentMiddleware[Any, Any, Any]):
    state_schema = _CountState

    def __init__(self, name: str) -> None:
        super().__init__()
        self._name = name
        self.configs: list[RunnableConfig] = []

    @property
    def name(self) -> str:
        return self._name

    def before_model(self, state: Any, runtime: Any, *, config: RunnableConfig) -> Any:
        self.configs.append(config)
        return {"count": state.get("count", 0) + 1}


def _model() -> ScriptedChatModel:
    return ScriptedChatModel(responses=["done"] * 4)


def test_a_hook_signature_is_read_once_per_function_and_serves_every_instance(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[Any] = []
    real = injection._injection

    def counting(func: Any) -> Any:
        reads.append(func)
        return real(func)

    monkeypatch.setattr(injection, "_injection", counting)

    class Fresh(_Counting):  # a class no earlier test has read
        pass

    first, second = Fresh("first"), Fresh("second")
    agent = create_agent(_model(), middleware=[first, second])
    again = create_agent(_model(), middleware=[first])
    assert len(reads) == 1
    result = agent.invoke({"messages": [HumanMessage("hi")]})
    again.invoke({"messages": [HumanMessage("hi")]})
    assert result["count"] == 2
    assert len(first.configs) == 2 and len(second.configs) == 1
    assert all(isinstance(c, dict) and "configurable" in c for c in first.configs)


def test_an_on_error_changed_on_the_instance_counts_at_the_next_build() -> None:
    class Failing(AgentMiddleware[Any, Any, Any]):
        def before_model(self, state: Any, runtime: Any) -> Any:
            raise RuntimeError("broken")

    failing = Failing()
    with pytest.raises(RuntimeError, match="broken"):
        create_agent(_model(), middleware=[failing]).invoke({"messages": [HumanMessage("x")]})
    failing.on_error = "continue"
    result = create_agent(_model(), middleware=[failing]).invoke({"messages": [HumanMessage("x")]})
    assert result["messages"][-1].content == "done"


def test_a_requirement_set_on_the_instance_counts_at_the_next_build() -> None:
    class Plain(AgentMiddleware[Any, Any, Any]):
        def before_model(self, state: Any, runtime: Any) -> Any:
            return None

    plain = Plain()
    create_agent(_model(), middleware=[plain])
    plain.requires = ("absent",)  # type: ignore[attr-defined]
    with pytest.raises(MiddlewareOrderError, match="absent"):
        create_agent(_model(), middleware=[plain])


def test_agents_with_the_same_schemas_share_their_state_schema() -> None:
    one = create_agent(_model(), middleware=[_Counting("a")])
    two = create_agent(_model(), middleware=[_Counting("b")])
    bare = create_agent(_model())
    assert one.builder.state_schema is two.builder.state_schema
    assert bare.builder.state_schema is not one.builder.state_schema
    assert "count" in one.builder.state_schema.__annotations__
    assert "count" not in bare.builder.state_schema.__annotations__


def test_a_schema_conflict_is_warned_about_on_every_build() -> None:
    class Other(AgentMiddleware[Any, Any, Any]):
        state_schema = _OtherCountState

        def before_model(self, state: Any, runtime: Any) -> Any:
            return None

    for _ in range(2):
        with pytest.warns(StateSchemaConflictWarning, match="State field 'count'"):
            create_agent(_model(), middleware=[_Counting("a"), Other()])
