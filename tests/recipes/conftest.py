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
    terminalreporter.write_line(
        f"recipe composition matrix: ran {counts} (ordered); "
        f"{len(matrix.WARNED)} of them were warned or refused at build, the rest kept "
        "every guarantee"
    )
