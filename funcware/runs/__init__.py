"""Run-level control: ``wrap_agent_call`` around each run, and middleware chosen per run.

A feature on the core's seams, loaded by a build whose stack defines ``wrap_agent_call``
or declares ``per_run=``, or by the first run whose ``config["configurable"]`` chooses its
middleware (``"funcware"``) or carries middleware a parent run hands down
(``subagents="inherit"``, :func:`carried`): ``compiled`` (and :func:`take`, for such a
run) add the run wraps: the per-run choice outermost (:class:`RunChoice`, see
:mod:`funcware.runs.per_run`), then the ``wrap_agent_call`` layers, first outermost
(:mod:`funcware.runs.agent_call`); ``arrange`` and ``transform`` serve agents that
declare ``per_run`` (the default stack, wraps that read the run's choice).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import import_module
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_core.runnables.config import var_child_runnable_config

from funcware.compose.steps.run_wrap import Through
from funcware.hooks.options import Context

if TYPE_CHECKING:
    from funcware.compose.seams import Build
    from funcware.compose.steps.run_wrap import How, Kwargs, Runner
    from funcware.compose.steps.runs import AgentGraph
    from funcware.hooks.middleware import AgentMiddleware, HookImpl
    from funcware.runs.decorator import wrap_agent_call
    from funcware.runs.per_run import PerRun

__all__ = [
    "CONFIG_KEY",
    "INHERITED",
    "RunChoice",
    "RunControl",
    "carried",
    "take",
    "wrap_agent_call",
]

_R = TypeVar("_R")

CONFIG_KEY = "funcware"
"""The key of a run's choice of middleware in ``config["configurable"]``."""
INHERITED = "__funcware_inherited"
"""The key, in ``config["configurable"]``, of the middleware a parent run hands down to the
agents started during it (``subagents="inherit"``; a tuple of middleware objects)."""


def carried(config: Mapping[str, Any] | None) -> tuple[AgentMiddleware[Any, Any, Any], ...]:
    """The middleware handed down to a run started with ``config``: in the config given,
    or in the config of the run in progress it was started from (langgraph merges that one
    in when the run starts)."""
    found = ((config or {}).get("configurable") or {}).get(INHERITED)
    if found is None:
        ambient = var_child_runnable_config.get()
        found = ((ambient or {}).get("configurable") or {}).get(INHERITED)
    return found or ()


def _wraps_runs(member: object) -> bool:
    """Whether ``member``'s class overrides ``wrap_agent_call`` or ``awrap_agent_call``."""
    from funcware.hooks.middleware import AgentMiddleware

    if not isinstance(member, AgentMiddleware):
        return False
    cls = type(member)
    return (
        cls.wrap_agent_call is not AgentMiddleware.wrap_agent_call
        or cls.awrap_agent_call is not AgentMiddleware.awrap_agent_call
    )


class RunChoice(Through):
    """The outermost run wrap of an agent with middleware: a run whose config chooses its
    middleware runs that stack (:class:`funcware.runs.per_run.PerRun`, loaded the first
    time a run chooses); any other run goes straight on."""

    def __init__(
        self,
        members: Sequence[AgentMiddleware[Any, Any, Any]],
        switchable: frozenset[int],
        arguments: Mapping[str, Any],
        default_skipped: frozenset[int] = frozenset(),
    ) -> None:
        self.members = members
        self.switchable = switchable
        self.arguments = arguments
        self.default_skipped = default_skipped
        self._chooser: PerRun | None = None

    def chooser(self) -> PerRun:
        """What works out and runs the stacks runs choose (made once)."""
        if self._chooser is None:
            from funcware.runs.per_run import PerRun

            self._chooser = PerRun(self.members, self.switchable, self.arguments)
        return self._chooser

    def through(
        self, graph: AgentGraph, input: Any, config: Any, kwargs: Kwargs, run: Runner[_R], how: How
    ) -> _R:
        """``run``, or the run of the stack the config chooses (or a parent hands down),
        when it chooses one or middleware is off by default (the chooser is made only then)."""
        config = self._received(graph, config)
        if CONFIG_KEY not in (config.get("configurable") or ()) and not self.default_skipped:
            return run(input, config, **kwargs)
        return self.chooser().through(graph, input, config, kwargs, run, how)

    def _received(self, graph: AgentGraph, config: Any) -> Any:
        """``config``, choosing the stack with what a parent run hands down, if any."""
        handed = carried(config)
        if not handed:
            return config
        from funcware.subagents.inherit import received

        return received(graph, self, handed, config)


class RunControl:
    """The plug-in: ``wrap_agent_call`` layers as a run wrap."""

    name = "runs"

    def arrange(
        self, members: list[AgentMiddleware[Any, Any, Any]], build: Build
    ) -> list[AgentMiddleware[Any, Any, Any]]:
        """The default stack of an agent that declares ``per_run``; others unchanged."""
        if not any(getattr(m, "per_run", None) is not None for m in members):
            return members
        from funcware.runs.per_run import arrange

        return arrange(members, build)

    def transform(self, impl: HookImpl, build: Build) -> HookImpl:
        """A switchable middleware's wraps, reading the run's choice."""
        if "runs" not in build.data:
            return impl
        from funcware.runs.per_run import switchable

        return switchable(impl, build)

    def compiled(self, graph: AgentGraph, build: Build) -> None:
        """Add the run wraps: ``wrap_agent_call`` layers, inside the per-run choice."""
        members = graph.plan.middleware
        if any(_wraps_runs(member) for member in members):
            from funcware.runs.agent_call import AgentCallWrap
            from funcware.runs.layers import agent_layers

            # Outermost: every attempt is a whole run, with the other run wraps inside it.
            graph.run_wraps = (AgentCallWrap(agent_layers(members)), *graph.run_wraps)
        registry = build.data.get("runs")
        if registry is None:  # a run that chooses, or is handed, middleware: seams.claim
            return
        from funcware.runs.per_run import default_skipped

        choice = RunChoice(
            registry.members,
            registry.switchable,
            build.arguments,
            default_skipped(registry.members, registry.switchable),
        )
        graph.run_wraps = (choice, *graph.run_wraps)


def take(graph: AgentGraph) -> None:
    """Give ``graph`` the per-run choice (outermost), unless it has one: the first run
    whose config chooses middleware, or is handed some, of an agent built without it."""
    if not any(isinstance(wrap, RunChoice) for wrap in graph.run_wraps):
        choice = RunChoice(graph.plan.middleware, frozenset(), graph.arguments)
        graph.run_wraps = (choice, *graph.run_wraps)


def __getattr__(name: str) -> Any:
    if name == "wrap_agent_call":
        return import_module("funcware.runs.decorator").wrap_agent_call
    raise AttributeError(f"module 'funcware.runs' has no attribute {name!r}")


def check_per_run(value: object, context: Context) -> str:
    from funcware.runs.per_run import check_mode

    return check_mode(value, context.source)
