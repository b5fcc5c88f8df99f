"""The cookbook tour: ``python -m funcware.cookbook [NAME ...] [--list]``."""

from __future__ import annotations

import argparse
import logging
import re
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from funcware.cookbook import RECIPES, load, suggestion
from funcware.cookbook._render import done_lines, render_messages, shorten
from funcware.explain import explain
from funcware.observe import record


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"log           {shorten(f'{record.name}: {record.getMessage()}', 80)}")


@contextmanager
def _logged() -> Iterator[list[str]]:
    """The log lines (INFO and up) of what runs inside."""
    handler, root = _Lines(), logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield handler.lines
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")


def plain(text: str) -> str:
    """``text`` without reStructuredText markup: roles and double backquotes dropped."""
    return _ROLE.sub(r"\1", text).replace("``", "")


def _summary(name: str) -> str:
    doc = load(name).__doc__ or ""
    return plain(doc.strip().splitlines()[0]) if doc.strip() else name


def _run(name: str) -> bool:
    print(f"== {name}: {_summary(name)}")
    try:
        with record() as run, _logged() as logs:
            agent, state = load(name).demo()
    except Exception:
        print("   FAILED")
        print("   " + traceback.format_exc().replace("\n", "\n   "))
        return False
    print("   pipeline")
    for line in explain(agent).lines()[1:]:
        print("   " + line)
    print("   conversation")
    for line in render_messages(state["messages"]):
        print("     " + line)
    highlights = getattr(load(name), "highlights", None)
    extra = [
        *(highlights(agent, state) if highlights is not None else ()),
        *done_lines(agent, state),
        *logs,
    ]
    if extra:
        print("   what it did")
        for line in extra:
            print("     " + line)
    if run.layers:
        print("   middleware, hook by hook")
        for line in run.lines(timings=False):
            print("     " + line)
    print()
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """Run the named recipes' demos (all by default); exit status 1 if any failed."""
    parser = argparse.ArgumentParser(
        prog="python -m funcware.cookbook", description="Run the funcware cookbook tour offline."
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help="recipes to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the recipes and exit")
    args = parser.parse_args(argv)
    if args.list:
        for name in RECIPES:
            print(f"{name:<22} {_summary(name)}")
        return 0
    unknown = [n for n in args.names if n not in RECIPES]
    if unknown:
        named = ", ".join(f"{n!r}{suggestion(n)}" for n in unknown)
        parser.error(f"unknown recipe(s) {named}; see --list")
    names = args.names or list(RECIPES)
    failed = [name for name in names if not _run(name)]
    print(
        f"{len(names) - len(failed)}/{len(names)} recipes ran"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
