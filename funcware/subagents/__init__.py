"""Subagents inherit what must hold: middleware declared ``subagents="inherit"``.

Guarantee: every funcware agent started during a run of an agent whose middleware declares
``subagents="inherit"`` (a funcware agent invoked inside a tool, deepagents' ``task``
subagents built with funcware's ``create_agent``, a funcware agent used as a graph node)
runs with that middleware too, unless it has a middleware of the same name of its own.

A feature on the core's seams:

- the ``subagents=`` option (``"inherit"``), kept as the class attribute ``subagents``
  (class middleware set it themselves: ``subagents = "inherit"``);
- ``compiled``: every agent gets a :class:`Receive` run wrap, outermost, which reads the
  middleware handed down in the run's config (``config["configurable"]``
  [:data:`CONFIG_KEY`], which langgraph passes on to every runnable started inside a run)
  and runs the stack with the missing ones added innermost, through the per-run seam
  (``funcware.runs.per_run``: ``{"add": [...]}``, a graph built once per stack and
  cached); an agent whose middleware declares it also gets a :class:`Hand` run wrap,
  inside the per-run choice, which puts them in the config of its run.

A run that carries nothing costs a dictionary lookup at its entry; no model or tool call
does any work for this feature. :mod:`funcware.subagents.inherit` holds the rest, loaded
the first time something is handed down.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.runnables.config import var_child_runnable_config

from funcware.hooks.options import ALL, Context, Option, register_option

if TYPE_CHECKING:
    from funcware.compose.seams import Build
    from funcware.compose.steps.runs import AgentGraph
    from funcware.hooks.middleware import AgentMiddleware
    from funcware.runs import RunChoice

__all__ = ["CONFIG_KEY", "INHERIT", "Hand", "Receive", "SubagentMode", "inherits", "register"]

SubagentMode = Literal["inherit"]
"""What ``subagents=`` takes: ``"inherit"`` (agents started during its runs get it)."""
INHERIT: SubagentMode = "inherit"
CONFIG_KEY = "__funcware_inherited"
"""The key, in a run's ``config["configurable"]``, of the middleware handed down to the
agents started during the run (a tuple of middleware objects)."""


def inherits(member: object) -> bool:
    """Whether ``member`` declares ``subagents="inherit"``.

    Only that string counts: an attribute named ``subagents`` holding something else (a
    list of subagent specs, on another library's middleware) is not a declaration.
    """
    return getattr(member, "subagents", None) == INHERIT


def carried(config: Mapping[str, Any] | None) -> tuple[AgentMiddleware[Any, Any, Any], ...]:
    """The middleware handed down to a run started with ``config``: in the config given,
    or in the config of the run in progress it was started from (langgraph merges that one
    in when the run starts)."""
    found = ((config or {}).get("configurable") or {}).get(CONFIG_KEY)
    if found is None:
        ambient = var_child_runnable_config.get()
        found = ((ambient or {}).get("configurable") or {}).get(CONFIG_KEY)
    return found or ()


class Receive:
    """Every agent's outermost run wrap: a run handed middleware it lacks runs with them."""

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.arguments = arguments
        """``create_agent``'s arguments: how to build the agent with more middleware."""
        self._choice: RunChoice | None = None

    def choice(self) -> RunChoice:
        """The per-run choice of an agent with no middleware (which has none of its own),
        made once: it builds and caches the stacks with what is handed down."""
        if self._choice is None:
            from funcware.runs import RunChoice

            self._choice = RunChoice([], frozenset(), self.arguments)
        return self._choice

    def stream(
        self,
        graph: AgentGraph,
        input: Any,
        config: Any,
        kwargs: dict[str, Any],
        run: Callable[..., Iterator[Any]],
    ) -> Iterator[Any]:
        """``run``, with the middleware handed down added to the stack."""
        handed = carried(config)
        if not handed:
            return run(input, config, **kwargs)
        from funcware.subagents.inherit import receive

        chunks: Iterator[Any] = receive(self, graph, handed, input, config, kwargs, run, "stream")
        return chunks

    def astream(
        self,
        graph: AgentGraph,
        input: Any,
        config: Any,
        kwargs: dict[str, Any],
        run: Callable[..., AsyncIterator[Any]],
    ) -> AsyncIterator[Any]:
        """Async :meth:`stream`."""
        handed = carried(config)
        if not handed:
            return run(input, config, **kwargs)
        from funcware.subagents.inherit import receive

        achunks: AsyncIterator[Any] = receive(
            self, graph, handed, input, config, kwargs, run, "astream"
        )
        return achunks


class Hand:
    """The run wrap of an agent whose middleware declares ``subagents="inherit"``: its run's
    config carries them (with what the run was handed itself) to the agents it starts."""

    def __init__(self, members: Sequence[AgentMiddleware[Any, Any, Any]]) -> None:
        self.members = tuple(members)

    def stream(
        self,
        graph: AgentGraph,
        input: Any,
        config: Any,
        kwargs: dict[str, Any],
        run: Callable[..., Iterator[Any]],
    ) -> Iterator[Any]:
        """``run``, its config carrying the middleware to hand down."""
        from funcware.subagents.inherit import handing

        return run(input, handing(self.members, config), **kwargs)

    def astream(
        self,
        graph: AgentGraph,
        input: Any,
        config: Any,
        kwargs: dict[str, Any],
        run: Callable[..., AsyncIterator[Any]],
    ) -> AsyncIterator[Any]:
        """Async :meth:`stream`."""
        from funcware.subagents.inherit import handing

        return run(input, handing(self.members, config), **kwargs)


class Subagents:
    """The plug-in: the run wraps that hand middleware down and take it in."""

    name = "subagents"

    def compiled(self, graph: AgentGraph, build: Build) -> None:
        """Add :class:`Receive` (outermost) and, when something inherits, :class:`Hand`
        (inside the per-run choice, which decides what the run runs)."""
        wraps = list(graph.run_wraps)
        handed = [m for m in graph.plan.middleware if inherits(m)]
        if handed:
            choice = next((i for i, w in enumerate(wraps) if hasattr(w, "chooser")), -1)
            wraps.insert(choice + 1, Hand(handed))
        graph.run_wraps = (Receive(build.arguments), *wraps)


def _subagents(value: object, context: Context) -> SubagentMode:
    if value != INHERIT:
        raise TypeError(
            f"{context.source} got subagents={value!r}; use subagents='inherit' (agents "
            "started during its runs get it too), or leave it out."
        )
    return INHERIT


def register(**_: Any) -> None:
    """Register the option and the plug-in (``funcware/__init__.py`` calls it)."""
    from funcware.compose.seams import register as register_feature

    register_option(
        Option(
            "subagents",
            ALL,
            None,
            "'inherit': every agent started during its runs (a funcware agent used as a "
            "tool, deepagents' task subagents) runs with it too; default: only this agent.",
            owner="subagents",
            check=_subagents,
        )
    )
    register_feature(Subagents())
