"""Every python code block in README.md runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fake_openai import require_openai

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
CONTINUES = re.compile(r'^# Continues the block under "(.+?)"', re.MULTILINE)


def _headings() -> list[str]:
    """The ``##`` heading each python block sits under, in block order."""
    heading, found = "", []
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            heading = line[3:].strip()
        elif line.startswith("```python"):
            found.append(heading)
    return found


HEADINGS = _headings()


def _before(index: int) -> list[int]:
    """The blocks ``index`` says it continues (transitively), in order; none if it says none."""
    named = CONTINUES.search(BLOCKS[index])
    if named is None:
        return []
    assert named.group(1) in HEADINGS[:index], f"block {index} continues a missing block"
    first = HEADINGS.index(named.group(1))
    return [*_before(first), first]


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index: int, capsys: pytest.CaptureFixture[str]) -> None:
    if BLOCKS[index].startswith("# Needs langchain-openai"):
        require_openai()
    namespace: dict[str, object] = {"__name__": f"readme_block_{index}"}
    # Each block runs on its own, or after the block it says it continues.
    for before in _before(index):
        exec(compile(BLOCKS[before], f"README.md[{before}]", "exec"), namespace)
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


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_a_readme_block_that_needs_pytest_says_so(index: int) -> None:
    if "import pytest" in BLOCKS[index]:
        assert BLOCKS[index].startswith("# Needs pytest"), BLOCKS[index][:80]
