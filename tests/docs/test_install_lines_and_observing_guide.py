"""Install lines work from a checkout, and the observing guide shows what its examples print.

funcware is installed from a checkout (``pip install .``), so an extra is installed with
``pip install -e ".[extra]"``: no page, docstring or error message tells a user to
``pip install funcware[...]``, and every extra named that way is one ``pyproject.toml``
defines. Every example of the observing guide that prints shows its output, and the
guide says what ``Cassette.use_tools()`` does.
"""

from __future__ import annotations

import re
import sys

import pytest
from docs_blocks import PAGES, PYTHON, ROOT, read

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

SOURCES = [
    *PAGES,
    *(
        path
        for folder in ("funcware", "hooks", "compose", "cookbook")
        for path in sorted((ROOT / folder).rglob("*.py"))
    ),
]
PUBLISHED = re.compile(r"pip install ['\"]?funcware\[")
CHECKOUT = re.compile(r"pip install -e ['\"]?\.\[([\w,-]+)\]")


def test_no_install_line_names_a_package_that_is_not_published() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in SOURCES
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if PUBLISHED.search(line)
    ]
    assert found == []


def test_every_extra_an_install_line_names_exists() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extras = set(pyproject["project"]["optional-dependencies"])
    named = {
        extra
        for path in SOURCES
        for group in CHECKOUT.findall(path.read_text())
        for extra in group.split(",")
    }
    assert {"otel", "langchain", "deepagents"} <= named
    assert named <= extras


def test_every_printing_example_of_the_observing_guide_shows_its_output() -> None:
    blocks = read(ROOT / "docs" / "guides" / "observing.md")
    printing = [b for b in blocks if b.language in PYTHON and "print(" in b.code]
    assert len(printing) >= 3
    for block in printing:
        assert re.search(r"^# \[", block.code, re.MULTILINE), f"{block.where} shows no output"


def test_the_observing_guide_says_what_use_tools_does() -> None:
    text = (ROOT / "docs" / "guides" / "observing.md").read_text()
    said = text.split("`cassette.use_tools()`", 1)[1][:400]
    assert "recording" in said and "replaying" in said and "without running the tool" in said
