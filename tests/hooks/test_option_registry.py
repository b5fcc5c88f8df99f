"""One source of truth for the hook decorators' options.

The registry (``funcware.hooks.options``) says which decorator takes which option; the
``TypedDict``s a static checker reads, ``hook_config``'s keywords, each decorator's
``help()`` and its refusals all agree with it.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import funcware
from funcware.hooks import option_types, options

TYPED = {
    "before_agent": option_types.NodeOptions,
    "before_model": option_types.NodeOptions,
    "after_model": option_types.AfterModelOptions,
    "after_agent": option_types.AfterAgentOptions,
    "wrap_model_call": option_types.WrapModelCallOptions,
    "wrap_tool_call": option_types.WrapToolCallOptions,
    "dynamic_prompt": option_types.HookOptions,
}


@pytest.mark.parametrize("decorator", sorted(TYPED))
def test_the_typed_options_are_the_registered_ones(decorator: str) -> None:
    registered = {o.name for o in options.options_for(decorator)}
    assert set(TYPED[decorator].__annotations__) == registered


def test_hook_config_takes_the_registered_options() -> None:
    keywords = set(inspect.signature(funcware.hook_config).parameters)
    assert keywords == {o.name for o in options.options_for("hook_config")}


@pytest.mark.parametrize("decorator", sorted(TYPED))
def test_help_lists_every_registered_option(decorator: str) -> None:
    doc = getattr(funcware, decorator).__doc__ or ""
    for found in options.options_for(decorator):
        assert f"{found.name}: {found.help}" in doc


def test_a_misplaced_option_lists_only_what_the_decorator_takes() -> None:
    with pytest.raises(TypeError) as refused:
        funcware.before_model(stream="buffer")(lambda state: None)  # type: ignore[call-overload]
    text = str(refused.value)
    taken = text.split("Its options: ")[1].rstrip(".").split(", ")
    assert "stream" not in taken and "always" not in taken
    assert "applies to after_model and wrap_model_call hooks only" in text


def test_a_feature_option_is_checked_by_its_feature() -> None:
    bad: Any = "soon"
    with pytest.raises(TypeError, match="timeout='soon'"):
        funcware.before_model(timeout=bad)(lambda state: None)
