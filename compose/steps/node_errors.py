"""What was wrong with a node hook's result, in words (loaded only when one is wrong)."""

from __future__ import annotations

import difflib

from funcware.errors import InvalidJumpError, UnknownNodeError
from funcware.hooks.middleware import HookImpl
from funcware.hooks.types import JUMP_TARGETS
from funcware.hooks.wording import a, returned

__all__ = ["invalid_jump", "not_a_result", "unknown_node"]


def unknown_node(name: object, nodes: frozenset[str], owner: str) -> UnknownNodeError:
    """The error for ``Command(goto=name)`` to a node the agent does not have."""
    close = difflib.get_close_matches(str(name), sorted(nodes), n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return UnknownNodeError(
        f"{owner} returned Command(goto={name!r}), but this agent has no node "
        f"{name!r}, so langgraph would ignore it and go on.{hint} Its nodes: "
        f"{', '.join(sorted(nodes))} (and END). To move between the agent's steps, "
        "return {'jump_to': 'model' | 'tools' | 'end'} from a hook that declares "
        "can_jump_to."
    )


def invalid_jump(target: object, impl: HookImpl) -> InvalidJumpError:
    """The error for a ``jump_to`` the hook did not declare (or that is no jump target)."""
    allowed = ", ".join(repr(t) for t in impl.can_jump_to) or "none declared"
    if target not in JUMP_TARGETS:
        problem = f"jump_to={target!r}, which is not a jump target (use 'model', 'tools' or 'end')"
    else:
        targets = ", ".join(repr(t) for t in (*impl.can_jump_to, target))
        problem = (
            f"jump_to={target!r}, which it did not declare; declare it with "
            f"@{impl.hook}(can_jump_to=[{targets}]) or @hook_config(can_jump_to=[{targets}])"
        )
    return InvalidJumpError(f"{impl.describe()} returned {problem}. Allowed targets: {allowed}.")


def not_a_result(result: object, impl: HookImpl) -> TypeError:
    """The error for a node hook that returned neither a dict, a ``Command`` nor ``None``."""
    return TypeError(
        f"{impl.describe()} returned {returned(result)}; {a(impl.hook)} hook must "
        "return a dict of state updates, a langgraph Command, or None."
    )
