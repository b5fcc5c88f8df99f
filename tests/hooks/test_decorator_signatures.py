"""What ``help()`` and ``inspect.signature`` show for each hook decorator: its own options,
each with the type its TypedDict in ``funcware.hooks.option_types`` gives it."""

from __future__ import annotations

import inspect
import pydoc
from typing import Any

import pytest

import funcware
from funcware.hooks import option_types as options

DECORATORS: dict[str, type[Any]] = {
    "before_agent": options.NodeOptions,
    "before_model": options.NodeOptions,
    "after_model": options.AfterModelOptions,
    "after_agent": options.AfterAgentOptions,
    "wrap_model_call": options.WrapModelCallOptions,
    "wrap_tool_call": options.WrapToolCallOptions,
    "dynamic_prompt": options.HookOptions,
}


def _keywords(name: str) -> dict[str, inspect.Parameter]:
    parameters = inspect.signature(getattr(funcware, name)).parameters.values()
    return {p.name: p for p in parameters if p.kind is p.KEYWORD_ONLY}


@pytest.mark.parametrize("name", sorted(DECORATORS))
def test_the_signature_lists_exactly_the_decorators_options(name: str) -> None:
    assert set(_keywords(name)) == set(DECORATORS[name].__annotations__)


@pytest.mark.parametrize("name", sorted(DECORATORS))
def test_every_option_is_shown_with_its_type_not_object(name: str) -> None:
    for option, parameter in _keywords(name).items():
        declared = DECORATORS[name].__annotations__[option]
        assert parameter.annotation == getattr(declared, "__forward_arg__", declared), option
        assert parameter.annotation not in ("object", object, "Any", inspect.Parameter.empty)


def test_help_on_a_node_decorator_shows_typed_options() -> None:
    text = pydoc.render_doc(funcware.before_model, renderer=pydoc.plaintext)
    assert "can_jump_to: 'Sequence[JumpTo] | None'" in text
    assert "reads: 'Collection[str] | None'" in text
    assert "'object'" not in text
    assert "always:" not in text  # after_agent's option only


def test_an_option_of_another_hook_still_gets_its_own_message() -> None:
    with pytest.raises(TypeError, match="only after_agent hooks can always run"):
        funcware.before_model(always=True)(lambda state: None)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="applies to after_model and wrap_model_call hooks"):
        funcware.before_agent(stream="buffer")(lambda state: None)  # type: ignore[call-overload]


# -- help() shows the options, with an example -------------------------------------


@pytest.mark.parametrize(
    "decorator",
    [
        "before_agent",
        "before_model",
        "after_model",
        "after_agent",
        "wrap_model_call",
        "wrap_tool_call",
        "dynamic_prompt",
        "hook_config",
    ],
)
def test_help_on_a_decorator_lists_its_options_and_an_example(decorator: str) -> None:
    text = pydoc.render_doc(getattr(funcware, decorator), renderer=pydoc.plaintext)
    assert "**options" not in text
    assert "Options:" in text and "Example::" in text
    signature, doc = text.splitlines()[2], text.split("Options:")[1]
    for option in ("name",) if decorator != "hook_config" else ("can_jump_to",):
        assert f"{option}: " in signature and f"    {option}: " in doc
