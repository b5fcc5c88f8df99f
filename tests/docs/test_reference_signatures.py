"""The API reference shows every recipe class's and ``Cassette``'s constructor parameters.

The site is built (``mkdocs build``, the ``docs`` extra) into a temporary folder; for each
class a recipe module defines with a constructor of its own, and for
``funcware.testing.Cassette``, the page must show the signature under the heading: every
parameter with its type, and its default where it has one.
"""

from __future__ import annotations

import html
import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from funcware import cookbook
from funcware.testing import Cassette

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("mkdocs", reason="the reference is built with the `docs` extra")
pytest.importorskip("mkdocstrings_handlers.python", reason="the `docs` extra")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--quiet", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(Path(sys.executable).parent)},
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    yield out
    shutil.rmtree(out, ignore_errors=True)


def _recipe_classes() -> list[type]:
    found = []
    for name in cookbook.RECIPES:
        module = cookbook.load(name)
        for attr, value in vars(module).items():
            if (
                inspect.isclass(value)
                and value.__module__ == module.__name__
                and not attr.startswith("_")
                and "__init__" in vars(value)
            ):
                found.append(value)
    return found


def _signature_text(page: str, path: str) -> str:
    """The text under the heading with id ``path``, up to the next heading."""
    start = page.find(f'id="{path}"')
    assert start >= 0, f"{path} has no heading on its page"
    end = page.find('class="doc doc-heading"', page.find(">", start))
    text = re.sub(r"<[^>]+>", "", page[start : end if end > 0 else None])
    return html.unescape(text)


def _check(page: str, path: str, cls: type) -> None:
    text = _signature_text(page, path)
    assert f"{cls.__name__}(" in text, f"{path}: no signature under the heading"
    for param in list(inspect.signature(cls.__init__).parameters.values())[1:]:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        shown = re.search(rf"\b{param.name}: ([^\n]+)", text)
        assert shown is not None, f"{path}: parameter {param.name!r} is not shown with its type"
        if param.default is not param.empty:
            assert " = " in shown.group(1), f"{path}: {param.name!r} is shown without its default"


def test_the_cookbook_page_shows_every_recipe_class_signature(site: Path) -> None:
    page = (site / "reference" / "cookbook" / "index.html").read_text()
    classes = _recipe_classes()
    assert {"ModelRetry", "PIIRedaction", "ToolCallLimit"} <= {c.__name__ for c in classes}
    for cls in classes:
        _check(page, f"{cls.__module__}.{cls.__qualname__}", cls)


def test_the_testing_page_shows_the_cassette_signature(site: Path) -> None:
    page = (site / "reference" / "testing" / "index.html").read_text()
    _check(page, "funcware.testing.Cassette", Cassette)
    text = _signature_text(page, "funcware.testing.Cassette")
    assert 'match: Match = "sequence"' in text and "record: bool | None = None" in text


def test_model_retry_shows_that_it_retries_every_error_by_default(site: Path) -> None:
    page = (site / "reference" / "cookbook" / "index.html").read_text()
    text = _signature_text(page, "funcware.cookbook.model_retry.ModelRetry")
    assert "retry_on: tuple[type[Exception], ...] = (Exception,)" in text


def test_every_recipe_module_has_its_reference_section() -> None:
    page = (ROOT / "docs" / "reference" / "cookbook.md").read_text()
    missing = [n for n in cookbook.RECIPES if f"::: funcware.cookbook.{n}\n" not in page]
    assert missing == []
