"""Hazards between hooks that all touch the messages or must see every call.

Found from the declared effects (``funcware.effects.declarations``) and the order hooks run in:
``before_*`` hooks run m1..mn, ``after_*`` hooks mn..m1, wraps nest m1 outermost. A
hazard is a pair where one hook hides from another what that one needs:

- a hook that appends or answers (``messages.append``/``messages.answer``) runs, in the
  same phase, before one that reads by position (``messages.tail``): the reader looks at
  the new message instead of the one it expects (a model wrap's messages land after the
  model's answer, before every ``after_model`` hook: in any order);
- a hook that changes tool calls (``messages.rewrite.calls``) runs, in the same phase,
  after a guard that read the model's tool calls and interrupts for a decision, and asks
  no human itself: what runs is not what was approved;
- in ``after_model``, such a guard runs before a hook that refuses tool calls (answers them
  itself, ``messages.answer``, asking no human; or, from the table of LangChain's
  built-ins, ``ToolCallLimitMiddleware`` in every configuration) and the tools they act on
  may overlap: the reviewer is asked about a call that then never runs;
- a wrap that turns errors into answers (``model.error.recover``, ``tool.error.recover``)
  sits inside one that acts on failed calls (``model.error``, ``tool.error``): the outer
  one gets an answer instead of the failure and never acts (a wrap that only rewrites
  answers, ``*.answer.rewrite``, hides no error);
- a model wrap that sets a request field without reading it (it replaces what is there,
  on every call: it is no fallback, which reads ``model.error``) sits inside one that
  writes that field: the outer one's choice never reaches the model (for a fallback
  outside, its ``request.model``: the fallback model is never called);
- a node hook that may jump to ``end`` runs before another middleware's hook that must see
  every model call (``model.calls``, counted after the model) or tool execution
  (``tool.calls``, counted before the model): the jump skips it.

Readers of ``messages.latest`` are robust to appends and answers, so stacks of them (and
LangChain's built-ins, which read that way) are not flagged. A pair that a declared
constraint orders (``outside=``/``inside=``, directly or through others) is the order the
user means and is not flagged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from funcware.effects.builtins import asked_tools, builtin_jumps, refused_tools
from funcware.effects.declarations import REQUEST_FIELDS, Declaration
from funcware.hooks.middleware import HookName, hook_impls, origin

__all__ = ["Hazard", "find_hazards"]

HazardKind = Literal[
    "hidden message",
    "changed after approval",
    "refused after approval",
    "hidden error",
    "skipped count",
    "overridden",
]

_ADDS = ("messages.append", "messages.answer")
_DECIDES = ("messages.latest", "messages.tail")
_SEEN = {
    "before_agent": "the user's input",
    "before_model": "the latest message (the user's turn or the tool results)",
    "after_model": "the model's answer",
    "after_agent": "the final answer",
}


@dataclass(frozen=True)
class Hazard:
    """One hook hiding from another what it needs, in the order they run."""

    first: str
    """The middleware whose hook runs first (outer, for wraps)."""
    second: str
    kind: HazardKind
    hooks: tuple[str, str]
    """The two hooks' graph labels (``"name.after_model"``), ``first``'s then ``second``'s."""
    sentence: str
    """The hazard in one sentence."""
    message: str
    """Both middleware with their file:line, the sentence, and the fix."""

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class _Member:
    middleware: Any
    place: int
    decl: Declaration
    hooks: frozenset[HookName]
    jumps_end: frozenset[HookName]

    @property
    def name(self) -> str:
        return str(self.middleware.name)

    def at(self) -> str:
        return f"{self.name!r} ({origin(self.middleware)})"

    def writes(self, hook: HookName, *effects: str) -> list[str]:
        found = self.decl.writes_in(hook) if hook in self.hooks else frozenset()
        return [e for e in effects if e in found]

    def reads(self, hook: HookName, *effects: str) -> list[str]:
        found = self.decl.reads_in(hook) if hook in self.hooks else frozenset()
        return [e for e in effects if e in found]

    def refuses(self) -> tuple[str, frozenset[str] | None] | None:
        """The tool calls this one's ``after_model`` refuses, in words, and their tools
        (``None``: any tool); ``None`` when it refuses none."""
        if "after_model" not in self.hooks:
            return None
        known = refused_tools(self.middleware)
        if known is not None:
            return known
        if self.writes("after_model", "messages.answer") and not self.writes(
            "after_model", "interrupt"
        ):
            return "calls it answers itself (messages.answer)", None
        return None

    def runs_before(self, other: _Member, hook: HookName) -> bool:
        """Whether this one's ``hook`` runs before ``other``'s (``after_*``: reversed)."""
        return (self.place < other.place) == hook.startswith("before")


