"""Agents run inside another agent's run, in the run record: one layer each, under the parent.

A funcware agent started during another funcware agent's run (invoked in a tool, by
deepagents' ``task``, as a graph node) is recorded as a layer of its own, ``<agent
name>.agent``, started where the parent's run is (under the parent's tool-call layer when
one wraps the call), and the subagent's hooks and wrap layers are recorded under it. A
run started from no other agent's run adds no such layer, so the record of a single agent
is what it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from langchain_core.runnables.config import var_child_runnable_config

from funcware.compose.steps.jumplog import LOG_KEY
from funcware.observe.layers import failure_outcome
from funcware.observe.observers import Observer, end, start

__all__ = ["agent_name", "inside_an_agent_run", "nested_run"]


def inside_an_agent_run() -> bool:
    """Whether the code running now runs inside a funcware agent's run (a tool, a node)."""
    ambient = var_child_runnable_config.get()
    return LOG_KEY in ((ambient or {}).get("configurable") or {})


def agent_name(graph: Any) -> str:
    """The agent's name: ``lc_agent_name`` (``create_agent(name=...)``, deepagents'
    subagent names), else the graph's name."""
    name = ((getattr(graph, "config", None) or {}).get("metadata") or {}).get("lc_agent_name")
    return name if isinstance(name, str) else str(getattr(graph, "name", "agent"))


@contextmanager
def nested_run(observers: tuple[Observer, ...], graph: Any) -> Iterator[None]:
    """The subagent's run as a layer the observers see, its own layers nested in it."""
    started = start(observers, agent_name(graph), "agent", "")
    try:
        yield
    except BaseException as exc:
        end(observers, started, failure_outcome(exc), error=exc)
        raise
    end(observers, started, "passed")
