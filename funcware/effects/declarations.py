"""Declared effects and ordering constraints: what a middleware touches and where it sits.

A middleware declares, through hook-decorator keywords or class attributes of the same
names, the effects it ``reads`` and ``writes`` (names from :data:`EFFECTS`, or
``"state.<key>"``) and where it must sit in the onion (the first middleware is the
outermost): ``outside=`` / ``inside=`` other middleware (names or classes) when both are
present, ``requires=`` (must be present), ``position="outermost"`` or ``"innermost"``.
:func:`declarations` reads them back, from the table of LangChain's built-ins for those.

Besides ``state.<key>``, ``request.<field>``, ``tool.args``, ``handler.retry``,
``handler.skip`` and ``interrupt``, wraps say what they do to the answer: written,
``model.answer.rewrite`` / ``tool.answer.rewrite`` (changes an answer its handler
returned) apart from ``model.error.recover`` / ``tool.error.recover`` (turns an error its
handler raised into an answer); ``model.result`` / ``tool.result`` written mean both (the
coarse names), read they mean reading the answer. Node hooks say
what they do to ``state["messages"]`` — writes: ``messages.append`` (new messages that are
not tool answers), ``messages.rewrite`` (same-id replacement or removal),
``messages.answer`` (a ``ToolMessage`` answering a pending tool call instead of the tool),
and of rewrites, ``messages.rewrite.text`` (changes what messages say, never adds or
changes a tool call) apart from ``messages.rewrite.calls`` (adds or changes tool calls);
reads: ``messages.latest`` (the model's latest answer, found robustly), ``messages.tail``
(by position, ``messages[-1]``: fragile), ``messages.history`` (all of it); wraps may
declare them too (``request.state``, a ``Command``'s messages). Hooks that must
see every call read ``model.calls`` (node hooks, model wraps) or ``tool.calls`` (node
hooks, tool wraps); a wrap acting on a failed call reads ``model.error`` / ``tool.error``.
These are
read-only or write-only as listed; they let the order check see hazards between hooks that
all touch ``state.messages`` (which stays out of plain conflicts).

Effects may be declared per hook: ``writes={"wrap_model_call": [...], "after_model": [...]}``
(a class attribute; a decorator's keywords are already its one hook's). A list applies to
every hook of the middleware that can have the effect.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from funcware.hooks.middleware import origin

__all__ = [
    "ATTRS",
    "COARSE",
    "EFFECTS",
    "READ_ONLY",
    "REQUEST_FIELDS",
    "WRITE_ONLY",
    "Declaration",
    "Position",
    "Ref",
    "applies",
    "check_applies",
    "check_effect",
    "declarations",
    "finer",
    "parse",
    "ref_label",
    "refers_to",
]

Position = Literal["outermost", "innermost"]
Ref = str | type
"""A reference to another middleware: its name, its class name, or its class."""

REQUEST_FIELDS = (
    "model",
    "messages",
    "system_message",
    "tools",
    "tool_choice",
    "response_format",
    "model_settings",
)
EFFECTS: tuple[str, ...] = (
    *(f"request.{field}" for field in REQUEST_FIELDS),
    "tool.args",
    "tool.result",
    "tool.answer.rewrite",
    "tool.error.recover",
    "tool.error",
    "model.result",
    "model.answer.rewrite",
    "model.error.recover",
    "handler.retry",
    "handler.skip",
    "interrupt",
    "messages.append",
    "messages.rewrite",
    "messages.rewrite.text",
    "messages.rewrite.calls",
    "messages.answer",
    "messages.latest",
    "messages.tail",
    "messages.history",
    "model.calls",
    "tool.calls",
    "model.error",
)
"""Every effect name but ``"state.<key>"`` (any state key)."""

READ_ONLY = frozenset(
    {
        "messages.latest",
        "messages.tail",
        "messages.history",
        "model.calls",
        "tool.calls",
        "model.error",
        "tool.error",
    }
)
"""Effects that only make sense in ``reads=``."""
WRITE_ONLY = frozenset(
    {
        "messages.append",
        "messages.rewrite",
        "messages.rewrite.text",
        "messages.rewrite.calls",
        "messages.answer",
        "model.answer.rewrite",
        "model.error.recover",
        "tool.answer.rewrite",
        "tool.error.recover",
    }
)
"""Effects that only make sense in ``writes=``."""

COARSE: dict[str, tuple[str, str]] = {
    "model.result": ("model.answer.rewrite", "model.error.recover"),
    "tool.result": ("tool.answer.rewrite", "tool.error.recover"),
    "messages.rewrite": ("messages.rewrite.text", "messages.rewrite.calls"),
}
"""A coarse written effect and the finer ones it stands for (it may do either)."""


def finer(writes: Iterable[str]) -> frozenset[str]:
    """``writes`` with every coarse name's finer names added."""
    found = set(writes)
    for name in list(found):
        found.update(COARSE.get(name, ()))
    return frozenset(found)