def _member(middleware: Any, place: int, decl: Declaration) -> _Member:
    impls = hook_impls(middleware)
    jumps = builtin_jumps(middleware)
    return _Member(
        middleware,
        place,
        decl,
        frozenset(impls),
        frozenset(h for h, impl in impls.items() if jumps and "end" in impl.can_jump_to),
    )


def placed(member: Any, where: str, other: str) -> str:
    """The two ways to declare ``member`` ``where`` (``outside``/``inside``) ``other``: on
    the middleware, or with ``funcware.effects.declare`` for one the user did not write."""
    name = str(member.name)
    klass = type(member).__name__  # LangChain names a limit on one tool "Class[tool]"
    made = name.partition("[")[0] == klass and not hasattr(member, "__wrapped__")
    shown = f"{klass}(...)" if made else name  # an instance of a class, or a decorated function
    return (
        f"declare {where}=[{other!r}] on {name!r}; for a middleware you did not write, list "
        f"funcware.effects.declare({shown}, {where}=[{other!r}]) in its place"
    )


def _first_in(hook: HookName, runner: _Member, other: _Member) -> str:
    """How to make ``runner``'s ``hook`` run before ``other``'s: the list order, a constraint."""
    if hook.startswith("before"):
        return (
            f"list {runner.name!r} before {other.name!r} so its {hook} runs first (or "
            f"{placed(runner.middleware, 'outside', other.name)})"
        )
    return (
        f"list {runner.name!r} after {other.name!r} so its {hook} runs first (or "
        f"{placed(runner.middleware, 'inside', other.name)})"
    )


def _outside_of(outer: _Member, inner: _Member) -> str:
    """How to put ``inner`` outside ``outer`` (wraps)."""
    return (
        f"list {inner.name!r} before {outer.name!r} (or "
        f"{placed(inner.middleware, 'outside', outer.name)})"
    )


def _hazard(
    kind: HazardKind,
    first: _Member,
    second: _Member,
    hooks: tuple[str, str],
    sentence: str,
    fix: str,
) -> Hazard:
    message = f"middleware {first.at()} and {second.at()}: {sentence}. Fix: {fix}"
    return Hazard(first.name, second.name, kind, hooks, sentence, message)


def _pair(a: _Member, b: _Member) -> list[Hazard]:
    """The hazards where ``a``'s hook runs first and ``b``'s after it."""
    found: list[Hazard] = []
    for hook in ("before_agent", "before_model", "after_model", "after_agent"):
        if not a.runs_before(b, hook):
            continue
        labels = (f"{a.name}.{hook}", f"{b.name}.{hook}")
        adds, tail = a.writes(hook, *_ADDS), b.reads(hook, "messages.tail")
        if adds and tail:
            both = b.writes(hook, *_ADDS) and a.reads(hook, "messages.tail")
            fix = (
                f"have both {b.name!r} and {a.name!r} find what they look for robustly "
                "(messages.latest): in either order one hides it from the other"
                if both
                else f"have {b.name!r} find what it looks for robustly (messages.latest), "
                f"or {_first_in(hook, b, a)}"
            )
            found.append(
                _hazard(
                    "hidden message",
                    a,
                    b,
                    labels,
                    f"in {hook}, {a.name!r} runs first and adds messages ({', '.join(adds)}), "
                    f"so {b.name!r}, which reads messages by position (messages.tail), no longer "
                    f"sees {_SEEN[hook]}",
                    fix,
                )
            )
        decides = a.reads(hook, *_DECIDES) if a.writes(hook, "interrupt") else []
        changes = (
            b.writes(hook, "messages.rewrite.calls") if not b.writes(hook, "interrupt") else []
        )
        if decides and changes:
            found.append(
                _hazard(
                    "changed after approval",
                    a,
                    b,
                    labels,
                    f"in {hook}, {a.name!r} decides on the model's tool calls "
                    f"({', '.join(decides)}, interrupt) before {b.name!r} changes tool calls "
                    f"(messages.rewrite.calls) without asking anyone, so the call that runs "
                    f"can differ from the one {a.name!r} approved",
                    _first_in(hook, b, a),
                )
            )
    found += _refused_after_approval(a, b)
    wrapped = a.writes("wrap_model_call", *_ADDS)
    if wrapped and b.reads("after_model", "messages.tail"):
        found.append(
            _hazard(
                "hidden message",
                a,
                b,
                (f"{a.name}.wrap_model_call", f"{b.name}.after_model"),
                f"{a.name!r}'s wrap_model_call adds messages ({', '.join(wrapped)}) that land "
                f"right after the model's answer, so {b.name!r}, which reads messages by "
                f"position (messages.tail) in after_model, no longer sees that answer",
                f"have {b.name!r} find the model's answer robustly (messages.latest); no "
                "order helps",
            )
        )
    jumps = [h for h in a.jumps_end if a.runs_before(b, h)]
    if "after_model" in jumps and b.reads("after_model", "model.calls"):
        found.append(
            _hazard(
                "skipped count",
                a,
                b,
                (f"{a.name}.after_model", f"{b.name}.after_model"),
                f"{a.name!r} may jump to 'end' in after_model before {b.name!r}'s after_model "
                f"runs, which must see every model call (model.calls): on the jump it is "
                f"skipped and the call just made goes uncounted",
                f"{_first_in('after_model', b, a)}, or count in a wrap_model_call",
            )
        )
    if "before_model" in jumps and b.reads("before_model", "tool.calls"):
        found.append(
            _hazard(
                "skipped count",
                a,
                b,
                (f"{a.name}.before_model", f"{b.name}.before_model"),
                f"{a.name!r} may jump to 'end' in before_model before {b.name!r}'s "
                f"before_model runs, which must see every tool execution (tool.calls): on "
                f"the jump it is skipped and the last turn's tool calls go uncounted",
                f"{_first_in('before_model', b, a)}, or count in a wrap_tool_call",
            )
        )
    if a.place < b.place:
        found += _nested(a, b)
    return found


