"""Messages for the slips a new user made in a walk-through: each says what happened and
where, and never hints at a fix that does not apply.

A ``dynamic_prompt`` that returns ``None`` has no handler to forget; a wrap that returns
``handler`` uncalled is told so; a hook decorator put on a class names the line where it
was applied; a ``context`` of the wrong type names the hook that reads it; an undeclared
jump target gets its fix sentence whatever else was declared; an unknown recipe name
suggests the closest; ``--list`` prints plain text.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import Command

from funcware import (
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
    before_model,
    create_agent,
    dynamic_prompt,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.cookbook import __main__ as tour
from funcware.cookbook import load
from funcware.errors import InvalidJumpError
from funcware.testing import ScriptedChatModel


def _hi() -> dict[str, Any]:
    return {"messages": [HumanMessage("hi")]}


def test_a_dynamic_prompt_returning_none_gets_no_handler_hint() -> None:
    @dynamic_prompt
    def prompt(request: ModelRequest[Any]) -> str:
        return None  # type: ignore[return-value]

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[prompt])
    with pytest.raises(TypeError) as error:
        agent.invoke(_hi())
    assert "returned None; it must return a str or a SystemMessage" in str(error.value)
    assert "return handler(request)" not in str(error.value)


def test_a_model_wrap_returning_handler_uncalled_is_told_so() -> None:
    @wrap_model_call
    def lazy(
        request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> Any:
        return handler

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[lazy])
    with pytest.raises(TypeError) as error:
        agent.invoke(_hi())
    text = str(error.value)
    assert "returns `handler` without calling it" in text
    assert "did you mean `return handler(request)`?" in text
    assert "returned a method" not in text


def test_a_tool_wrap_returning_handler_uncalled_is_told_so() -> None:
    def ping() -> str:
        """Answer pong."""
        return "pong"

    @wrap_tool_call
    def lazy(
        request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]
    ) -> Any:
        return handler

    call = {"name": "ping", "args": {}, "id": "p1"}
    model = ScriptedChatModel(responses=[AIMessage("", tool_calls=[call]), "done"])
    agent = create_agent(model, [ping], middleware=[lazy])
    with pytest.raises(TypeError, match="returns `handler` without calling it"):
        agent.invoke(_hi())


def test_a_hook_decorator_on_a_class_names_the_line_it_was_applied_at() -> None:
    line = inspect.currentframe().f_lineno + 3  # type: ignore[union-attr]
    with pytest.raises(TypeError) as error:

        @before_model
        class Guard:
            pass

    # Python 3.10 gives a decorator's call the line of the class statement under it.
    lines = (line,) if sys.version_info >= (3, 11) else (line, line + 1)
    assert any(f"@before_model applied at {__file__}:{n}" in str(error.value) for n in lines)
    assert "subclass AgentMiddleware" in str(error.value)

    line = inspect.currentframe().f_lineno + 3  # type: ignore[union-attr]
    with pytest.raises(TypeError) as error:

        @wrap_model_call(name="guard")
        class Other:
            pass

    lines = (line,) if sys.version_info >= (3, 11) else (line, line + 1)
    assert any(f"@wrap_model_call applied at {__file__}:{n}" in str(error.value) for n in lines)


@dataclass
class UserContext:
    user_id: str


def test_a_context_of_the_wrong_type_names_the_hook_that_reads_it() -> None:
    @before_model
    def greet(state: Any, runtime: Runtime[UserContext]) -> None:
        assert runtime.context.user_id

    @before_model
    def unrelated(state: Any) -> None:
        return None

    agent = create_agent(
        ScriptedChatModel(responses=["ok"]),
        middleware=[unrelated, greet],
        context_schema=UserContext,
    )
    with pytest.raises(TypeError) as error:
        agent.invoke(_hi(), context="u1")
    text = str(error.value)
    assert "middleware 'greet', hook before_model (defined at" in text
    assert re.search(r"test_walkthrough_messages\.py:\d+", text)
    assert "'unrelated'" not in text
    assert "Pass context=UserContext(...) or a dict of its fields" in text


@pytest.mark.parametrize("declared", [[], ["model"]])
def test_an_undeclared_jump_gets_its_fix_whatever_else_was_declared(declared: list[str]) -> None:
    @before_model(can_jump_to=declared)  # type: ignore[arg-type]
    def stop(state: Any) -> dict[str, Any]:
        return {"jump_to": "end"}

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[stop])
    with pytest.raises(InvalidJumpError) as error:
        agent.invoke(_hi())
    targets = ", ".join(repr(t) for t in [*declared, "end"])
    assert f"declare it with @before_model(can_jump_to=[{targets}])" in str(error.value)


def test_an_unknown_recipe_name_suggests_the_closest(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(
        KeyError, match=r"no recipe named 'model_retri' \(did you mean 'model_retry'\?\)"
    ):
        load("model_retri")
    with pytest.raises(SystemExit):
        tour.main(["pii_redact"])
    assert "'pii_redact' (did you mean 'pii_redaction'?)" in capsys.readouterr().err


def test_the_recipe_list_is_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert tour.main(["--list"]) == 0
    listing = capsys.readouterr().out
    assert "prompt_from_context" in listing and "runtime.context" in listing
    assert "``" not in listing and ":class:" not in listing
