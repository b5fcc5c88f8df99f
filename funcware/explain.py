"""``explain()``: a readable description of a middleware pipeline, and a Mermaid diagram.

It shows what ``agent.get_graph()`` cannot: the order node hooks run in, the onion of
model and tool wraps (outermost first), declared jumps, contributed tools and the state
fields each middleware adds (private ones marked), and each hook's options: its deadline
(``timeout 2s``), a failure policy other than raising (``on_error=continue``) and always-run
cleanup (``always``); and, when any middleware declares effects or constraints, each one's
declaration, why each sits where it does, what ``order="auto"`` moved, the conflicts
(also in :attr:`Explanation.conflicts`) and the hazards, each with the warning's words
(also in :attr:`Explanation.hazards`; the diagram links each to its two hooks); the
middleware that agents started during its runs inherit (``subagents="inherit"``), and,
given a run's config that hands some down, what the agent inherits; and, for
an agent prepared for Temporal (``funcware.temporal``), where each step runs.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Annotated, Any, get_args, get_origin

from typing_extensions import get_type_hints

from funcware.compose.graph.arguments import member_problem
from funcware.compose.graph.plan import AgentPlan
from funcware.compose.graph.schema import field_metadata, strip_required
from funcware.compose.steps.runs import AgentGraph
from funcware.effects.hazards import Hazard
from funcware.effects.ordering import Conflict, OrderReport
from funcware.hooks.middleware import HookImpl
from funcware.hooks.types import AgentState, OmitFromSchema
from funcware.observe.record import RunRecord, beside_plan
from funcware.runs import carried
from funcware.runs.layers import agent_layers
from funcware.structured.runtime import describe_format
from funcware.subagents import inherits

__all__ = ["Explanation", "explain"]


def _describe_field(key: str, annotation: Any) -> str:
    bare = strip_required(annotation)
    base = get_args(bare)[0] if get_origin(bare) is Annotated else bare
    type_name = getattr(base, "__name__", None) or repr(base).replace("typing.", "")
    marks = [
        "private"
        if (item.input and item.output)
        else ("not in input" if item.input else "not in output")
        for item in field_metadata(annotation)
        if isinstance(item, OmitFromSchema)
    ]
    return f"{key}: {type_name}" + (f" ({', '.join(marks)})" if marks else "")


def _own_fields(schema: type) -> list[str]:
    base = get_type_hints(AgentState, include_extras=True)
    fields = get_type_hints(schema, include_extras=True)
    return [_describe_field(key, ann) for key, ann in fields.items() if key not in base]


def _options(impl: HookImpl) -> str:
    """`` [timeout 2s, on_error=continue, always, stream=buffer]``, or ``""`` for none."""
    timeout, on_error = impl.options.get("timeout"), impl.options.get("on_error", "raise")
    marks = [f"timeout {timeout:g}s"] if timeout is not None else []
    if on_error != "raise":
        marks.append(f"on_error={on_error}")
    if impl.options.get("always"):
        marks.append("always")
    stream = getattr(impl.middleware, "stream", "pass")
    if impl.hook in ("after_model", "wrap_model_call") and stream != "pass":
        chars = getattr(stream, "chars", None)
        marks.append(f"stream=sliding window {chars} chars" if chars else f"stream={stream}")
    return f" [{', '.join(marks)}]" if marks else ""


@dataclass(frozen=True)
class Explanation:
    """The description of one pipeline; ``str()`` it, or draw it with :meth:`mermaid`."""

    plan: AgentPlan
    run: RunRecord | None = None
    """A run record shown beside the plan (``explain(agent, run=run)``)."""
    inherited: tuple[str, ...] = ()
    """The middleware the run inherits from the run that started it
    (``explain(subagent, run=config)``, a config handing some down)."""

    @property
    def ordering(self) -> OrderReport | None:
        """The order check of the plan (``None`` when nothing declared anything)."""
        report = self.plan.notes.get("effects")
        return report if isinstance(report, OrderReport) else None

    @property
    def conflicts(self) -> list[Conflict]:
        """Effects two declared middleware touch with no constraint ordering them."""
        return list(self.ordering.conflicts) if self.ordering is not None else []

    @property
    def hazards(self) -> list[Hazard]:
        """Hooks that hide from another what it needs, in the order they run."""
        return list(self.ordering.hazards) if self.ordering is not None else []

    def _order_lines(self) -> list[str]:
        report = self.ordering
        if report is None or all(d is None for d in report.declarations):
            return []
        out = []
        pairs = zip(report.order, report.declarations, strict=True)
        for place, (m, decl) in enumerate(pairs, start=1):
            if decl is None:
                out.append(f"  {'effects':<13} {m.name}: undeclared (not checked)")
                continue
            parts = decl.describe() or ["nothing"]
            out.append(f"  {'effects':<13} {m.name}: {' '.join(parts)}")
            reasons = report.reasons.get(m.name)
            why = "; ".join(reasons) if reasons else "no constraint: as given"
            out.append(f"  {'placed':<13} {m.name} at {place}: {why}")
        out.extend(f"  {'moved':<13} {line}" for line in report.moved)
        out.extend(f"  CONFLICT: {c.message}" for c in report.conflicts)
        out.extend(f"  HAZARD: {h.message}" for h in report.hazards)
        return out

    def _hook_line(self, title: str, impls: Sequence[HookImpl]) -> str:
        if not impls:
            return f"  {title:<13} -"
        parts = [
            impl.middleware.name
            + _options(impl)
            + (f" [may jump to {', '.join(impl.can_jump_to)}]" if impl.can_jump_to else "")
            for impl in impls
        ]
        return f"  {title:<13} " + " -> ".join(parts)

    def _onion_line(self, title: str, impls: Sequence[HookImpl], core: str) -> str:
        names = [impl.middleware.name + _options(impl) for impl in impls]
        return f"  {title:<13} " + " ( ".join([*names, core]) + " )" * len(names)

    def lines(self) -> list[str]:
        """The description, one line per entry."""
        plan, hooks = self.plan, self.plan.hooks
        names = ", ".join(m.name for m in plan.middleware) or "none"
        out = [f"{len(plan.middleware)} middleware: {names}"]
        layers = agent_layers(plan.middleware)
        if layers:
            wraps = [layer.name for layer in layers]
            out.append(f"  {'agent call':<13} " + " ( ".join([*wraps, "run"]) + " )" * len(wraps))
        out.append(self._hook_line("before_agent", hooks["before_agent"]))
        out.append(self._hook_line("before_model", hooks["before_model"]))
        out.append(self._onion_line("model call", hooks["wrap_model_call"], "model"))
        out.append(self._hook_line("after_model", list(reversed(hooks["after_model"]))))
        if plan.has_tool_node:
            out.append(self._onion_line("tool call", hooks["wrap_tool_call"], "tool"))
        else:
            out.append(f"  {'tool call':<13} - (no tools)")
        out.append(self._hook_line("after_agent", list(reversed(hooks["after_agent"]))))
        tools = [f"{name} ({owner})" for owner, name in plan.tool_owners]
        out.append(f"  {'tools':<13} " + (", ".join(tools) or "-"))
        fields = [
            f"{field} [{m.name}]"
            for m in plan.middleware
            if m.state_schema is not AgentState
            for field in _own_fields(m.state_schema)
        ]
        out.append(f"  {'state':<13} " + ("; ".join(fields) or "-"))
        if plan.response_format is not None:
            out.append(f"  {'response':<13} {describe_format(plan.response_format)}")
        handed = [m.name for m in plan.middleware if inherits(m)]
        if handed:
            out.append(f"  {'subagents':<13} inherit {', '.join(handed)}")
        if self.inherited:
            out.append(f"  {'inherited':<13} {', '.join(self.inherited)} (from the parent run)")
        placed = plan.notes.get("temporal")  # where each step runs (funcware.temporal)
        if placed is not None:
            out.extend(f"  {'temporal':<13} {line}" for line in str(placed).splitlines())
        out.extend(self._order_lines())
        out.extend(f"  PROBLEM: {problem}" for problem in plan.problems)
        if self.run is not None:
            out.extend(_run_lines(plan, self.run))
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def mermaid(self) -> str:
        """A Mermaid flowchart: hook nodes in order, wraps drawn as nested boxes."""
        hooks = self.plan.hooks
        lines = ["flowchart TD", "  start([start])", "  finish([end])"]
        ids: dict[str, str] = {}

        def node(label: str, shape: str = "[{}]") -> str:
            ident = ids.setdefault(label, f"n{len(ids)}")
            lines.append(f"  {ident}{shape.format(_quote(label))}")
            return ident

        def boxed(core: str, impls: Sequence[HookImpl], kind: str) -> str:
            ident = ids.setdefault(core, f"n{len(ids)}")
            for depth, impl in enumerate(impls):
                ids[impl.label] = f"{kind}{depth}"
                lines.append(f"  {'  ' * depth}subgraph {kind}{depth}[{_quote(impl.label)}]")
            lines.append(f"  {'  ' * len(impls)}{ident}(({core}))")
            lines.extend(f"  {'  ' * d}end" for d in reversed(range(len(impls))))
            return ident

        before = [node(i.label) for i in hooks["before_agent"] + hooks["before_model"]]
        model = boxed("model", hooks["wrap_model_call"], "wrap_model_")
        after = [node(i.label) for i in reversed(hooks["after_model"])]
        finish = [node(i.label) for i in reversed(hooks["after_agent"])]
        chain = ["start", *before, model, *after]
        lines.extend(f"  {a} --> {b}" for a, b in pairwise(chain))
        exit_chain = [chain[-1], *finish, "finish"]
        lines.extend(f"  {a} --> {b}" for a, b in pairwise(exit_chain))
        loop = (before[len(hooks["before_agent"]) :] or [model])[0]
        targets = {"model": loop, "end": exit_chain[1]}
        if self.plan.has_tool_node:
            targets["tools"] = boxed("tools", hooks["wrap_tool_call"], "wrap_tool_")
            lines.append(f"  {chain[-1]} -. tool calls .-> {targets['tools']}")
            lines.append(f"  {targets['tools']} --> {loop}")
        for impls in (hooks[h] for h in ("before_agent", "before_model", "after_model")):
            for impl in impls:
                lines.extend(
                    f"  {ids[impl.label]} -. jump {t} .-> {targets[t]}"
                    for t in impl.can_jump_to
                    if t in targets
                )
        for number, hazard in enumerate(self.hazards):
            lines.append(f"  hazard{number}{{{{{_quote('hazard: ' + hazard.sentence)}}}}}")
            lines.extend(
                f"  {ids[label]} -.- hazard{number}" for label in hazard.hooks if label in ids
            )
        return "\n".join(lines)


def _quote(label: str) -> str:
    return '"' + label.replace('"', "'") + '"'


def explain(target: Any, *, run: RunRecord | Mapping[str, Any] | None = None) -> Explanation:
    """Describe a middleware list (or a single middleware) or an agent from ``create_agent``.

    With ``run`` (from ``funcware.observe.record()``), what each hook did on that run is
    shown beside the plan, then the run's timeline (agents started during the run nested
    under it). With ``run`` a run's config, the plan is the stack that run gets
    (``config["configurable"]["funcware"]``, see ``funcware.runs.per_run``, and the
    middleware a parent run hands down, see ``funcware.subagents``).
    """
    plan = getattr(target, "plan", None)
    if isinstance(target, AgentGraph) and isinstance(plan, AgentPlan):
        if isinstance(run, Mapping):
            from funcware.runs.per_run import plan_for

            if carried(run):
                from funcware.subagents import inherit

                names = tuple(inherit.inherited_names(target, run))
                return Explanation(inherit.plan_for(target, run), inherited=names)
            return Explanation(plan_for(target, run))
        return Explanation(plan, run)
    if hasattr(target, "get_graph"):
        raise TypeError(
            "explain() got a graph that funcware.create_agent did not build; pass the "
            "middleware list instead."
        )
    if isinstance(target, (list, tuple)):
        middleware = list(target)
    elif member_problem(target, "") is None:
        middleware = [target]
    else:
        raise TypeError(
            f"explain() got {target!r} ({type(target).__name__}); it takes a middleware, a "
            "list of middleware, or an agent built by funcware.create_agent."
        )
    record = run if isinstance(run, RunRecord) else None
    return Explanation(
        AgentPlan.build(middleware, strict=False, place="explain([...])[{}]"), record
    )


def _run_lines(plan: AgentPlan, run: RunRecord) -> list[str]:
    """The run beside the plan: each hook's outcomes in plan order, then the timeline."""
    hooks = plan.hooks
    order = [
        *hooks["before_agent"],
        *hooks["before_model"],
        *hooks["wrap_model_call"],
        *reversed(hooks["after_model"]),
        *hooks["wrap_tool_call"],
        *reversed(hooks["after_agent"]),
    ]
    return beside_plan([impl.label for impl in order], run)


class _Module(types.ModuleType):
    """This module, callable as :func:`explain`: ``import funcware.explain`` makes the
    module the package's ``explain`` attribute, and ``funcware.explain(agent)`` must
    still explain."""

    def __call__(self, target: Any, **options: Any) -> Explanation:
        return explain(target, **options)


sys.modules[__name__].__class__ = _Module
