"""Checking, and on request sorting, the order of a middleware list (first = outermost).

Each middleware's declaration (see ``funcware.effects.declarations``) gives ordering edges
"this one before that one": ``outside=`` and ``inside=`` between two present middleware,
``position="outermost"``/``"innermost"`` against every other. :func:`arrange` checks the
given order against them (``order="check"``) or sorts it stably (``order="auto"``: a
middleware moves only to go outside one that must sit inside it), and lists the
conflicts: two declared middleware writing one effect, or one writing what the other
reads, with no constraint (direct or through others) deciding which goes first; and the
hazards (see ``hazards``): the orders in which one hook really breaks what another
guarantees. Only hazards warn (or, with ``effects="strict"``, refuse the list): a conflict
says that the order is not declared, not that it is wrong, so it is only listed (in
``explain()``), where a warning would teach users to ignore the true ones.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import funcware.hooks
from funcware.compose.graph.arguments import check_choice
from funcware.effects.declarations import (
    READ_ONLY,
    WRITE_ONLY,
    Declaration,
    declarations,
    ref_label,
    refers_to,
)
from funcware.effects.hazards import Hazard, find_hazards, placed
from funcware.errors import MiddlewareOrderError, MiddlewareOrderWarning
from funcware.hooks.middleware import origin

__all__ = [
    "Conflict",
    "Constraint",
    "MiddlewareOrderError",
    "MiddlewareOrderWarning",
    "Order",
    "OrderReport",
    "arrange",
    "check_choice",
    "enforce",
    "stable_order",
    "united_declaration",
]

Order = Literal["check", "auto"]
EffectsMode = Literal["warn", "strict"]

_BEHAVIOURS = frozenset({"handler.retry", "handler.skip", "interrupt"})
"""Effects on the call itself, not on shared data: they never conflict."""

_MERGED = frozenset({"state.messages"})
"""State every hook reads and whose writes a reducer merges (appends, or replaces by id)
rather than overwrites: nearly every middleware touches it, so on its own it is no sign of
an ordering problem, and warning about it would flag every stack (LangChain's built-ins
included). Declare an order with ``outside=``/``inside=`` where it does matter."""

_FINER = READ_ONLY | WRITE_ONLY
"""The message and call effects: hooks share them by nature (two hooks answering tool
calls is no problem); :mod:`.hazards` checks the orders in which they are one."""


@dataclass(frozen=True)
class Constraint:
    """An edge: ``outer`` must sit outside ``inner``; ``owner`` declared it as ``text``."""

    outer: int
    inner: int
    owner: int
    text: str
    why: str = ""


@dataclass(frozen=True)
class Conflict:
    """Two declared middleware touching one effect, with no constraint ordering them."""

    outer: str
    inner: str
    kind: Literal["write/write", "write/read"]
    effects: tuple[str, ...]
    message: str

    def __str__(self) -> str:
        return self.message


class CycleError(Exception):
    """The ordering edges form a cycle; ``cycle`` lists its members, outer to inner."""

    def __init__(self, cycle: list[int]) -> None:
        super().__init__(cycle)
        self.cycle = cycle


def stable_order(count: int, edges: Sequence[tuple[int, int]]) -> tuple[list[int], list[str]]:
    """An order of ``range(count)`` with every ``(a, b)`` edge's ``a`` before ``b``.

    Stable: positions are taken in the given order, and an item is placed early only
    when an item before it must come after it (it is pulled in just before that one).
    Returns the order and, per pulled item, ``"a<b"`` (``a`` was pulled in before ``b``).
    Raises :class:`CycleError` naming a cycle's members when there is no such order.
    """
    preds: list[list[int]] = [[] for _ in range(count)]
    for a, b in edges:
        if a not in preds[b]:
            preds[b].append(a)
    for p in preds:
        p.sort()
    state = [0] * count  # 0 unvisited, 1 on the path, 2 placed
    out: list[int] = []
    pulled: list[str] = []

    for start in range(count):
        if state[start]:
            continue
        # iterative depth-first walk over predecessors
        path = [start]
        cursor = [0]
        state[start] = 1
        while path:
            node = path[-1]
            if cursor[-1] < len(preds[node]):
                pred = preds[node][cursor[-1]]
                cursor[-1] += 1
                if state[pred] == 1:
                    cycle = path[path.index(pred) :]
                    raise CycleError(list(reversed(cycle))[-1:] + list(reversed(cycle))[:-1])
                if state[pred] == 0:
                    if pred > start:
                        pulled.append(f"{pred}<{node}")
                    state[pred] = 1
                    path.append(pred)
                    cursor.append(0)
                continue
            path.pop()
            cursor.pop()
            state[node] = 2
            out.append(node)
    return out, pulled


def _names(members: Sequence[Any], indexes: Sequence[int]) -> str:
    return ", ".join(members[i].name for i in indexes)


def _at(member: Any) -> str:
    return f"{member.name!r} ({origin(member)})"


def _constraints(members: Sequence[Any], decls: Sequence[Declaration | None]) -> list[Constraint]:
    found: list[Constraint] = []
    for i, decl in enumerate(decls):
        if decl is None:
            continue
        for key, refs in (("outside", decl.outside), ("inside", decl.inside)):
            for ref in refs:
                for j, other in enumerate(members):
                    if j == i or not refers_to(ref, other):
                        continue
                    text = f"{key}=[{ref_label(ref)!r}]"
                    pair = (i, j) if key == "outside" else (j, i)
                    found.append(Constraint(pair[0], pair[1], i, text, decl.why))
        if decl.position is not None:
            for j, other_decl in enumerate(decls):
                if j == i or (other_decl is not None and other_decl.position == decl.position):
                    continue
                pair = (i, j) if decl.position == "outermost" else (j, i)
                found.append(Constraint(*pair, i, f"position={decl.position!r}", decl.why))
    return found


def _violation(members: Sequence[Any], c: Constraint) -> str:
    owner = members[c.owner]
    other = members[c.inner if c.owner == c.outer else c.outer]
    where = "outside" if c.owner == c.outer else "inside"
    text = (
        f"middleware {_at(owner)} must sit {where} {_at(other)} (it declares {c.text}), "
        f"but it comes {'after' if where == 'outside' else 'before'} it in the list"
    )
    return text + (f". Why: {c.why}" if c.why else "")


def _cycle_text(members: Sequence[Any], cycle: list[int], edges: Sequence[Constraint]) -> str:
    steps = []
    for a, b in zip(cycle, [*cycle[1:], cycle[0]], strict=True):
        c = next(c for c in edges if (c.outer, c.inner) == (a, b))
        steps.append(
            f"{members[a].name!r} outside {members[b].name!r} "
            f"({members[c.owner].name!r} declares {c.text})"
        )
    names = " -> ".join(members[i].name for i in [*cycle, cycle[0]])
    return (
        f"the ordering constraints form a cycle, so no order satisfies them: {names} "
        f"({'; '.join(steps)}). Drop or change one of these constraints"
    )


def _requires(members: Sequence[Any], decls: Sequence[Declaration | None]) -> list[str]:
    problems = []
    for i, decl in enumerate(decls):
        for ref in decl.requires if decl is not None else ():
            if not any(refers_to(ref, m) for j, m in enumerate(members) if j != i):
                problems.append(
                    f"middleware {_at(members[i])} requires {ref_label(ref)!r} "
                    f"(it declares requires=[{ref_label(ref)!r}]), but no middleware of "
                    "that name or class is in the list; add it"
                )
    return problems


def _reachable(count: int, edges: Sequence[tuple[int, int]]) -> list[set[int]]:
    succ: list[set[int]] = [set() for _ in range(count)]
    for a, b in edges:
        succ[a].add(b)
    reach: list[set[int]] = []
    for start in range(count):
        seen: set[int] = set()
        stack = [start]
        while stack:
            for nxt in succ[stack.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        reach.append(seen)
    return reach


def _conflicts(
    members: Sequence[Any],
    decls: Sequence[Declaration | None],
    order: Sequence[int],
    edges: Sequence[tuple[int, int]],
) -> list[Conflict]:
    reach = _reachable(len(members), edges)
    declared = [i for i in order if decls[i] is not None]  # only they can conflict
    found: list[Conflict] = []
    for x, i in enumerate(declared):
        for j in declared[x + 1 :]:
            a, b = decls[i], decls[j]
            if a is None or b is None or j in reach[i] or i in reach[j]:
                continue
            skip = _BEHAVIOURS | _MERGED | _FINER
            both = sorted((a.writes & b.writes) - skip)
            read = sorted(((a.writes & b.reads) | (a.reads & b.writes)) - skip)
            if not both and not read:
                continue
            outer, inner = members[i], members[j]
            if both:
                kind: Literal["write/write", "write/read"] = "write/write"
                what = f"both write {', '.join(both)}"
            else:
                kind = "write/read"
                writer, reader = (outer, inner) if a.writes & b.reads else (inner, outer)
                what = f"{writer.name!r} writes {', '.join(read)}, which {reader.name!r} reads"
            message = (
                f"middleware {_at(outer)} and {_at(inner)}: {what}, and no constraint says "
                f"which goes first (now {outer.name!r} sits outside {inner.name!r}). "
                f"Declare the order you mean: {placed(outer, 'outside', inner.name)}, "
                "or the other way round"
            )
            found.append(Conflict(outer.name, inner.name, kind, tuple(both or read), message))
    return found


@dataclass
class OrderReport:
    """The checked order: the middleware as they will run, and what the check found."""

    given: list[Any]
    order: list[Any]
    declarations: list[Declaration | None]
    """Per middleware of :attr:`order`, what it declared (``None``: undeclared)."""
    constraints: list[str] = field(default_factory=list)
    """Every constraint between present middleware, as text."""
    problems: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    hazards: list[Hazard] = field(default_factory=list)
    """Hooks that hide from another what it needs, in the order they run."""
    moved: list[str] = field(default_factory=list)
    """What ``order="auto"`` moved, and why."""
    reasons: dict[str, list[str]] = field(default_factory=dict)
    """Per middleware name, the constraints that place it."""

    @property
    def undeclared(self) -> list[str]:
        """Names of the middleware that declared nothing (never checked)."""
        return [m.name for m, d in zip(self.order, self.declarations, strict=True) if d is None]


def arrange(
    middleware: Sequence[Any], order: Order = "check", *, whole: bool = True
) -> OrderReport:
    """Check (or, with ``order="auto"``, sort) ``middleware``; nothing is raised here.

    ``whole``: the list is the whole stack, so ``requires=`` is checked (a ``compose()``
    is a part of one: its members' requirements go into its own declaration).
    """
    members = list(middleware)
    decls = [declarations(m) for m in members]
    if all(d is None for d in decls):  # nothing declared: nothing to order or to check
        return OrderReport(given=members, order=list(members), declarations=decls)
    cons = _constraints(members, decls)
    edges = [(c.outer, c.inner) for c in cons]
    problems = _requires(members, decls) if whole else []
    pulled: list[str] = []
    try:
        sorted_idx, pulled = stable_order(len(members), edges)
        solvable = True
    except CycleError as cycle:
        sorted_idx, solvable = list(range(len(members))), False
        problems.append(_cycle_text(members, cycle.cycle, cons))
    final = list(range(len(members)))
    moved: list[str] = []
    if order == "auto" and solvable:
        final = sorted_idx
        for item in pulled:
            a, b = (int(x) for x in item.split("<"))
            why = next(c for c in cons if (c.outer, c.inner) == (a, b))
            moved.append(
                f"{members[a].name!r} moved outside {members[b].name!r} "
                f"({members[why.owner].name!r} declares {why.text})"
            )
    elif solvable:
        bad = [c for c in cons if c.outer > c.inner]
        problems.extend(_violation(members, c) for c in bad)
        if bad:
            problems.append(
                f"an order that satisfies every constraint: [{_names(members, sorted_idx)}] "
                "(or pass order='auto' to have funcware sort the list so)"
            )
    reasons: dict[str, list[str]] = {}
    for c in cons:
        owner = members[c.owner].name
        for side, other in ((c.outer, c.inner), (c.inner, c.outer)):
            where = "outside" if side == c.outer else "inside"
            because = "it declares" if side == c.owner else f"{owner!r} declares"
            line = f"{where} {members[other].name!r} ({because} {c.text})"
            found = reasons.setdefault(members[side].name, [])
            if line not in found:
                found.append(line)
    return OrderReport(
        given=members,
        order=[members[i] for i in final],
        declarations=[decls[i] for i in final],
        constraints=[f"{members[c.owner].name}: {c.text}" for c in cons],
        problems=problems,
        conflicts=_conflicts(members, decls, final, edges),
        hazards=find_hazards(members, decls, final, _reachable(len(members), edges)),
        moved=moved,
        reasons=reasons,
    )


def united_declaration(members: Sequence[Any]) -> Declaration | None:
    """What a composite of ``members`` declares: the union of theirs.

    ``None`` (undeclared) unless every member declares: what an undeclared member does is
    unknown, so a union without it would hold it to the others' effects. Constraints
    between members are settled inside the composite; only references to middleware
    outside it are kept. A position is kept when every member that has one agrees on it.
    (Where a composite is flattened, as in ``create_agent``, each member is checked on its
    own either way.)
    """
    found = [declarations(m) for m in members]
    decls = [d for d in found if d is not None]
    if not decls or len(decls) < len(found):
        return None

    def outer_refs(refs: Sequence[Any]) -> tuple[Any, ...]:
        kept: list[Any] = []
        for ref in refs:
            if ref not in kept and not any(refers_to(ref, m) for m in members):
                kept.append(ref)
        return tuple(kept)

    positions = {d.position for d in decls if d.position is not None}
    return Declaration(
        reads=frozenset().union(*(d.reads for d in decls)),
        writes=frozenset().union(*(d.writes for d in decls)),
        outside=outer_refs([r for d in decls for r in d.outside]),
        inside=outer_refs([r for d in decls for r in d.inside]),
        requires=outer_refs([r for d in decls for r in d.requires]),
        position=positions.pop() if len(positions) == 1 else None,
        why="; ".join(d.why for d in decls if d.why),
    )


@functools.cache
def _own_folders() -> tuple[str, ...]:
    """funcware's folders, real paths: the package and the ``hooks``/``compose`` it links to."""
    compose = os.path.dirname(os.path.realpath(sys.modules["funcware.compose"].__file__ or ""))
    hooks = os.path.dirname(os.path.realpath(funcware.hooks.__file__))
    front = os.path.dirname(os.path.realpath(sys.modules["funcware"].__file__ or ""))
    return tuple(os.path.join(d, "") for d in (compose, hooks, front))


def _user_stacklevel() -> int:
    """The ``stacklevel`` pointing at the first caller outside funcware's own folders."""
    inside = _own_folders()
    level, frame = 1, sys._getframe(1)
    while frame is not None and os.path.realpath(frame.f_code.co_filename).startswith(inside):
        level += 1
        frame = frame.f_back  # type: ignore[assignment]
    return level


def enforce(
    report: OrderReport,
    effects: EffectsMode,
    caller: str,
    skip: frozenset[tuple[str, str] | str] = frozenset(),
) -> None:
    """Raise :class:`MiddlewareOrderError` for problems (and, strict, for hazards); warn
    :class:`MiddlewareOrderWarning` once per hazard otherwise (but not for the hazard
    messages in ``skip``, already warned about). Conflicts are only listed."""
    problems = list(report.problems)
    found = [h.message for h in report.hazards if h.message not in skip]
    if effects == "strict":
        every = [h.message for h in report.hazards]
        problems.extend(f"{message} (an error with effects='strict')" for message in every)
        found = []
    if problems:
        listing = "\n".join(f"  - {p}." for p in problems)
        raise MiddlewareOrderError(f"{caller} cannot use this middleware order:\n{listing}")
    for message in found:
        warnings.warn(message + ".", MiddlewareOrderWarning, stacklevel=_user_stacklevel())
