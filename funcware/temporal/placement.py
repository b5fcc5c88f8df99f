"""Where each step of an agent runs on Temporal: in the workflow, or as an activity.

The rule, from what each middleware declares (``funcware.effects``):

- ``model`` and ``tools`` run as activities, always: they do I/O. Every
  ``wrap_model_call`` and ``wrap_tool_call`` layer runs inside the activity of the call it
  wraps, so a retry or fallback layer retries inside that one activity.
- A node hook (``before_agent``, ``before_model``, ``after_model``, ``after_agent``) runs in
  the workflow when its middleware declares its effects itself (``reads=`` or ``writes=``,
  as decorator keywords or class attributes): the effect vocabulary names only what a hook
  does to the agent's state and messages, so a declaration is a promise that the hook does
  no I/O. A hook whose middleware declares nothing runs as an activity, and so does a
  LangChain built-in (funcware's table of them states their order, not their I/O).
- ``activity=`` names middleware to run as activities whatever they declare;
  ``workflow=`` names middleware to run in the workflow whatever they declare.

A hook placed in the workflow runs again whenever Temporal replays the workflow, so it
must compute the same result from the same state. funcware refuses it at build, naming
the middleware, the hook, ``file:line`` and the fix, when it can see that it would not:

- it has a deadline (``timeout=``): whether it fires depends on the wall clock;
- it was put in the workflow with ``workflow=`` but declares no effects: nothing says it
  does no I/O, and a replay would do that I/O again.

Nothing here imports ``temporalio``: :func:`placement` works without the extra.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Literal

from funcware.errors import NondeterministicHookError
from funcware.hooks.middleware import NODE_HOOKS, HookImpl

__all__ = ["NondeterministicHookError", "Placement", "Step", "placement"]

Where = Literal["workflow", "activity"]


@dataclass(frozen=True)
class Step:
    """One step of the agent and where it runs."""

    node: str
    """The graph node (``"model"``, ``"tools"``, ``"{middleware}.{hook}"``)."""
    where: Where
    why: str
    layers: tuple[str, ...] = ()
    """For ``model`` and ``tools``: the wrap layers inside its activity, outermost first."""


@dataclass(frozen=True)
class Placement:
    """Where every step of one agent runs; ``str()`` it for a table."""

    steps: tuple[Step, ...]

    def where(self, node: str) -> Where:
        """``"workflow"`` or ``"activity"`` for the graph node ``node``."""
        for step in self.steps:
            if step.node == node:
                return step.where
        raise KeyError(f"no node {node!r}; the nodes: {', '.join(s.node for s in self.steps)}")

    @property
    def activities(self) -> frozenset[str]:
        """The graph nodes that run as activities."""
        return frozenset(s.node for s in self.steps if s.where == "activity")

    def __str__(self) -> str:
        width = max(len(s.node) for s in self.steps)
        lines = []
        for step in self.steps:
            inside = f" (inside: {', '.join(step.layers)})" if step.layers else ""
            lines.append(f"{step.node:<{width}}  {step.where:<8}  {step.why}{inside}")
        return "\n".join(lines)


def _declares(middleware: Any) -> bool:
    """Whether the middleware itself declared its effects (not LangChain's table for it)."""
    return any(getattr(middleware, key, None) is not None for key in ("reads", "writes"))


def _adapted(middleware: Any) -> bool:
    """Whether the middleware is LangChain's (run through funcware's adapter)."""
    return type(middleware).__module__.split(".")[0] == "langchain"


def _names(value: Collection[str], keyword: str, known: set[str]) -> frozenset[str]:
    if isinstance(value, str):
        raise TypeError(
            f"{keyword}= takes a list of middleware names, got {value!r}; "
            f"write {keyword}=[{value!r}]."
        )
    unknown = sorted(set(value) - known)
    if unknown:
        raise ValueError(
            f"{keyword}= names {unknown}, which this agent has no middleware called; "
            f"its middleware: {', '.join(sorted(known)) or 'none'}."
        )
    return frozenset(value)


def _refuse(impl: HookImpl, problem: str, fix: str) -> None:
    raise NondeterministicHookError(
        f"{impl.describe()} would run in the Temporal workflow, but {problem}, so a replay "
        f"of the workflow could compute something else than the first run did. {fix}"
    )


def _hook_step(impl: HookImpl, activity: frozenset[str], workflow: frozenset[str]) -> Step:
    name = impl.middleware.name
    if name in activity:
        return Step(impl.label, "activity", "activity=[...] names it")
    if name in workflow:
        if not _declares(impl.middleware):
            _refuse(
                impl,
                "it declares no effects, so nothing says it does no I/O (a replay would do "
                "it again)",
                f"Declare what it does (@{impl.hook}(reads=[...], writes=[...])) if it only "
                f"reads and writes the agent's state, or drop {name!r} from workflow=[...] "
                "so it runs as an activity.",
            )
        why = "workflow=[...] names it"
    elif _adapted(impl.middleware):
        return Step(impl.label, "activity", "a LangChain middleware: may do I/O")
    elif not _declares(impl.middleware):
        return Step(impl.label, "activity", "declares no effects: may do I/O")
    else:
        why = "declares only state effects"
    timeout = impl.options.get("timeout")
    if timeout is not None:
        _refuse(
            impl,
            f"it has a deadline (timeout={timeout:g}) and whether a deadline fires depends "
            "on the wall clock",
            f"Drop timeout= (the workflow's own timeouts bound it), or pass "
            f"activity=[{name!r}] so it runs as an activity, whose start_to_close_timeout "
            "is the deadline.",
        )
    return Step(impl.label, "workflow", why)


def placement(
    agent: Any, *, activity: Collection[str] = (), workflow: Collection[str] = ()
) -> Placement:
    """Where each step of ``agent`` (what ``create_agent`` built) runs on Temporal.

    ``activity`` and ``workflow`` name middleware to place there whatever they declare.
    Raises :class:`NondeterministicHookError` for a hook that the workflow could not
    replay identically (see the module's docstring).
    """
    plan = getattr(agent, "plan", None)
    if plan is None:
        raise TypeError(
            f"placement() takes what funcware's create_agent built, got "
            f"{type(agent).__name__}; pass create_agent(...)'s result."
        )
    known = {m.name for m in plan.middleware}
    in_activity = _names(activity, "activity", known)
    in_workflow = _names(workflow, "workflow", known)
    both = sorted(in_activity & in_workflow)
    if both:
        raise ValueError(f"{both} are in both activity= and workflow=; keep each in one.")
    hooks: dict[str, list[HookImpl]] = plan.hooks
    steps = [
        _hook_step(impl, in_activity, in_workflow) for hook in NODE_HOOKS for impl in hooks[hook]
    ]
    model_layers = tuple(i.middleware.name for i in hooks["wrap_model_call"])
    steps.insert(0, Step("model", "activity", "calls the model", model_layers))
    if plan.has_tool_node:
        tool_layers = tuple(i.middleware.name for i in hooks["wrap_tool_call"])
        steps.insert(1, Step("tools", "activity", "runs the tools", tool_layers))
    return Placement(tuple(steps))
