"""What is wrong with a broken stack, in words: name clashes, duplicates, the one error.

Loaded only when a plan has a problem to report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from funcware.errors import BrokenStackError, DuplicateMiddlewareError
from funcware.hooks.middleware import AgentMiddleware, hook_impls, origin

__all__ = ["DUPLICATE_SENTENCE", "broken_stack", "first_duplicate", "name_clashes"]

DUPLICATE_SENTENCE = "Please remove duplicate middleware instances."


def broken_stack(problems: Sequence[str], duplicates: str) -> BrokenStackError:
    """The one error listing every problem (LangChain's duplicate sentence first, if any)."""
    listing = "\n".join(f"  - {p}" for p in problems)
    if duplicates:
        return DuplicateMiddlewareError(
            f"{DUPLICATE_SENTENCE} {duplicates} create_agent cannot build this agent:\n{listing}"
        )
    return BrokenStackError(f"create_agent cannot build this agent:\n{listing}")


def _source(m: object) -> str:
    """``Tracer at file:line``: the class or function a middleware comes from, and where."""
    func = getattr(m, "__wrapped__", None)
    what = getattr(func if func is not None else type(m), "__qualname__", type(m).__name__)
    return f"{what} at {origin(m)}"


def first_duplicate(members: Sequence[AgentMiddleware[Any, Any, Any]]) -> str:
    """``Middleware 'x' (hook before_model) is listed twice.``: the first clash, in a line."""
    seen: dict[str, AgentMiddleware[Any, Any, Any]] = {}
    for m in members:
        first = seen.setdefault(m.name, m)
        if first is m and members.count(m) == 1:
            continue
        hooks: list[str] = list(hook_impls(m)) or ["no hooks"]
        label = "hook" if len(hooks) == 1 else "hooks"
        what = "is listed twice" if first is m else "shares its name with another middleware"
        return f"Middleware {m.name!r} ({label} {', '.join(hooks)}) {what}."
    return ""


def name_clashes(members: Sequence[AgentMiddleware[Any, Any, Any]]) -> list[str]:
    seen: dict[str, tuple[int, AgentMiddleware[Any, Any, Any]]] = {}
    problems: list[str] = []
    for index, m in enumerate(members):
        if m.name not in seen:
            seen[m.name] = (index, m)
            continue
        first_index, first = seen[m.name]
        if first is m:
            problems.append(
                f"middleware {m.name!r} ({_source(m)}) is listed twice (positions "
                f"{first_index} and {index}). Remove one of them."
            )
            continue
        problems.append(
            f"two middleware are named {m.name!r}: position {first_index} ({_source(first)}) "
            f"and position {index} ({_source(m)}). Names must be unique: pass name='...' to "
            "the decorator (@before_model(name='...')), or set `.name` / override the "
            "`name` property of a class; to run the second in the first's place, list it as "
            "funcware.replace(...)."
        )
    return problems
