"""What an agent is made of, worked out and checked before any graph is built.

``AgentPlan`` flattens composites, reads each middleware's hooks once, gathers tools and
the merged state schema, and lists every problem (name clashes, schema conflicts, jumps to
nodes that will not exist) so ``create_agent`` can refuse a broken stack in one message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, cast

from langchain_core.tools import BaseTool
from langchain_core.tools import tool as make_tool

from funcware.compose.chain import flatten
from funcware.compose.graph.arguments import tool_problem
from funcware.compose.graph.schema import merge_schemas, native_fields, reducer_keys
from funcware.compose.seams import Build, arrange, transform
from funcware.errors import BrokenStackError, DuplicateMiddlewareError
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

__all__ = ["AgentPlan", "BrokenStackError", "DuplicateMiddlewareError"]


def _as_tool(item: object, owner: object = None, index: int = 0) -> BaseTool | dict[str, Any]:
    """``item`` as a tool; ``owner`` is the middleware that brought it, if any."""
    place = (
        f"create_agent(tools=[...])'s tools[{index}]"
        if owner is None
        else f"tools[{index}] of middleware {getattr(owner, 'name', owner)!r} ({origin(owner)})"
    )
    problem = tool_problem(item, place)
    if problem is not None:
        raise TypeError(problem)
    if isinstance(item, (BaseTool, dict)):
        return item
    return make_tool(cast("Callable[..., Any]", item))


class _SchemaOwner:
    """``middleware 'x' (file:line)``, worked out only when a conflict is reported.

    Finding a class's line reads its source file: too slow for every build.
    """

    def __init__(self, middleware: AgentMiddleware[Any, Any, Any]) -> None:
        self.middleware = middleware

    def __str__(self) -> str:
        return f"middleware {self.middleware.name!r} ({origin(self.middleware)})"


def _tool_name(item: BaseTool | dict[str, Any]) -> str:
    if isinstance(item, BaseTool):
        return item.name
    function = item.get("function")
    if isinstance(function, dict) and "name" in function:
        return str(function["name"])
    return str(item.get("name", "<unnamed schema>"))


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
        return frozenset(_tool_name(t) for t in self.schema_tools)

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
        """Work out and check the plan.

        With ``strict`` (``create_agent``), any problem raises one :class:`BrokenStackError`
        listing them all; otherwise they are left in :attr:`problems` (``explain``).
        ``place`` names a bad list item in errors (``{}`` is its index). ``build`` carries
        the features' options; they check (or reorder) the list and transform each hook
        through the seams, once.
        """
        given = flatten(middleware, place)
        problems: list[str] = []
        duplicates = ""
        if len({m.name for m in given}) != len(given):
            from funcware.compose.graph.stack_errors import first_duplicate, name_clashes

            problems, duplicates = name_clashes(given), first_duplicate(given)
        build = build or Build("create_agent")
        build.report = strict and not duplicates
        members = arrange(given, build)
        if not strict:
            problems.extend(build.problems)
        hooks: dict[HookName, list[HookImpl]] = {hook: [] for hook in HOOKS}
        for member in members:
            for hook, impl in hook_impls(member).items():
                hooks[hook].append(transform(impl, build))
        # Middleware tools first, then the agent's: the order LangChain binds them in.
        owned_tools = [
            (f"middleware {m.name!r}", _as_tool(t, m, i))
            for m in members
            for i, t in enumerate(getattr(m, "tools", ()) or ())
        ]
        owned_tools += [("the agent", _as_tool(t, None, i)) for i, t in enumerate(tools or ())]
        owned = [
            (_SchemaOwner(m), m.state_schema) for m in members if m.state_schema is not AgentState
        ]
        schema = merge_schemas(owned, winner=state_schema)
        plan = cls(
            middleware=members,
            hooks=hooks,
            tools=[t for _, t in owned_tools if isinstance(t, BaseTool)],
            schema_tools=[t for _, t in owned_tools if isinstance(t, dict)],
            state_schema=schema,
            reducer_keys=reducer_keys(schema),
            tool_owners=[(owner, _tool_name(t)) for owner, t in owned_tools],
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
