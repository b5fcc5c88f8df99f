"""The cookbook: registry, the tour CLI, and the first recipes' effects."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest

from funcware import (
    cookbook,
)
from funcware.cookbook.__main__ import main as tour

COOKBOOK = Path(cookbook.__file__).resolve().parent


def test_every_recipe_file_is_registered_and_every_registered_recipe_exists() -> None:
    files = {p.stem for p in COOKBOOK.glob("*.py") if not p.stem.startswith("_")}
    assert files == set(cookbook.RECIPES)
    assert len(cookbook.RECIPES) >= 18


@pytest.mark.parametrize("name", cookbook.RECIPES)
def test_recipe_is_self_contained_and_documented(name: str) -> None:
    module = cookbook.load(name)
    doc = module.__doc__ or ""
    assert "When to use" in doc and "How to adapt" in doc, name
    assert callable(module.demo)
    source = Path(module.__file__ or "").read_text(encoding="utf-8")
    # funcware's own dependencies, and pydantic, which langchain-core always brings.
    allowed = ("funcware", "langchain_core", "langgraph", "pydantic", "typing_extensions")
    allowed += ("__future__",)
    for line in source.splitlines():
        if line.startswith(("import ", "from ")):
            path = line.split()[1]
            top = path.split(".")[0]
            assert top in allowed or top in sys.stdlib_module_names, f"{name} imports {top}"
            if top != "__future__":
                assert not any(part.startswith("_") for part in path.split(".")), line


def test_list_prints_every_recipe(capsys: pytest.CaptureFixture[str]) -> None:
    assert tour(["--list"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in printed] == list(cookbook.RECIPES)


def test_unknown_recipe_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        tour(["no_such_recipe"])
    assert exit_info.value.code == 2
    assert "unknown recipe" in capsys.readouterr().err


def test_the_tour_runs_every_recipe(capsys: pytest.CaptureFixture[str]) -> None:
    assert tour([]) == 0
    printed = capsys.readouterr().out
    for name in cookbook.RECIPES:
        assert f"== {name}:" in printed
    assert f"{len(cookbook.RECIPES)}/{len(cookbook.RECIPES)} recipes ran" in printed


def test_a_failing_demo_makes_the_tour_fail(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module = cookbook.load("message_limit")

    def broken() -> None:
        raise RuntimeError("demo broke")

    monkeypatch.setattr(module, "demo", broken)
    assert tour(["message_limit"]) == 1
    printed = capsys.readouterr().out
    assert "FAILED" in printed and "demo broke" in printed


def test_message_limit_jumps_to_end() -> None:
    module = importlib.import_module("funcware.cookbook.message_limit")
    _, state = module.demo()
    messages = state["messages"]
    assert messages[-1].content.startswith("Stopping: the conversation reached 4 messages")
    assert [m.type for m in messages] == ["human", "ai", "tool", "ai", "tool", "ai"]


def test_model_call_counter_counts_and_hides_the_private_field() -> None:
    module = importlib.import_module("funcware.cookbook.model_call_counter")
    _, state = module.demo()
    assert state["model_calls"] == 2
    assert "last_seen" not in state


# -- the tour shows what each recipe did -----------------------------------------


def _tour(*names: str, capsys: Any) -> str:
    from funcware.cookbook.__main__ import main

    assert main(list(names)) == 0
    return str(capsys.readouterr().out)


def test_the_tour_shows_the_log_lines_retries_and_prompts(capsys: Any) -> None:
    out = _tour("logging_around_model", "model_retry", "prompt_from_context", capsys=capsys)
    assert "log           funcware.cookbook.logging_around_model: model call:" in out
    assert "ModelRetry.wrap_model_call · retried · handler x3" in out
    assert "  log_model_call.wrap_model_call · failed · ConnectionError" in out
    assert "prompt_from_context.wrap_model_call · modified · changed system_message" in out


def test_the_tour_shows_state_values_records_and_the_approval_pause(capsys: Any) -> None:
    out = _tour(
        "model_call_counter",
        "usage_tracking",
        "outer_wins",
        "tool_monitoring",
        "human_approval",
        capsys=capsys,
    )
    assert "state         model_calls = 2" in out
    assert "state         usage = {'input_tokens':" in out
    assert out.count("state         verdict = 'approved'") == 1  # listed once
    assert "record        ToolCallRecord(name='add'" in out
    assert "paused        {'review': [{'tool_call_id': 'lead'" in out
