"""The hooks a composite shows as one middleware, to code that reads its hooks without
flattening it (``hook_impls``); loaded only then."""

from __future__ import annotations

from typing import TYPE_CHECKING

from funcware.hooks.middleware import HOOKS, HookImpl, HookName, hook_impls
from funcware.hooks.types import JUMP_TARGETS

if TYPE_CHECKING:
    from funcware.compose.chain import ComposedMiddleware

__all__ = ["composite_hooks"]


def composite_hooks(composite: ComposedMiddleware) -> dict[HookName, HookImpl]:
    """Each hook a member defines, run by the composite's method of that name, which may jump
    wherever its members' may."""
    own: dict[HookName, HookImpl] = {}
    for hook in HOOKS:
        impls = [impl for m in composite.members if (impl := hook_impls(m).get(hook))]
        if not impls:
            continue
        jumps = {t for impl in impls for t in impl.can_jump_to}
        own[hook] = HookImpl(
            composite,
            hook,
            getattr(composite, hook),
            getattr(composite, "a" + hook),
            tuple(t for t in JUMP_TARGETS if t in jumps),
        )
    return own
