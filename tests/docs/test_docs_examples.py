"""Every python block in README.md and docs/ runs as written, prints what it says it
prints, and every diagram or listing marked as ``explain()``'s output is what it draws."""

from __future__ import annotations

import re

import pytest
from docs_blocks import ALL, PAGES, PYTHON, ROOT, Block, chain, read
from fake_openai import require_openai

RUNNABLE = [b for b in ALL if b.language in PYTHON and b.not_run is None]
NOT_RUN = [b for b in ALL if b.not_run is not None]
SHOWN = [b for b in ALL if b.output_of is not None]


def _run(block: Block, namespace: dict[str, object]) -> None:
    exec(compile(block.code, block.where, "exec"), namespace)


def _namespace(block: Block) -> dict[str, object]:
    return {"__name__": "docs_" + re.sub(r"\W", "_", block.where)}


def test_the_pages_have_examples() -> None:
    assert len(PAGES) > 20
    assert len(RUNNABLE) >= 15


@pytest.mark.parametrize("block", RUNNABLE, ids=lambda b: b.where)
def test_block_runs(block: Block, capsys: pytest.CaptureFixture[str]) -> None:
    if block.code.startswith("# Needs langchain-openai"):
        require_openai()  # skipped without the openai extra; FUNCWARE_REQUIRE_OPENAI=1 fails
    blocks = read(block.page)
    namespace = _namespace(block)
    for before in chain(blocks, block):
        _run(before, namespace)
    capsys.readouterr()
    _run(block, namespace)
    printed = capsys.readouterr().out.strip()
    expected = re.findall(r"^# (\[.*\])$", block.code, re.MULTILINE)
    if expected:
        assert printed == "\n".join(expected)


@pytest.mark.parametrize("block", SHOWN, ids=lambda b: b.where)
def test_a_shown_output_is_what_the_code_gives(block: Block) -> None:
    blocks = read(block.page)
    source = [b for b in blocks[: blocks.index(block)] if b in RUNNABLE][-1]
    namespace = _namespace(source)
    for before in [*chain(blocks, source), source]:
        _run(before, namespace)
    value = str(eval(block.output_of or "", namespace))
    assert block.code.rstrip("\n") == value, f"{block.where}: regenerate it from {block.output_of}"


def test_pages_with_diagrams_show_explains_mermaid() -> None:
    mermaid = [b for b in ALL if b.language == "mermaid"]
    assert mermaid
    for block in mermaid:
        assert block.output_of is not None and ".mermaid()" in block.output_of, block.where


def test_blocks_that_do_not_run_say_why_and_are_few() -> None:
    assert len(NOT_RUN) <= 4, [b.where for b in NOT_RUN]
    for block in NOT_RUN:
        assert len(block.not_run or "") > 20, f"{block.where}: say why it cannot run here"


@pytest.mark.parametrize("block", [b for b in ALL if b.language in PYTHON], ids=lambda b: b.where)
def test_a_block_that_needs_pytest_says_so(block: Block) -> None:
    if "import pytest" in block.code:
        assert block.code.startswith("# Needs pytest"), block.where


def test_every_fence_names_its_language() -> None:
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        openings = re.findall(r"^```(.*)$", text, re.MULTILINE)[::2]
        assert all(openings), f"{page.relative_to(ROOT)}: a fence without a language"


def test_the_cookbook_guide_indexes_every_recipe() -> None:
    from funcware import cookbook

    text = (ROOT / "docs" / "guides" / "cookbook.md").read_text(encoding="utf-8")
    for name in cookbook.RECIPES:
        assert f"| `{name}` |" in text, name
