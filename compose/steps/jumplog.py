"""Which hooks jumped in one run, and how often, for the recursion-limit error: each run
carries a :class:`JumpLog` in its config; hook nodes count their jumps on it
(:mod:`.jump_counts`)."""

from __future__ import annotations

import threading
from collections import Counter

from funcware.hooks.middleware import HookImpl

__all__ = ["LOG_KEY", "JumpLog"]

LOG_KEY = "__funcware_jump_log__"


class JumpLog:
    """The jumps one run made: ``(hook label, target)`` and how many times."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.jumps: Counter[tuple[str, str]] = Counter()

    def add(self, impl: HookImpl, target: str) -> None:
        """Count one jump of ``impl`` to ``target``."""
        with self._lock:
            self.jumps[(impl.describe(), target)] += 1
