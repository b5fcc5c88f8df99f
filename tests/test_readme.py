"""Every python code block in README.md runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, object] = {"__name__": f"readme_block_{index}"}
    # Blocks build on the ones before them, as a reader pasting them in order would.
    for block in BLOCKS[:index]:
        exec(compile(block, f"README.md[{BLOCKS.index(block)}]", "exec"), namespace)
    capsys.readouterr()
    exec(compile(BLOCKS[index], f"README.md[{index}]", "exec"), namespace)
    printed = capsys.readouterr().out
    for expected in re.findall(r"^# (\[.*\])$", BLOCKS[index], re.MULTILINE):
        assert printed.strip() == expected


def test_readme_indexes_every_recipe() -> None:
    from funcware import cookbook

    text = README.read_text(encoding="utf-8")
    for name in cookbook.RECIPES:
        assert f"| `{name}` |" in text, name