ATTRS = ("reads", "writes", "outside", "inside", "requires", "position")
"""The declaration keywords, and the class attributes of the same names."""


def check_effect(name: object, source: str, key: str = "writes") -> str:
    """``name`` if it is an effect name; else a ``ValueError`` naming the closest valid one."""
    if isinstance(name, str):
        wrong = READ_ONLY if key == "writes" else WRITE_ONLY if key == "reads" else ()
        if name in wrong:
            other = "reads" if key == "writes" else "writes"
            raise ValueError(
                f"{source}: {name!r} in {key}= is an effect a hook {other[:-1]}s, not one it "
                f"{key[:-1]}s; put it in {other}=."
            )
        if name in EFFECTS:
            return name
        if name.startswith("state.") and len(name) > len("state."):
            return name
    text = name if isinstance(name, str) else repr(name)
    close = difflib.get_close_matches(text, [*EFFECTS, "state.<key>"], n=1, cutoff=0.4)
    if isinstance(name, str) and name.startswith("request."):
        close = difflib.get_close_matches(text, EFFECTS[: len(REQUEST_FIELDS)], n=1, cutoff=0)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ValueError(
        f"{source}: {text!r} in {key}= is not an effect name.{hint} Effect names are "
        f"'state.<key>', {', '.join(repr(e) for e in EFFECTS)}."
    )


@dataclass(frozen=True)
class Declaration:
    """What one middleware declared: its effects and its ordering constraints."""

    reads: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()
    outside: tuple[Ref, ...] = ()
    inside: tuple[Ref, ...] = ()
    requires: tuple[Ref, ...] = ()
    position: Position | None = None
    why: str = ""
    """Why the constraints hold (the LangChain table says; a user's declaration is its own)."""
    hook_reads: tuple[tuple[str, frozenset[str]], ...] | None = None
    """Per hook, what it reads, when ``reads=`` was given per hook (else ``None``)."""
    hook_writes: tuple[tuple[str, frozenset[str]], ...] | None = None
    """Per hook, what it writes, when ``writes=`` was given per hook (else ``None``)."""

    def reads_in(self, hook: str) -> frozenset[str]:
        """What the middleware's ``hook`` reads."""
        return _in(self.reads, self.hook_reads, hook)

    def writes_in(self, hook: str) -> frozenset[str]:
        """What the middleware's ``hook`` writes, coarse names with their finer ones."""
        return finer(self.declared_writes(hook))

    def declared_writes(self, hook: str) -> frozenset[str]:
        """What the middleware's ``hook`` writes, as declared (coarse names as they are)."""
        return _in(self.writes, self.hook_writes, hook)

    def describe(self) -> list[str]:
        """The declaration as ``key=value`` parts, empty ones left out."""
        parts = [
            f"{key}=[{', '.join(sorted(values))}]"
            for key, values in (("reads", self.reads), ("writes", self.writes))
            if values
        ]
        parts += [
            f"{key}=[{', '.join(ref_label(r) for r in refs)}]"
            for key, refs in (
                ("outside", self.outside),
                ("inside", self.inside),
                ("requires", self.requires),
            )
            if refs
        ]
        if self.position is not None:
            parts.append(f"position={self.position}")
        return parts


def _in(
    every: frozenset[str], per_hook: tuple[tuple[str, frozenset[str]], ...] | None, hook: str
) -> frozenset[str]:
    if per_hook is not None:
        return next((effects for name, effects in per_hook if name == hook), frozenset())
    return frozenset(e for e in every if applies(e, hook))


def ref_label(ref: Ref) -> str:
    """How a reference is shown: the name, or the class's name."""
    return ref if isinstance(ref, str) else ref.__qualname__


def refers_to(ref: Ref, middleware: Any) -> bool:
    """Whether ``ref`` names ``middleware`` (by name, class name, or class)."""
    if isinstance(ref, str):
        return ref in (getattr(middleware, "name", None), type(middleware).__name__)
    return isinstance(middleware, ref)


def _refs(value: object, key: str, source: str) -> tuple[Ref, ...]:
    items = [value] if isinstance(value, (str, type)) else list(_iterable(value, key, source))
    for item in items:
        if not (isinstance(item, str) and item) and not isinstance(item, type):
            raise TypeError(
                f"{source}: {key}= takes middleware names or classes, got {item!r} "
                f"({type(item).__name__}); write {key}=['OtherMiddleware']."
            )
    return tuple(items)


def _iterable(value: object, key: str, source: str) -> Iterable[Any]:
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes, dict)):
        return value
    raise TypeError(
        f"{source}: {key}= takes a list, got {value!r} ({type(value).__name__}); write {key}=[...]."
    )


def _effects(value: object, key: str, source: str) -> frozenset[str]:
    items = [value] if isinstance(value, str) else _iterable(value, key, source)
    return frozenset(check_effect(item, source, key) for item in items)


