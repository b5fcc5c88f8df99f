"""A node hook's declared jump targets (``can_jump_to=``, ``@hook_config``): checked and
united, in the order first declared (as LangChain keeps them). Loaded when one is declared."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from funcware.hooks.middleware import JUMP_ATTR
from funcware.hooks.types import JUMP_TARGETS, JumpTo

__all__ = ["declared_jumps", "in_order", "normalise_jumps"]


def normalise_jumps(value: object, func: Callable[..., Any], source: str) -> tuple[JumpTo, ...]:
    """``value`` (a target, a sequence of them, or ``None``) checked, as a tuple."""
    if value is None:
        return ()
    items: Sequence[object] = [value] if isinstance(value, str) else list(value)  # type: ignore[call-overload]
    bad = [item for item in items if item not in JUMP_TARGETS]
    if bad:
        from funcware.hooks.refusals import bad_jumps

        raise bad_jumps(value, func, source, bad)
    return in_order(items)  # type: ignore[arg-type]


def in_order(*groups: Sequence[JumpTo]) -> tuple[JumpTo, ...]:
    """Every target of ``groups`` once, in the order first declared."""
    return tuple(dict.fromkeys(t for group in groups for t in group))


def declared_jumps(
    can_jump_to: Sequence[JumpTo] | None, func: Callable[..., Any], decorator: str
) -> list[JumpTo]:
    """The targets a decorator's ``can_jump_to=`` and ``@hook_config`` on ``func`` declare."""
    jumps = normalise_jumps(can_jump_to, func, f"@{decorator}")
    stashed = normalise_jumps(getattr(func, JUMP_ATTR, None), func, "@hook_config")
    return list(in_order(jumps, stashed))
