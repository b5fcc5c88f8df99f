"""Subagents inherit what must hold: middleware declared ``subagents="inherit"``.

Guarantee: every funcware agent started during a run of an agent whose middleware declares
``subagents="inherit"`` (a funcware agent invoked inside a tool, deepagents' ``task``
subagents built with funcware's ``create_agent``, a funcware agent used as a graph node)
runs with that middleware too, unless it has a middleware of the same name of its own.

A feature on the core's seams, registered in ``funcware/plugins.py`` with the
``subagents=`` option (``"inherit"``; class middleware set the attribute ``subagents``) and
loaded by a build whose stack declares it. ``compiled``: such an agent gets a
:class:`Hand` run wrap, inside the per-run choice, which puts the middleware in the config
of its run (``config["configurable"]`` [:data:`CONFIG_KEY`]), and langgraph passes that
config on to every runnable started inside the run. Every agent's per-run choice
(``funcware.runs.RunChoice``) takes in what it is handed: the stack with the missing
middleware added innermost (:mod:`funcware.subagents.inherit`, loaded the first time
something is handed down), built once and cached. A run that carries nothing costs a
dictionary lookup at its entry; no model or tool call does any work for this feature.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from funcware.compose.steps.run_wrap import Through
from funcware.hooks.options import Context
from funcware.runs import INHERITED as CONFIG_KEY
from funcware.runs import carried

if TYPE_CHECKING:
    from funcware.compose.seams import Build
    from funcware.compose.steps.run_wrap import How, Kwargs, Runner
    from funcware.compose.steps.runs import AgentGraph
    from funcware.hooks.middleware import AgentMiddleware

__all__ = ["CONFIG_KEY", "INHERIT", "Hand", "SubagentMode", "Subagents", "carried", "inherits"]

_R = TypeVar("_R")
SubagentMode = Literal["inherit"]
"""What ``subagents=`` takes: ``"inherit"`` (agents started during its runs get it)."""
INHERIT: SubagentMode = "inherit"


def inherits(member: object) -> bool:
    """Whether ``member`` declares ``subagents="inherit"``.

    Only that string counts: an attribute named ``subagents`` holding something else (a
    list of subagent specs, on another library's middleware) is not a declaration.
    """
    return getattr(member, "subagents", None) == INHERIT


class Hand(Through):
    """The run wrap of an agent whose middleware declares ``subagents="inherit"``: its run's
    config carries them (with what the run was handed itself) to the agents it starts."""

    def __init__(self, members: Sequence[AgentMiddleware[Any, Any, Any]]) -> None:
        self.members = tuple(members)

    def through(
        self, graph: AgentGraph, input: Any, config: Any, kwargs: Kwargs, run: Runner[_R], how: How
    ) -> _R:
        """``run``, its config carrying the middleware to hand down."""
        from funcware.subagents.inherit import handing

        return run(input, handing(self.members, config), **kwargs)


class Subagents:
    """The plug-in: the run wrap that hands middleware down."""

    name = "subagents"

    def compiled(self, graph: AgentGraph, build: Build) -> None:
        """Add :class:`Hand` when something inherits, inside the per-run choice (which
        decides what the run runs)."""
        handed = [m for m in graph.plan.middleware if inherits(m)]
        if not handed:
            return
        wraps = list(graph.run_wraps)
        choice = next((i for i, w in enumerate(wraps) if hasattr(w, "chooser")), -1)
        wraps.insert(choice + 1, Hand(handed))
        graph.run_wraps = tuple(wraps)


def check_subagents(value: object, context: Context) -> SubagentMode:
    """``subagents=``: only ``"inherit"``."""
    if value != INHERIT:
        raise TypeError(
            f"{context.source} got subagents={value!r}; use subagents='inherit' (agents "
            "started during its runs get it too), or leave it out."
        )
    return INHERIT
