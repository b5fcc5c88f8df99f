"""The recipe composition matrix reports how many stacks it ran."""

from __future__ import annotations

import sys
from typing import Any


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say how many stacks the recipe composition matrix ran, when it ran."""
    matrix = sys.modules.get("recipe_guarantees")
    if matrix is None:
        return
    counts = ", ".join(f"{len(stacks)} {kind}" for kind, stacks in matrix.RAN.items())
    warned, caught = len(matrix.WARNED), len(matrix.CAUGHT)
    broken, missed = len(matrix.BROKEN), len(matrix.MISSED)
    precision = f"{caught}/{warned} = {caught / warned:.0%}" if warned else "n/a (none warned)"
    recall = f"{broken - missed}/{broken} = {(broken - missed) / broken:.0%}" if broken else "n/a"
    terminalreporter.write_line(
        f"recipe composition matrix: ran {counts} (ordered); {warned} warned or refused at "
        f"build; precision {precision} (warned stacks in which a named guarantee really "
        f"broke); recall {recall} (stacks with a broken guarantee that a warning named)"
    )
