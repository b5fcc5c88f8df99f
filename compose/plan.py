"""What an agent is made of, worked out and checked before any graph is built.

``AgentPlan`` flattens composites, reads each middleware's hooks once, gathers tools and
the merged state schema, and lists every problem (name clashes, schema conflicts, jumps to
nodes that will not exist) so ``create_agent`` can refuse a broken stack in one message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.tools import BaseTool
from langchain_core.tools import tool as make_tool

from funcware.hooks.middleware import (
    HOOKS,
    NODE_HOOKS,
    AgentMiddleware,
    HookImpl,
    HookName,
    hook_impls,
    origin,
)
from funcware.hooks.types import AgentState

from .chain import flatten
from .schema import SchemaConflict, merge_schemas, reducer_keys

__all__ = ["AgentPlan", "BrokenStackError"]


class BrokenStackError(ValueError):
    """The middleware stack cannot form an agent; the message lists every problem."""


def _as_tool(item: object) -> BaseTool | dict[str, Any]:
    if isinstance(item, (BaseTool, dict)):
        return item
    if callable(item):
        return make_tool(item)
    raise TypeError(
        f"create_agent(tools=...) got {item!r} ({type(item).__name__}); a tool is a BaseTool, "
        "a function, or a dict JSON schema."
    )


@dataclass
class AgentPlan:
    """The checked parts of an agent: middleware, their hooks, tools and state schema."""

    middleware: list[AgentMiddleware[Any, Any, Any]]
    hooks: dict[HookName, list[HookImpl]]
    tools: list[BaseTool]
    schema_tools: list[dict[str, Any]]
    state_schema: type[AgentState[Any]]
    reducer_keys: frozenset[str]
    problems: list[str] = field(default_factory=list)

    @property
    def has_tool_node(self) -> bool:
        """Whether the agent gets a ``tools`` node (tools of any kind, or tool wraps)."""
        return bool(self.tools or self.schema_tools or self.hooks["wrap_tool_call"])

    @classmethod
    def build(
        cls,
        middleware: Sequence[object],
        tools: Sequence[BaseTool | Callable[..., Any] | dict[str, Any]] | None,
        state_schema: type | None,
    ) -> AgentPlan:
        """Work out and check the plan; raise :class:`BrokenStackError` listing all problems."""
        members = flatten(middleware)
        problems = _name_clashes(members)
        impls = [hook_impls(m) for m in members]
        hooks = {hook: [found[hook] for found in impls if hook in found] for hook in HOOKS}
        all_tools = [_as_tool(t) for t in [*(tools or ()), *(t for m in members for t in m.tools)]]
        owned = [(f"middleware {m.name!r} ({origin(m)})", m.state_schema) for m in members]
        if state_schema is not None:
            owned.append(("the state_schema given to create_agent", state_schema))
        try:
            schema = merge_schemas(owned)
        except SchemaConflict as exc:
            problems.append(str(exc))
            schema = AgentState
        plan = cls(
            middleware=members,
            hooks=hooks,
            tools=[t for t in all_tools if isinstance(t, BaseTool)],
            schema_tools=[t for t in all_tools if isinstance(t, dict)],
            state_schema=schema,
            reducer_keys=reducer_keys(schema),
            problems=problems,
        )
        plan.problems.extend(plan._jump_problems())
        if plan.problems:
            listing = "\n".join(f"  - {p}" for p in plan.problems)
            raise BrokenStackError(f"create_agent cannot build this agent:\n{listing}")
        return plan

    def _jump_problems(self) -> list[str]:
        if self.has_tool_node:
            return []
        return [
            f"{impl.describe()} may jump to 'tools', but the agent has no tools node "
            "(give it tools, or drop 'tools' from can_jump_to)."
            for hook in NODE_HOOKS
            for impl in self.hooks[hook]
            if "tools" in impl.can_jump_to
        ]


def _name_clashes(members: Sequence[AgentMiddleware[Any, Any, Any]]) -> list[str]:
    seen: dict[str, AgentMiddleware[Any, Any, Any]] = {}
    problems: list[str] = []
    for m in members:
        if m.name not in seen:
            seen[m.name] = m
            continue
        first = seen[m.name]
        same = " (the same instance twice)" if first is m else ""
        problems.append(
            f"two middleware are named {m.name!r}{same}: {first!r} from {origin(first)} and "
            f"{m!r} from {origin(m)}. Names must be unique: pass name='...' to the decorator "
            "(@before_model(name='...')), or set `.name` / override the `name` property "
            "of a class."
        )
    return problems