def _per_hook(
    value: object, key: str, source: str
) -> tuple[frozenset[str], tuple[tuple[str, frozenset[str]], ...] | None]:
    """The effects in ``value`` (a list, or a dict hook -> list), and per hook if a dict."""
    if not isinstance(value, dict):
        return _effects(value, key, source), None
    per: list[tuple[str, frozenset[str]]] = []
    for hook, items in value.items():
        if hook not in _APPLIES:
            close = difflib.get_close_matches(str(hook), list(_APPLIES), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"{source}: {key}= per hook takes hook names as keys, got {hook!r}.{hint} "
                f"Hooks are {', '.join(_APPLIES)}."
            )
        effects = _effects(items, key, f"{source} ({key}[{hook!r}])")
        check_applies(
            Declaration(**{key: effects}),  # type: ignore[arg-type]
            hook,
            f"{source} ({key}[{hook!r}])",
        )
        per.append((hook, effects))
    return frozenset().union(*(effects for _, effects in per)), tuple(per)


def parse(
    source: str,
    *,
    reads: object = None,
    writes: object = None,
    outside: object = None,
    inside: object = None,
    requires: object = None,
    position: object = None,
    why: str = "",
) -> Declaration | None:
    """Check the six declaration keywords; ``None`` if none was given (undeclared).

    ``reads=`` and ``writes=`` take a list of effect names, or a dict from hook name to
    such a list (what each hook does)."""
    given = (reads, writes, outside, inside, requires, position)
    if all(value is None for value in given):
        return None
    if position is not None and position not in get_args(Position):
        raise ValueError(
            f"{source}: position={position!r} is not a position; use 'outermost' or "
            "'innermost' (or leave it out)."
        )
    all_reads, hook_reads = _per_hook(reads or (), "reads", source)
    all_writes, hook_writes = _per_hook(writes or (), "writes", source)
    return Declaration(
        reads=all_reads,
        writes=all_writes,
        hook_reads=hook_reads,
        hook_writes=hook_writes,
        outside=_refs(outside or (), "outside", source),
        inside=_refs(inside or (), "inside", source),
        requires=_refs(requires or (), "requires", source),
        position=position,  # type: ignore[arg-type]
        why=why,
    )


_BOTH = ("state.", "interrupt", "messages.")
_NODE = (*_BOTH, "model.calls", "tool.calls")
_APPLIES: dict[str, tuple[str, ...]] = {
    "before_agent": _NODE,
    "before_model": _NODE,
    "after_model": _NODE,
    "after_agent": _NODE,
    "wrap_model_call": (
        *_BOTH,
        "request.",
        "model.result",
        "model.answer.",
        "model.calls",
        "model.error",
        "handler.",
    ),
    "wrap_tool_call": (*_BOTH, "tool.", "handler."),
}
"""Per hook kind, the effects (or ``prefix.``) it may have."""


def applies(effect: str, hook: str) -> bool:
    """Whether a ``hook`` of that kind can have ``effect``."""
    return effect.startswith(_APPLIES[hook])


def check_applies(declaration: Declaration, hook: str, source: str) -> None:
    """A ``ValueError`` for an effect a ``hook`` cannot have (``request.model`` on a node hook)."""
    kinds = _APPLIES[hook]
    for key in ("reads", "writes"):
        wrong = sorted(e for e in getattr(declaration, key) if not e.startswith(kinds))
        if wrong:
            raise ValueError(
                f"{source}: {'an' if hook[0] in 'aeiou' else 'a'} {hook} hook cannot have "
                f"{key}={wrong}; its effects are "
                f"{', '.join(k + '*' if k.endswith('.') else k for k in kinds)}."
            )


_CACHE_ATTR = "__funcware_declaration__"


def declarations(middleware: Any) -> Declaration | None:
    """What ``middleware`` declared (class attributes, or LangChain's table), or ``None``.

    A composite provides ``__funcware_declaration__``; the class attributes ``reads``,
    ``writes``, ``outside``, ``inside``, ``requires`` and ``position`` are checked here.
    """
    provided = getattr(middleware, _CACHE_ATTR, None)
    if isinstance(provided, Declaration):
        return provided
    from funcware.compose.chain import ComposedMiddleware

    if isinstance(middleware, ComposedMiddleware):  # the union of its members' declarations
        from funcware.effects.ordering import united_declaration

        return united_declaration(middleware.members)
    values: dict[str, Any] = {key: getattr(middleware, key, None) for key in ATTRS}
    try:
        found = parse("", **values)
    except (TypeError, ValueError):  # say again where, now that it is worth reading source
        name = getattr(middleware, "name", type(middleware).__name__)
        parse(f"middleware {name!r} ({origin(middleware)})", **values)
        raise
    if found is not None:
        return found
    from funcware.effects.builtins import builtin_declaration

    return builtin_declaration(middleware)
