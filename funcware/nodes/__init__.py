"""LangGraph's node policies on an agent's nodes: ``create_agent(node_policies={...})``.

A feature on the core's ``node_options`` seam. ``node_policies`` maps a node to the
keywords langgraph's ``add_node`` takes for it (``retry_policy``, ``cache_policy``,
``error_handler``, ``timeout``):

- ``"model"``, ``"tools"``: the agent's model and tool nodes;
- a hook node's name (``"{middleware.name}.{hook}"``, as ``agent.get_graph()`` shows it),
  or a middleware's name (each of its node hooks);
- ``"*"``: every node's defaults, through ``StateGraph.set_node_defaults`` (a node's own
  policy wins).

langgraph runs them: retries with its backoff, results cached in the agent's ``cache=``,
an error handler that receives ``NodeError``, timeouts (a wall-clock ``run_timeout`` and an
``idle_timeout`` that ``runtime.heartbeat()`` and progress refresh). langgraph supports
node timeouts only in async runs (``ainvoke``/``astream``): a sync run of an agent with one
raises langgraph's ``ValueError``.

A node hook may carry its own: ``@before_model(node_policy={"retry_policy": ...})``, or a
class attribute ``node_policy = {...}`` (every node hook of the middleware); the agent's
``node_policies`` win a keyword both set. An agent that gives none uses none of it.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from funcware.hooks.options import Context

if TYPE_CHECKING:
    from funcware.compose.graph.plan import AgentPlan
    from funcware.compose.seams import Build
    from funcware.hooks.middleware import HookImpl

__all__ = ["KEYWORDS", "NodePolicies"]

KEYWORDS = ("retry_policy", "cache_policy", "error_handler", "timeout")
"""What a node's policy may set: langgraph ``add_node``'s keywords of the same names."""

_DATA = "nodes"


def _given(build: Build) -> Mapping[str, Mapping[str, Any]]:
    given: Mapping[str, Mapping[str, Any]] = build.options.get("node_policies") or {}
    return given


def _keywords(policy: object, where: str) -> dict[str, Any]:
    """``policy`` as ``add_node`` keywords, or a clear error starting with ``where``."""
    if not isinstance(policy, Mapping):
        raise TypeError(
            f"{where} must be a dict of {', '.join(KEYWORDS)}; got {type(policy).__name__}."
        )
    unknown = sorted(set(policy) - set(KEYWORDS))
    if unknown:
        raise TypeError(
            f"{where} sets {', '.join(map(str, unknown))}; a node policy takes langgraph "
            f"add_node's {', '.join(KEYWORDS)}."
        )
    return dict(policy)


def check_node_policy(value: object, context: Context) -> dict[str, Any] | None:
    return None if value is None else _keywords(value, f"{context.source}: node_policy=")


def _check(given: object, plan: AgentPlan) -> dict[str, dict[str, Any]]:
    """``given`` checked against the agent's nodes: policies by node name (``"*"``: all)."""
    if not isinstance(given, Mapping):
        raise TypeError(
            f"create_agent(node_policies=...) takes a dict of node name to policy, got "
            f"{type(given).__name__}; e.g. node_policies={{'model': "
            "{'retry_policy': RetryPolicy(max_attempts=3)}}."
        )
    hooks = {impl.label: impl for impls in plan.hooks.values() for impl in impls}
    node_hooks = {label for label, impl in hooks.items() if not impl.hook.startswith("wrap")}
    by_middleware: dict[str, list[str]] = {}
    for label in sorted(node_hooks):
        by_middleware.setdefault(label.rsplit(".", 1)[0], []).append(label)
    nodes = {"*", "model", "tools", *node_hooks}
    policies: dict[str, dict[str, Any]] = {}
    for key, given_policy in given.items():
        policy = _keywords(given_policy, f"create_agent(node_policies=...)'s {key!r}")
        targets = [key] if key in nodes else by_middleware.get(key, [])
        if not targets:
            close = difflib.get_close_matches(str(key), sorted(nodes | set(by_middleware)), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"create_agent(node_policies=...) names {key!r}, which is no node of this "
                f"agent.{hint} Its nodes: {', '.join(sorted(nodes - {'*'}))}; a middleware's "
                "name stands for each of its node hooks, '*' for every node. Wrap hooks "
                "(wrap_model_call, wrap_tool_call) run inside the model and tools nodes."
            )
        if "tools" in targets and not plan.has_tool_node:
            raise ValueError(
                "create_agent(node_policies=...) names 'tools', but this agent has no tools "
                "node (give it tools, or drop the 'tools' policy)."
            )
        for target in targets:
            policies.setdefault(target, {}).update(policy)
    return policies


class NodePolicies:
    """The plug-in: langgraph's node policies, given per node and as defaults."""

    name = "nodes"

    def plan(self, plan: AgentPlan, build: Build) -> None:
        """Check the agent's ``node_policies`` against its nodes."""
        given = _given(build)
        if given:
            build.data[_DATA] = _check(given, plan)

    def node_options(self, name: str, impl: HookImpl | None, build: Build) -> dict[str, Any]:
        """The ``add_node`` keywords for node ``name`` (``"*"``: the defaults)."""
        own = getattr(impl.middleware, "node_policy", None) if impl is not None else None
        policies: dict[str, dict[str, Any]] | None = build.data.get(_DATA)
        if not own and not policies:
            return {}
        where = f"the node_policy of middleware {impl.middleware.name!r}" if impl else ""
        options = _keywords(own, where) if own else {}
        options.update((policies or {}).get(name, {}))
        return options