def _refused_after_approval(a: _Member, b: _Member) -> list[Hazard]:
    """``a``'s after_model asks a reviewer about tool calls that ``b``'s, after it, refuses."""
    hook: HookName = "after_model"
    decides = a.reads(hook, *_DECIDES) if a.writes(hook, "interrupt") else []
    refusal = b.refuses() if decides and a.runs_before(b, hook) else None
    if refusal is None:
        return []
    which, refused = refusal
    asked = asked_tools(a.middleware)
    if asked is not None and not (asked if refused is None else asked & refused):
        return []  # the reviewer is never asked about a tool that b refuses
    return [
        _hazard(
            "refused after approval",
            a,
            b,
            (f"{a.name}.{hook}", f"{b.name}.{hook}"),
            f"in {hook}, {a.name!r} asks a reviewer about the model's tool calls "
            f"({', '.join(decides)}, interrupt) before {b.name!r} refuses {which}, so the "
            f"reviewer is asked about tool calls that {b.name!r} may then refuse, and an "
            "approved call may never run",
            _first_in(hook, b, a),
        )
    ]


def _nested(a: _Member, b: _Member) -> list[Hazard]:
    """The hazards of ``b``'s wraps sitting inside ``a``'s."""
    found: list[Hazard] = []
    wraps: tuple[tuple[HookName, str], ...] = (
        ("wrap_model_call", "model"),
        ("wrap_tool_call", "tool"),
    )
    for hook, kind in wraps:
        if a.reads(hook, f"{kind}.error") and b.writes(hook, f"{kind}.error.recover"):
            found.append(
                _hazard(
                    "hidden error",
                    a,
                    b,
                    (f"{a.name}.{hook}", f"{b.name}.{hook}"),
                    f"{b.name!r} sits inside {a.name!r} and turns a failed {kind} call into an "
                    f"answer ({kind}.error.recover), so {a.name!r}, which acts on failed "
                    f"{kind} calls ({kind}.error), gets that answer and is never asked",
                    _outside_of(a, b),
                )
            )
    retries = bool(a.reads("wrap_model_call", "model.error"))
    sets = [
        e
        for e in a.writes("wrap_model_call", *(f"request.{f}" for f in REQUEST_FIELDS))
        if (e == "request.model" or not retries)
        and b.writes("wrap_model_call", e)
        and not b.reads("wrap_model_call", e, "model.error")
    ]
    if sets:
        what = (
            f"so the fallback {sets[0]} {a.name!r} retries with is replaced and never reaches "
            "the model"
            if retries
            else f"so what {a.name!r} put there never reaches the model"
        )
        found.append(
            _hazard(
                "overridden",
                a,
                b,
                (f"{a.name}.wrap_model_call", f"{b.name}.wrap_model_call"),
                f"{b.name!r} sits inside {a.name!r} and sets {', '.join(sets)} on every call "
                f"without reading it, {what}",
                _outside_of(a, b),
            )
        )
    return found


def find_hazards(
    members: Sequence[Any],
    decls: Sequence[Declaration | None],
    order: Sequence[int],
    ordered: Sequence[set[int]],
) -> list[Hazard]:
    """The hazards of ``members`` run in ``order`` (indexes), each once.

    ``ordered[i]``: the members a declared constraint places after member ``i``; such
    pairs are left out. Only declared members take part.
    """
    found: list[Hazard] = []
    placed = [
        (i, _member(members[i], place, decl))
        for place, i in enumerate(order)
        if (decl := decls[i]) is not None
    ]
    for i, a in placed:
        for j, b in placed:
            if i != j and j not in ordered[i] and i not in ordered[j]:
                found.extend(_pair(a, b))
    return found
