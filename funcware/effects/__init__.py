"""Declared effects and ordering constraints: ``reads=``, ``writes=``, ``outside=``,
``inside=``, ``requires=``, ``position=``, and ``create_agent(order=..., effects=...)``.

A feature on the core's seams (registered in ``funcware/plugins.py`` with its six
declaration options, and loaded by a build that uses one of them, ``order=`` or
``effects=``, or holds another library's middleware). It uses two seams:

- ``arrange``: the flattened list is checked against what its middleware declared (or
  sorted, ``order="auto"``); hazards between two middleware warn, or with
  ``effects="strict"`` refuse the list, and conflicts are only listed (see
  :mod:`funcware.effects.ordering` and :mod:`funcware.effects.hazards`). A list in
  which nothing declares anything, and no LangChain built-in with known effects is
  present, is left as it is without loading the rest of this package;
- ``transform``: with ``effects="strict"``, each declared layer is watched at run time
  and must do only what it declared (see :mod:`funcware.effects.strict`).

:func:`declare` places or declares a middleware the user did not write (a stand-in; see
:mod:`funcware.effects.standin`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar, get_args

from funcware.errors import MiddlewareOrderError, MiddlewareOrderWarning, UndeclaredEffectError
from funcware.hooks.options import Context, Position

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence

    from funcware.compose.seams import Build
    from funcware.hooks.middleware import AgentMiddleware, HookImpl

M = TypeVar("M")

__all__ = [
    "Effects",
    "MiddlewareOrderError",
    "MiddlewareOrderWarning",
    "UndeclaredEffectError",
    "declare",
]

ATTRS = ("reads", "writes", "outside", "inside", "requires", "position")


def _declares(member: object) -> bool:
    """Whether ``member`` declared anything, or is another library's middleware (whose
    effects may be known from the built-ins table)."""
    from funcware.hooks.middleware import AgentMiddleware

    if not isinstance(member, AgentMiddleware):
        return True
    return any(getattr(member, key, None) is not None for key in ATTRS)


def declare(
    middleware: M,
    *,
    reads: Collection[str] | Mapping[str, Collection[str]] | None = None,
    writes: Collection[str] | Mapping[str, Collection[str]] | None = None,
    outside: Sequence[str | type] | None = None,
    inside: Sequence[str | type] | None = None,
    requires: Sequence[str | type] | None = None,
    position: Position | None = None,
) -> M:
    """``middleware`` (one you did not write: LangChain's, a library's) declared or placed.

    Returns a stand-in to put in ``middleware=[...]`` instead: the same middleware (same
    class, hooks, name and attributes, shared), which declares the keywords given, over
    what the middleware declared itself (or funcware's table says, for LangChain's
    built-ins); the keywords left out keep their values. ``reads``/``writes`` take a list
    of effect names or a dict from hook name to such a list. For example
    ``declare(ModelRetryMiddleware(), outside=["ModelFallback"])``.
    """
    from funcware.effects.standin import declared

    keywords = {
        "reads": reads,
        "writes": writes,
        "outside": outside,
        "inside": inside,
        "requires": requires,
        "position": position,
    }
    return declared(middleware, keywords)


class Effects:
    """The plug-in: the order check at build, and strict mode as a hook transform."""

    name = "effects"

    def arrange(
        self, members: list[AgentMiddleware[Any, Any, Any]], build: Build
    ) -> list[AgentMiddleware[Any, Any, Any]]:
        """Check (or sort) ``members`` by what they declared; warn or raise as asked."""
        order = build.options.get("order", "check")
        effects = build.options.get("effects", "warn")
        if order == "check" and effects != "strict" and not any(map(_declares, members)):
            return members
        from funcware.effects.ordering import arrange, enforce

        report = arrange(members, order, whole=build.caller == "create_agent")
        build.data["effects"] = report
        if build.report:
            enforce(report, effects, build.caller)
        else:
            build.problems.extend(report.problems)
        return list(report.order)

    def transform(self, impl: HookImpl, build: Build) -> HookImpl:
        """With ``effects="strict"``, ``impl`` watched against what its middleware declared."""
        if build.options.get("effects") != "strict":
            return impl
        from funcware.effects.declarations import declarations
        from funcware.effects.strict import observed

        return observed(impl, declarations(impl.middleware))


def _effect_names(value: object, context: Context, key: str) -> frozenset[str]:
    from funcware.effects.declarations import _effects, applies

    if isinstance(value, dict):
        raise TypeError(
            f"{context.source}: {key}= per hook (a dict) is for a class's attribute; a "
            f"decorator makes one hook ({context.hook}), so give a list: {key}=[...]."
        )
    names = _effects(value, key, context.source)
    wrong = frozenset(name for name in names if context.hook and not applies(name, context.hook))
    if wrong:
        from funcware.effects.declarations import Declaration, check_applies

        declared = Declaration(reads=wrong) if key == "reads" else Declaration(writes=wrong)
        check_applies(declared, context.hook, context.source)
    return names


def check_reads(value: object, context: Context) -> frozenset[str]:
    """``reads=``: effect names that apply to the hook."""
    return _effect_names(value, context, "reads")


def check_writes(value: object, context: Context) -> frozenset[str]:
    """``writes=``: effect names that apply to the hook."""
    return _effect_names(value, context, "writes")


def complete_writes(attributes: dict[str, Any], context: Context) -> None:
    """A declared ``@dynamic_prompt`` always writes ``request.system_message``."""
    if context.decorator == "dynamic_prompt":
        writes = attributes.get("writes") or frozenset()
        attributes["writes"] = frozenset(writes) | {"request.system_message"}


def _references(value: object, context: Context, key: str) -> tuple[Any, ...]:
    from funcware.effects.declarations import _refs

    return _refs(value, key, context.source)


def check_outside(value: object, context: Context) -> tuple[Any, ...]:
    """``outside=``: middleware names or classes."""
    return _references(value, context, "outside")


def check_inside(value: object, context: Context) -> tuple[Any, ...]:
    """``inside=``: middleware names or classes."""
    return _references(value, context, "inside")


def check_requires(value: object, context: Context) -> tuple[Any, ...]:
    """``requires=``: middleware names or classes."""
    return _references(value, context, "requires")


def check_position(value: object, context: Context) -> object:
    """``position=``: ``"outermost"`` or ``"innermost"``."""
    if value not in get_args(Position):
        raise ValueError(
            f"{context.source}: position={value!r} is not a position; use 'outermost' or "
            "'innermost' (or leave it out)."
        )
    return value
