"""Counting a node hook's jump on its run's :class:`JumpLog`, for the recursion-limit error.
Loaded only when a hook jumps (or returns a ``Command``)."""

from __future__ import annotations

from collections.abc import Mapping

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from funcware.compose.steps.jumplog import LOG_KEY, JumpLog
from funcware.hooks.middleware import HookImpl

__all__ = ["record_jump"]


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
