"""How a run hands middleware down, and how an agent started during it takes them in.

:func:`handing` (the parent's side) puts in the run's config the middleware the run hands
down: what it was handed itself, then its own middleware that declare
``subagents="inherit"`` and that the run did not switch off; by name, its own replacing
what it was handed. langgraph passes the config of a run on to every runnable started
inside it, so a funcware agent invoked in a tool, or by deepagents' ``task``, finds them.

:func:`received` (the subagent's side, asked by its per-run choice) adds the ones it
lacks by name, innermost (nearest the model and the tools, so nothing of its own runs
between them and what they guard),
through the per-run seam: the run asks for ``{"add": [...]}`` in
``config["configurable"]["funcware"]`` and ``funcware.runs`` runs that stack, built once
and cached on the agent. A middleware the subagent has of the same name is not given a
second copy. A run of the subagent may switch off an inherited middleware by name
(``"disable"``) unless it declares ``per_run="required"``, as on the parent: asking is a
:class:`~funcware.errors.RunConfigError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from funcware.errors import RunConfigError
from funcware.hooks.middleware import AgentMiddleware, origin
from funcware.runs import CONFIG_KEY as CHOICE_KEY
from funcware.runs import INHERITED as CONFIG_KEY
from funcware.runs import RunChoice, carried
from funcware.runs.per_run import SKIP_KEY, per_run_mode

if TYPE_CHECKING:
    from funcware.compose.graph.plan import AgentPlan
    from funcware.compose.steps.runs import AgentGraph

__all__ = ["handing", "inherited_names", "plan_for", "received", "stack_for"]

Members = tuple[AgentMiddleware[Any, Any, Any], ...]


def handing(members: Sequence[AgentMiddleware[Any, Any, Any]], config: Any) -> Any:
    """``config``, carrying what its run hands down (see the module's docstring)."""
    configurable = (config or {}).get("configurable") or {}
    skipped = configurable.get(SKIP_KEY, frozenset())
    by_name = {m.name: m for m in carried(config)}
    by_name.update((m.name, m) for m in members if id(m) not in skipped)
    return {**(config or {}), "configurable": {**configurable, CONFIG_KEY: tuple(by_name.values())}}


def _choice(graph: AgentGraph) -> RunChoice | None:
    return next((w for w in graph.run_wraps if isinstance(w, RunChoice)), None)


def _list(spec: Mapping[str, Any], key: str) -> list[Any]:
    value = spec.get(key)
    return list(value) if isinstance(value, (list, tuple)) else []


def stack_for(
    graph: AgentGraph, handed: Members, spec: object, choice: RunChoice | None = None
) -> object:
    """The per-run choice that runs ``graph`` with the ``handed`` middleware it lacks, or
    ``spec`` itself (the run's own choice, ``None`` for none) when it lacks none."""
    choice = choice or _choice(graph)
    off = choice.default_skipped if choice is not None else frozenset()
    running = {m.name for m in graph.plan.middleware if id(m) not in off}
    registered = {m.name for m in (choice.members if choice else graph.plan.middleware)}
    own: Mapping[str, Any] = spec if isinstance(spec, Mapping) else {}
    disabled = {str(name) for name in _list(own, "disable")}
    for member in handed:
        if member.name in disabled and per_run_mode(member) == "required":
            raise RunConfigError(
                f"A run of an agent started inside another's run asked to switch off "
                f"middleware {member.name!r} ({origin(member)}), which that run hands down "
                "(subagents='inherit') and which declares per_run='required': no run may "
                f'switch it off. Remove {member.name!r} from config["configurable"]'
                '["funcware"]["disable"].'
            )
    added = [m for m in handed if m.name not in registered and m.name not in disabled]
    # Registered but off by default (per_run="off"): switched on by name.
    switched_on = [
        m.name
        for m in handed
        if m.name in registered and m.name not in running and m.name not in disabled
    ]
    if spec is not None and not isinstance(spec, Mapping):
        return spec  # malformed: the per-run seam refuses it with its own message
    declined = {m.name for m in handed} - registered  # disabling those means not adding them
    if not added and not switched_on and not declined & disabled:
        return spec
    return {
        **own,
        "disable": [name for name in _list(own, "disable") if name not in declined],
        "add": [*_list(own, "add"), *switched_on, *added],
    }


def received(graph: AgentGraph, choice: RunChoice, handed: Members, config: Any) -> Any:
    """``config``, choosing ``graph``'s stack with the ``handed`` middleware it lacks (for
    ``choice``, the agent's per-run choice, to run); unchanged when it lacks none."""
    configurable = (config or {}).get("configurable") or {}
    spec = configurable.get(CHOICE_KEY)
    chosen = stack_for(graph, handed, spec, choice)
    if chosen is spec:
        return config
    metadata = {**(graph.config or {}).get("metadata", {}), **(config or {}).get("metadata", {})}
    return {
        **(config or {}),
        "metadata": metadata,  # the agent's name (lc_agent_name), kept on a graph built anew
        "configurable": {**configurable, CHOICE_KEY: chosen},
    }


def inherited_names(graph: AgentGraph, config: Mapping[str, Any]) -> list[str]:
    """The names of the middleware a run of ``graph`` with ``config`` inherits."""
    spec = (config.get("configurable") or {}).get(CHOICE_KEY)
    chosen = stack_for(graph, carried(config), spec)
    if chosen is spec or not isinstance(chosen, Mapping):
        return []
    own = len(_list(spec, "add")) if isinstance(spec, Mapping) else 0
    return [m if isinstance(m, str) else m.name for m in chosen["add"][own:]]


def plan_for(graph: AgentGraph, config: Mapping[str, Any]) -> AgentPlan:
    """The plan of the stack a run of ``graph`` with ``config`` gets, inherited middleware
    included (``explain(agent, run=config)``)."""
    from funcware.runs.per_run import plan_for as chosen_plan

    configurable = config.get("configurable") or {}
    spec = configurable.get(CHOICE_KEY)
    chosen = stack_for(graph, carried(config), spec)
    if chosen is spec:
        return chosen_plan(graph, config)
    return chosen_plan(graph, {**config, "configurable": {**configurable, CHOICE_KEY: chosen}})
