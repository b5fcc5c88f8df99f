"""What a recipe's demo did, beyond its conversation: for the tour.

While a demo runs, the tour records its log lines and langchain-core's trace of every run
(``collect_runs``); afterwards it reads from them the model calls (failed ones too, so a
retry shows), the system prompt the model got, any pause (``interrupt``), the final state's
own fields, and the ``records`` a middleware keeps.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from langchain_core.tracers.context import collect_runs
from langchain_core.tracers.schemas import Run

from funcware import explain

from ._render import shorten

__all__ = ["Observation", "observe"]

_HIDDEN_STATE = frozenset({"messages", "jump_to", "structured_response"})


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.name}: {record.getMessage()}")


def _walk(runs: list[Run]) -> Iterator[Run]:
    for run in runs:
        yield run
        yield from _walk(run.child_runs)


_ROLES = ("\nHuman: ", "\nAI: ", "\nTool: ", "\nSystem: ")


def _system_prompt(run: Run) -> str | None:
    """The system message of a traced chat-model call (its prompt is ``System: ...``)."""
    for prompt in run.inputs.get("prompts", []) or []:
        if isinstance(prompt, str) and prompt.startswith("System: "):
            body = prompt[len("System: ") :]
            ends = [i for i in (body.find(role) for role in _ROLES) if i >= 0]
            return body[: min(ends)] if ends else body
    return None


def _pauses(agent: Any) -> list[Any]:
    """What ``interrupt()`` asked, in every run its checkpointer saved."""
    saver = getattr(agent, "checkpointer", None)
    if saver is None or not hasattr(saver, "list"):
        return []
    asked: list[Any] = []
    for saved in saver.list(None):
        for _task, channel, value in saved.pending_writes or []:
            if channel == "__interrupt__":
                asked.extend(getattr(v, "value", v) for v in value)
    return asked


@dataclass
class Observation:
    """What a demo did: its log lines, model calls, prompts, pauses, state and records."""

    logs: list[str] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)

    def lines(self, agent: Any, state: dict[str, Any]) -> list[str]:
        """The tour's extra lines for one recipe (sections that have something to show)."""
        out: list[str] = []
        calls = [run for run in _walk(self.runs) if run.run_type in ("llm", "chat_model")]
        failed = [run for run in calls if run.error]
        if calls:
            detail = "; ".join(
                shorten(run.error.splitlines()[-1], 60) for run in failed if run.error
            )
            out.append(
                f"model calls   {len(calls)}"
                + (f" ({len(failed)} failed and retried or replaced: {detail})" if failed else "")
            )
        prompts = list(dict.fromkeys(p for p in map(_system_prompt, calls) if p))
        out.extend(f"system prompt {shorten(prompt, 80)}" for prompt in prompts)
        tools = [run for run in _walk(self.runs) if run.run_type == "tool"]
        broken = [run for run in tools if run.error]
        if tools:
            out.append(
                f"tool runs     {len(tools)}"
                + (
                    f" ({len(broken)} raised: {', '.join(r.name for r in broken)})"
                    if broken
                    else ""
                )
            )
        out.extend(f"paused        {shorten(repr(value), 80)}" for value in _pauses(agent))
        out.extend(f"log           {shorten(line, 80)}" for line in self.logs)
        for key, value in state.items():
            if key not in _HIDDEN_STATE and not key.startswith("_"):
                out.append(f"state         {key} = {shorten(repr(value), 70)}")
        for middleware in explain(agent).plan.middleware:
            for record in getattr(middleware, "records", None) or []:
                out.append(f"record        {shorten(repr(record), 80)}")
        return out


@contextmanager
def observe() -> Iterator[Observation]:
    """Record the log lines and traced runs of what runs inside (the demo)."""
    observation = Observation()
    handler = _Lines()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        with collect_runs() as collector:
            yield observation
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        observation.logs = handler.lines
        observation.runs = list(collector.traced_runs)


def run_observed(demo: Callable[[], tuple[Any, dict[str, Any]]]) -> tuple[Any, Any, Observation]:
    """``demo()``'s agent and state, and what it did."""
    with observe() as observation:
        agent, state = demo()
    return agent, state, observation
