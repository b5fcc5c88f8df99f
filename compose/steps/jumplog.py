"""Which hooks jumped in one run, and how often, for the recursion-limit error: each run
carries a :class:`JumpLog` in its config; hook nodes count their jumps on it."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from funcware.hooks.middleware import HookImpl

__all__ = ["LOG_KEY", "JumpLog", "record_jump"]

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


def record_jump(config: RunnableConfig | None, impl: HookImpl, result: object) -> None:
    """Count a jump in ``result`` (a node hook's checked result) on the run's log."""
    if config is None:
        return
    update = result.update if isinstance(result, Command) else result
    target = update.get("jump_to") if isinstance(update, Mapping) else None
    if target is None and isinstance(result, Command) and isinstance(result.goto, str):
        target = result.goto or None
    if target is None:
        return
    log = config.get("configurable", {}).get(LOG_KEY)
    if isinstance(log, JumpLog):
        log.add(impl, str(target))
