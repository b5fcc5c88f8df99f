"""What an agent is made of (middleware, hooks, tools, state schema), worked out and checked
before any graph is built; every problem is listed so a broken stack is refused in one error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from langchain_core.tools import BaseTool

from funcware.compose.chain import flatten
from funcware.compose.graph.schema import merge_schemas, native_fields, reducer_keys
from funcware.compose.seams import Build, activate, arrange, transform
from funcware.errors import BrokenStackError, DuplicateMiddlewareError
from funcware.hooks.middleware import (
    HOOKS,
    NODE_HOOKS,
    AgentMiddleware,
    HookImpl,
    HookName,
    hook_impls,
)
from funcware.hooks.types import AgentState

__all__ = ["AgentPlan", "BrokenStackError", "DuplicateMiddlewareError"]


@dataclass
class AgentPlan:
    """The checked parts of an agent: middleware, their hooks, tools and state schema."""

    middleware: list[AgentMiddleware[Any, Any, Any]]
    hooks: dict[HookName, list[HookImpl]]
    tools: list[BaseTool]
    schema_tools: list[dict[str, Any]]
    state_schema: type[AgentState[Any]]
    reducer_keys: frozenset[str]
    tool_owners: list[tuple[str, str]] = field(default_factory=list)
    """``(owner, tool name)`` for every tool: "the agent" or "middleware 'x'"."""
    problems: list[str] = field(default_factory=list)
    response_format: object = None
    """The agent's ``ModelRequest.response_format`` at the start of each call (explain)."""
    answer_tools: frozenset[str] = frozenset()
    """Tool calls the model step answers itself (structured output): never run as tools."""
    notes: dict[str, Any] = field(default_factory=dict)
    """What the features worked out during the build, under their names (for explain)."""

    @cached_property
    def state_keys(self) -> frozenset[str]:
        """Every field of the agent's merged state schema."""
        return frozenset(native_fields(self.state_schema))

    @property
    def schema_tool_names(self) -> frozenset[str]:
        """Names of the dict-schema tools (bound to the model, with no implementation)."""
        from funcware.compose.graph.tools import tool_name

        return frozenset(tool_name(t) for t in self.schema_tools)

    @property
    def has_tool_node(self) -> bool:
        """Whether the agent gets a ``tools`` node (tools of any kind, or tool wraps)."""
        return bool(self.tools or self.schema_tools or self.hooks["wrap_tool_call"])

    @classmethod
    def build(
        cls,
        middleware: Sequence[object],
        tools: Sequence[BaseTool | Callable[..., Any] | dict[str, Any]] | None = None,
        state_schema: type | None = None,
        *,
        strict: bool = True,
        place: str = "create_agent(middleware=[...])'s middleware[{}]",
        build: Build | None = None,
    ) -> AgentPlan:
        """Work out and check the plan; ``strict``: any problem raises one
        :class:`BrokenStackError`, else they are left in :attr:`problems` (``explain``).
        ``place`` names a bad list item (``{}``: its index); ``build`` carries the features'
        options, which check (or reorder) the list and transform each hook, once."""
        given = flatten(middleware, place)
        problems: list[str] = []
        duplicates = ""
        if len({m.name for m in given}) != len(given):
            from funcware.compose.graph.stack_errors import first_duplicate, name_clashes

            problems, duplicates = name_clashes(given), first_duplicate(given)
        build = build or Build("create_agent")
        build.report = strict and not duplicates
        activate(given, build)
        members = arrange(given, build)
        if not strict:
            problems.extend(build.problems)
        hooks: dict[HookName, list[HookImpl]] = {hook: [] for hook in HOOKS}
        for member in members:
            for hook, impl in hook_impls(member).items():
                hooks[hook].append(transform(impl, build))
        owned_tools: list[tuple[str, BaseTool | dict[str, Any]]] = []
        tool_owners: list[tuple[str, str]] = []
        if tools or any(getattr(m, "tools", None) for m in members):
            from funcware.compose.graph.tools import gather_tools, tool_name

            owned_tools = gather_tools(members, tools or ())
            tool_owners = [(owner, tool_name(t)) for owner, t in owned_tools]
        owned: list[tuple[object, type]] = []
        if any(m.state_schema is not AgentState for m in members):
            from funcware.compose.graph.merging import SchemaOwner

            owned = [(SchemaOwner(m), m.state_schema) for m in members]
        schema = merge_schemas(owned, winner=state_schema)
        plan = cls(
            middleware=members,
            hooks=hooks,
            tools=[t for _, t in owned_tools if isinstance(t, BaseTool)],
            schema_tools=[t for _, t in owned_tools if isinstance(t, dict)],
            state_schema=schema,
            reducer_keys=reducer_keys(schema),
            tool_owners=tool_owners,
            problems=problems,
            notes=build.data,
        )
        plan.problems.extend(plan._jump_problems())
        if strict and plan.problems:
            from funcware.compose.graph.stack_errors import broken_stack

            raise broken_stack(plan.problems, duplicates)
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
