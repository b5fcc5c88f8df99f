"""Error wording and error classes: the right article and plural; every error class exported."""

from __future__ import annotations

from typing import Any

import pytest
from support import hi

from funcware import (
    after_model,
    before_model,
    create_agent,
)
from funcware.hooks.wording import a, plural
from funcware.testing import ScriptedChatModel

# -- grammar ----------------------------------------------------------------------


def test_messages_use_the_right_article_and_plural() -> None:
    assert [a("after_model"), a("AIMessage"), a("dict"), a("int"), a("str")] == [
        "an after_model",
        "an AIMessage",
        "a dict",
        "an int",
        "a str",
    ]
    assert [plural(1, "response"), plural(2, "response")] == ["1 response", "2 responses"]

    @after_model
    def says_hello(state: Any) -> Any:
        return "hello"

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[says_hello])
    with pytest.raises(TypeError, match="; an after_model hook must return"):
        agent.invoke(hi())
    model = ScriptedChatModel(responses=["one"])
    model.invoke("x")
    with pytest.raises(Exception, match="called 2 times but scripted with 1 response;"):
        model.invoke("y")


# -- every public error class from funcware ---------------------------------------


def test_every_error_class_is_exported_from_funcware_and_funcware_errors() -> None:
    import funcware.errors

    for name in funcware.errors.__all__:
        error = getattr(funcware, name)
        assert issubclass(error, Exception) and name in funcware.__all__
        assert getattr(funcware.errors, name) is error

    @before_model
    def jumps(state: Any) -> Any:
        return {"jump_to": "end"}

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[jumps])
    with pytest.raises(funcware.InvalidJumpError):
        agent.invoke(hi())
