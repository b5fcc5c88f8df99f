"""Every recipe keeps the tool-call pairing contract: its demo runs with a pairing warning
turned into an error."""

from __future__ import annotations

import warnings

import pytest

from funcware import ToolCallPairingWarning, cookbook


@pytest.mark.parametrize("name", cookbook.RECIPES)
def test_the_recipe_demo_keeps_every_call_with_its_answer(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    module = cookbook.load(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ToolCallPairingWarning)
        module.demo()
    capsys.readouterr()
