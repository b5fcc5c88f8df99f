"""The fenced code blocks of the README and the documentation site, as the tests read them.

A python block runs on its own, or after the block its first line names
(``# Continues the block under "<heading>".``, a heading of the same page). A block that
cannot run offline is preceded by ``<!-- not run here: <reason> -->``; a fence preceded by
``<!-- output of: <expression> -->`` must hold that expression's value, evaluated after the
python block above it on the page ran.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
PYTHON = {"python", "py", "python3"}
MARKER = re.compile(r"^<!-- (not run here|output of): (.+?) -->$")
CONTINUES = re.compile(r'^# Continues the block under "(.+?)"', re.MULTILINE)


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    heading: str  # the nearest heading above it
    not_run: str | None  # the reason, when marked not to run here
    output_of: str | None  # the expression whose value the block shows

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def read(page: Path) -> list[Block]:
    """Every fenced block of ``page``, in order."""
    blocks: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    heading, index = "", 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("#") and re.match(r"^#+ ", line):
            heading = line.lstrip("#").strip()
        elif line.startswith("```") and len(line) > 3:
            start, language = index, line[3:].split()[0]
            end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
            above = lines[start - 1] if start > 0 else ""
            marker = MARKER.match(above)
            kind, value = marker.groups() if marker else (None, None)
            code = "\n".join(lines[start + 1 : end]) + "\n"
            blocks.append(
                Block(
                    page=page,
                    line=start + 1,
                    language=language,
                    code=code,
                    heading=heading,
                    not_run=value if kind == "not run here" else None,
                    output_of=value if kind == "output of" else None,
                )
            )
            index = end
        index += 1
    return blocks


def chain(blocks: list[Block], block: Block) -> list[Block]:
    """The blocks ``block`` continues (transitively, first first); none if it names none."""
    named = CONTINUES.search(block.code)
    if named is None:
        return []
    earlier = [b for b in blocks[: blocks.index(block)] if b.language in PYTHON]
    found = [b for b in earlier if b.heading == named.group(1)]
    assert found, f"{block.where} continues the block under {named.group(1)!r}: none above"
    return [*chain(blocks, found[0]), found[0]]


ALL: list[Block] = [block for page in PAGES for block in read(page)]
