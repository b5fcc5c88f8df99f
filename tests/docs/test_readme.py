"""The README stays short and keeps its promises: the two commands, and links that lead
somewhere. (Its code blocks run in test_docs_examples.py, with the site's.)"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_at_most_300_lines() -> None:
    assert len(README.splitlines()) <= 300


def test_the_readme_gives_the_two_commands() -> None:
    assert "pip install . && python -m funcware.cookbook\n" in README
    assert 'pip install -e ".[test]" && python -m pytest -q\n' in README


def test_every_local_link_in_the_readme_leads_to_a_file() -> None:
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README)
    assert len(links) >= 10
    for link in links:
        assert (ROOT / link).is_file(), link
