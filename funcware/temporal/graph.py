"""From what ``create_agent`` built to what Temporal's ``LangGraphPlugin`` takes.

:func:`temporal_graph` marks every node of the agent's ``StateGraph`` with where it runs
(:func:`~funcware.temporal.placement.placement`) and its activity options, and swaps in
the callables of :mod:`funcware.temporal.nodes`. :func:`plugin` does that for each agent
and builds the ``LangGraphPlugin``. Workers and workflows find the compiled agent by its
graph name with :func:`agent_for`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import timedelta
from typing import Any

from langgraph.graph import StateGraph
from temporalio.common import RetryPolicy
from temporalio.langgraph import LangGraphPlugin

from funcware.effects.declarations import declarations
from funcware.temporal.nodes import activity_node, tools_with_state, workflow_node
from funcware.temporal.placement import Placement, placement

__all__ = ["DEFAULT_ACTIVITY_OPTIONS", "agent_for", "plugin", "temporal_graph"]

DEFAULT_ACTIVITY_OPTIONS: dict[str, Any] = {
    "start_to_close_timeout": timedelta(minutes=5),
    "heartbeat_timeout": timedelta(seconds=30),
    "retry_policy": RetryPolicy(maximum_attempts=3),
}
"""Used when :func:`plugin` gets no ``default_activity_options``: a lost worker's activity
is retried within 30 s, up to three attempts in all (Temporal's own default is unlimited)."""

_AGENTS: dict[str, Any] = {}
_PREPARED = "__funcware_temporal_placement__"


def _retried_by(hooks: list[Any]) -> bool:
    """Whether a wrap layer of ``hooks`` declares that it calls its handler again."""
    for impl in hooks:
        declared = declarations(impl.middleware)
        if declared is not None and "handler.retry" in declared.writes:
            return True
    return False


def temporal_graph(
    agent: Any,
    *,
    activity: Collection[str] = (),
    workflow: Collection[str] = (),
    node_options: Mapping[str, Mapping[str, Any]] | None = None,
) -> StateGraph[Any, Any, Any, Any]:
    """The ``StateGraph`` of ``agent``, its nodes marked for ``LangGraphPlugin``.

    ``activity`` / ``workflow`` name middleware placed there whatever they declare (see
    :func:`~funcware.temporal.placement.placement`, which raises for a hook the workflow
    could not replay). ``node_options`` gives ``workflow.execute_activity`` options per
    graph node (``{"tools": {"start_to_close_timeout": timedelta(seconds=30)}}``).
    The graph is changed in place: prepare an agent once, for one plugin.
    """
    if getattr(agent, _PREPARED, None) is not None:
        raise ValueError(
            "this agent was already prepared for Temporal (temporal_graph() or plugin() "
            "changes its graph in place); build the agent again with create_agent() to "
            "prepare another one."
        )
    where: Placement = placement(agent, activity=activity, workflow=workflow)
    plan = agent.plan
    retried = {
        "model": _retried_by(plan.hooks["wrap_model_call"]),
        "tools": _retried_by(plan.hooks["wrap_tool_call"]),
    }
    options = dict(node_options or {})
    unknown = sorted(set(options) - set(agent.builder.nodes))
    if unknown:
        raise ValueError(
            f"node_options names {unknown}, which are not nodes of this agent; its nodes: "
            f"{', '.join(sorted(agent.builder.nodes))}."
        )
    builder: StateGraph[Any, Any, Any, Any] = agent.builder
    for node, spec in builder.nodes.items():
        runnable: Any = spec.runnable
        sync, async_ = runnable.func, runnable.afunc
        step = where.where(node)
        if step == "activity":
            body = activity_node(node, sync, async_, final_errors=retried.get(node, False))
        else:
            body = workflow_node(node, sync, async_)
        runnable.func, runnable.afunc = body, None
        spec.metadata = {**(spec.metadata or {}), **options.get(node, {}), "execute_in": step}
    setattr(agent, _PREPARED, where)
    plan.notes["temporal"] = where  # explain(agent) shows it
    return builder


def plugin(
    agents: Mapping[str, Any],
    *,
    default_activity_options: Mapping[str, Any] | None = None,
    **plugin_options: Any,
) -> LangGraphPlugin:
    """Temporal's ``LangGraphPlugin`` serving ``agents`` (graph name -> ``create_agent``'s result).

    An agent not yet given to :func:`temporal_graph` is prepared with its defaults. Every
    worker builds the same agents under the same names; workflows run one with
    ``agent_for(name)`` (or :class:`~funcware.temporal.workflow.AgentWorkflow`).
    ``plugin_options`` go to ``LangGraphPlugin`` as they are.
    """
    graphs = {}
    for name, agent in agents.items():
        if getattr(agent, _PREPARED, None) is None:
            temporal_graph(agent)
        graphs[name] = agent.builder
    made = LangGraphPlugin(
        graphs=graphs,
        default_activity_options=dict(
            DEFAULT_ACTIVITY_OPTIONS
            if default_activity_options is None
            else default_activity_options
        ),
        **plugin_options,
    )
    for name, agent in agents.items():
        tools = agent.builder.nodes.get("tools")
        if tools is not None:  # after the plugin: wrap what it schedules
            runnable = tools.runnable
            runnable.afunc = tools_with_state(runnable.afunc, runnable._extract_state)
        _AGENTS[name] = agent
    return made


def agent_for(name: str) -> Any:
    """The compiled agent served under graph name ``name`` in this process."""
    try:
        return _AGENTS[name]
    except KeyError:
        raise KeyError(
            f"no funcware agent is served under the graph name {name!r} in this worker; "
            f"served: {', '.join(sorted(_AGENTS)) or 'none'}. Pass it to "
            "funcware.temporal.plugin({name: agent}) when building the worker."
        ) from None
