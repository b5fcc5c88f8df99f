"""``python -m funcware explain module:attribute`` prints the pipeline of a list or agent."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from .compose import explain


def _load(spec: str) -> object:
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise SystemExit(f"expected module:attribute (e.g. myapp.agent:middleware), got {spec!r}")
    target: object = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    return target


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (1 when the stack has problems)."""
    parser = argparse.ArgumentParser(prog="python -m funcware")
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser("explain", help="describe a middleware list or an agent")
    command.add_argument("target", help="module:attribute naming a middleware list or agent")
    command.add_argument("--mermaid", action="store_true", help="print a Mermaid diagram")
    args = parser.parse_args(argv)
    sys.path.insert(0, "")
    explanation = explain(_load(args.target))
    print(explanation.mermaid() if args.mermaid else explanation)
    return 1 if explanation.plan.problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
