"""``python -m funcware explain module:attribute`` prints the pipeline of a list or agent."""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from funcware.explain import explain


def _fail(message: str) -> NoReturn:
    print(f"python -m funcware explain: {message}", file=sys.stderr)
    raise SystemExit(2)


def _load(spec: str) -> object:
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        _fail(f"expected module:attribute (e.g. myapp.agent:middleware), got {spec!r}.")
    try:
        target: object = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not module_name.startswith(exc.name):
            raise  # the module exists; something it imports does not: keep the traceback
        _fail(
            f"cannot import {module_name!r}: no module named {exc.name!r}. Run it from the "
            "folder that holds your package, or install the package first."
        )
    path = module_name
    for part in attribute.split("."):
        if not hasattr(target, part):
            names = [n for n in dir(target) if not n.startswith("_")]
            close = difflib.get_close_matches(part, names, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            _fail(f"{path!r} has no attribute {part!r}.{hint}")
        target = getattr(target, part)
        path = f"{path}.{part}"
    return target


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (1 when the stack has problems, 2 on bad input)."""
    parser = argparse.ArgumentParser(prog="python -m funcware")
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser("explain", help="describe a middleware list or an agent")
    command.add_argument("target", help="module:attribute naming a middleware list or agent")
    command.add_argument("--mermaid", action="store_true", help="print a Mermaid diagram")
    args = parser.parse_args(argv)
    sys.path.insert(0, "")
    try:
        explanation = explain(_load(args.target))
    except TypeError as exc:  # not a middleware, list or agent: explain() says what it got
        _fail(str(exc))
    print(explanation.mermaid() if args.mermaid else explanation)
    return 1 if explanation.plan.problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
