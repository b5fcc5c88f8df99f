"""Middleware chosen per run, through the run's config.

A run asks for its stack in ``config["configurable"]["funcware"]``::

    {"disable": ["pii", ...], "add": ["audit", some_middleware, ...]}

``disable`` names middleware of the agent to switch off for this run; ``add`` names
middleware registered on the agent as off by default (``per_run="off"``), or gives
in-process middleware objects (appended innermost). Names are plain strings, so a
LangGraph Server or Aegra client can send them. A middleware declared
``per_run="required"`` may not be switched off: asking is a :class:`RunConfigError`.

How a run's stack runs (:class:`PerRun`, behind the agent's outermost run wrap,
``funcware.runs.RunChoice``):

- *no rebuild*: when the agent declares ``per_run`` on any middleware, its wrap-style
  middleware (only ``wrap_model_call``/``wrap_tool_call``/``wrap_agent_call`` hooks, no
  state fields, no tools), off-by-default ones included, are in its graph and their wraps
  read the run's choice (:data:`SKIP_KEY` in the run's config); switching them on or off
  changes nothing else;
- *another graph*: any other change (a node hook, an unmarked agent, an object in ``add``)
  runs on a graph built for that stack once, cached on the agent (the last
  :data:`VARIANTS` stacks) and reused by every run that asks for the same stack.

Either way the order and hazard checks run once on the stack that runs, when it is first
asked for. The choice is taken out of the config before the run starts, so subagents and
tools do not inherit it.
"""

from __future__ import annotations

import contextvars
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import wraps
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from langgraph.config import get_config

from funcware.compose.steps.run_wrap import Through
from funcware.errors import RunConfigError
from funcware.hooks.middleware import AgentMiddleware, HookImpl, hook_impls, is_middleware, origin
from funcware.hooks.types import AgentState

if TYPE_CHECKING:
    from funcware.compose.graph.plan import AgentPlan
    from funcware.compose.seams import Build
    from funcware.compose.steps.run_wrap import How, Kwargs, Runner
    from funcware.compose.steps.runs import AgentGraph

__all__ = [
    "CONFIG_KEY",
    "SKIP_KEY",
    "VARIANTS",
    "PerRun",
    "PerRunMode",
    "Registry",
    "check_mode",
    "default_skipped",
    "per_run_mode",
    "plan_for",
    "skipped",
    "switchable",
]

PerRunMode = Literal["on", "off", "required"]

CONFIG_KEY = "funcware"
"""The key of a run's choice in ``config["configurable"]``."""
VARIANTS = 16
"""How many graphs built for other stacks an agent keeps (least recently used dropped)."""
_MODES: tuple[PerRunMode, ...] = ("on", "off", "required")

SKIP_KEY = "__funcware_skipped"
"""The key, in a run's ``config["configurable"]``, of the ``id()`` of the (wrap-style)
middleware switched off for the run. In the config, not a context variable: langgraph
hands the config to every node and wrap, however a server drives the stream."""


def skipped(config: Mapping[str, Any] | None) -> frozenset[int]:
    """The middleware switched off for the run ``config`` belongs to."""
    found: frozenset[int] = ((config or {}).get("configurable") or {}).get(SKIP_KEY, frozenset())
    return found


def _skipped_now() -> frozenset[int]:
    try:
        return skipped(get_config())
    except RuntimeError:  # called outside a run (a unit test of the layer)
        return frozenset()


_BUILDING: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "funcware_building_run_stack", default=False
)
"""Set while a stack chosen by a run is built or checked: it is taken as it is."""


def check_mode(value: object, source: str) -> PerRunMode:
    """``value`` as a ``per_run`` mode, or a ``TypeError`` naming ``source`` and the fix."""
    if value in _MODES:
        return value
    raise TypeError(
        f"{source} got per_run={value!r}; use 'on' (default: runs may switch it off), 'off' "
        "(registered, switched on by runs that add it) or 'required' (never switched off)."
    )


def per_run_mode(member: object) -> PerRunMode:
    """The member's ``per_run`` mode (``"on"`` when it declares none)."""
    value = getattr(member, "per_run", "on")
    source = f"middleware {getattr(member, 'name', member)!r} ({origin(member)})"
    return check_mode(value, source)


def _declares(member: object) -> bool:
    return getattr(member, "per_run", None) is not None


def _wrap_style(member: AgentMiddleware[Any, Any, Any]) -> bool:
    """Whether switching ``member`` off changes only what its wraps do."""
    if getattr(member, "state_schema", AgentState) is not AgentState:
        return False
    if getattr(member, "tools", None):
        return False
    return set(hook_impls(member)) <= {"wrap_model_call", "wrap_tool_call"}


@dataclass
class Registry:
    """What a build of an agent with per-run control worked out (``build.data["runs"]``)."""

    members: list[AgentMiddleware[Any, Any, Any]]
    """Every middleware given to the agent, off-by-default ones included, in order."""
    switchable: frozenset[int]
    """``id()`` of the wrap-style middleware kept in the graph and switched per run."""


def arrange(
    members: list[AgentMiddleware[Any, Any, Any]], build: Build
) -> list[AgentMiddleware[Any, Any, Any]]:
    """The stack a run gets by default; off-by-default middleware left out of it unless it
    is wrap-style (then it stays in the graph, switched off per run)."""
    if _BUILDING.get() or build.caller != "create_agent" or not any(map(_declares, members)):
        return members
    modes = [per_run_mode(m) for m in members]
    switchable = frozenset(id(m) for m in members if _wrap_style(m))
    build.data["runs"] = Registry(list(members), switchable)
    return [
        m for m, mode in zip(members, modes, strict=True) if mode != "off" or id(m) in switchable
    ]


def default_skipped(
    members: Sequence[AgentMiddleware[Any, Any, Any]], switchable: frozenset[int]
) -> frozenset[int]:
    """The switchable middleware a run without a choice leaves off (``per_run="off"``)."""
    return frozenset(id(m) for m in members if per_run_mode(m) == "off" and id(m) in switchable)


def switchable(impl: HookImpl, build: Build) -> HookImpl:
    """``impl`` (a wrap of a switchable middleware) passing straight to its handler in runs
    that switch its middleware off."""
    registry = build.data.get("runs")
    if not isinstance(registry, Registry) or id(impl.middleware) not in registry.switchable:
        return impl
    key = id(impl.middleware)

    def sync_wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(func)
        def layer(request: Any, handler: Any) -> Any:
            if key in _skipped_now():
                return handler(request)
            return func(request, handler)

        return layer

    def async_wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(func)
        async def alayer(request: Any, handler: Any) -> Any:
            if key in _skipped_now():
                return await handler(request)
            return await func(request, handler)

        return alayer

    return replace(
        impl,
        sync=None if impl.sync is None else sync_wrap(impl.sync),
        async_=None if impl.async_ is None else async_wrap(impl.async_),
    )


@dataclass(frozen=True)
class _Stack:
    """How the runs that asked for one stack run: on the agent's graph with some
    middleware skipped, or on a graph built for the stack."""

    members: tuple[AgentMiddleware[Any, Any, Any], ...]
    plan: AgentPlan
    skipped: frozenset[int] = frozenset()
    graph: AgentGraph | None = None


def _spec_key(spec: object) -> tuple[Any, ...] | None:
    """A key equal for equal well-formed choices; ``None`` when it cannot tell."""
    if not isinstance(spec, Mapping):
        return None
    disable, add = spec.get("disable") or (), spec.get("add") or ()
    if (
        len(spec) > 2
        or not isinstance(disable, (list, tuple))
        or not isinstance(add, (list, tuple))
    ):
        return None
    try:
        return (tuple(disable), tuple(a if isinstance(a, str) else id(a) for a in add))
    except TypeError:
        return None


def _described(member: AgentMiddleware[Any, Any, Any]) -> str:
    return f"middleware {member.name!r} ({origin(member)})"


_R = TypeVar("_R")


class PerRun(Through):
    """The run wrap that reads a run's choice and runs the stack it asks for."""

    def __init__(
        self,
        members: Sequence[AgentMiddleware[Any, Any, Any]],
        switchable: frozenset[int],
        arguments: Mapping[str, Any],
    ) -> None:
        self.members = list(members)
        self.by_name = {m.name: m for m in self.members}
        self.switchable = switchable
        self.arguments = dict(arguments)
        self.default_skipped = default_skipped(self.members, switchable)
        self._stacks: OrderedDict[tuple[Any, ...], _Stack] = OrderedDict()
        self._asked: OrderedDict[tuple[Any, ...], _Stack] = OrderedDict()
        """The same, by what runs asked (a choice seen before costs one lookup)."""

    # -- reading the choice ---------------------------------------------------------------

    def _names(self, value: object, key: str) -> list[Any]:
        if value is None:
            return []
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise RunConfigError(
                f'config["configurable"]["funcware"]["{key}"] got {value!r}; give a list '
                f'(of names{" or middleware" if key == "add" else ""}): "{key}": ["name"].'
            )
        return list(value)

    def _known(self, name: str, key: str) -> AgentMiddleware[Any, Any, Any]:
        found = self.by_name.get(name)
        if found is None:
            known = ", ".join(repr(n) for n in self.by_name) or "none"
            raise RunConfigError(
                f'config["configurable"]["funcware"]["{key}"] names {name!r}, but the agent '
                f"has no middleware of that name (its middleware: {known}). Register it on "
                "the agent (create_agent(middleware=[..., it]) with per_run='off' to keep it "
                'off by default), or pass the middleware object itself in "add".'
            )
        return found

    def choose(self, spec: object) -> tuple[list[AgentMiddleware[Any, Any, Any]], tuple[Any, ...]]:
        """The stack ``spec`` asks for, and a key that is equal for equal stacks."""
        if not isinstance(spec, Mapping) or set(spec) - {"disable", "add"}:
            raise RunConfigError(
                f'config["configurable"]["funcware"] got {spec!r}; give a dict with '
                '"disable" (names to switch off) and/or "add" (names of middleware '
                "registered with per_run='off', or middleware objects)."
            )
        disabled: set[str] = set()
        for name in self._names(spec.get("disable"), "disable"):
            member = self._known(str(name), "disable")
            if per_run_mode(member) == "required":
                raise RunConfigError(
                    f"A run asked to switch off {_described(member)}, which declares "
                    "per_run='required': no run may switch it off. Remove "
                    f'{member.name!r} from config["configurable"]["funcware"]["disable"].'
                )
            disabled.add(member.name)
        added: set[str] = set()
        objects: list[AgentMiddleware[Any, Any, Any]] = []
        for item in self._names(spec.get("add"), "add"):
            if isinstance(item, str):
                added.add(self._known(item, "add").name)
            elif is_middleware(item):
                objects.append(item)
            else:
                raise RunConfigError(
                    f'config["configurable"]["funcware"]["add"] got {item!r}; give the name '
                    "of a middleware registered on the agent, or a middleware object."
                )
        both = sorted(disabled & added)
        if both:
            raise RunConfigError(
                f'config["configurable"]["funcware"] both disables and adds {both[0]!r}; '
                "name it in one of the two."
            )
        stack = [
            m
            for m in self.members
            if m.name in added or (per_run_mode(m) != "off" and m.name not in disabled)
        ]
        stack += objects
        return stack, tuple(id(m) for m in stack)

    # -- running it -----------------------------------------------------------------------

    def _check(self, members: list[AgentMiddleware[Any, Any, Any]]) -> AgentPlan:
        from funcware.compose.agent import DEFAULTS
        from funcware.compose.graph.plan import AgentPlan
        from funcware.compose.seams import Build

        options = {
            k: v
            for k in ("response_format", "order", "effects")
            if (v := self.arguments.get(k)) is not None and v != DEFAULTS.get(k)
        }
        token = _BUILDING.set(True)
        try:
            return AgentPlan.build(
                members,
                self.arguments.get("tools"),
                self.arguments.get("state_schema"),
                build=Build("create_agent", options, arguments=self.arguments),
            )
        finally:
            _BUILDING.reset(token)

    def _build(self, members: list[AgentMiddleware[Any, Any, Any]]) -> AgentGraph:
        from funcware.compose.agent import create_agent

        token = _BUILDING.set(True)
        try:
            return create_agent(**{**self.arguments, "middleware": members})  # type: ignore[return-value]
        finally:
            _BUILDING.reset(token)

    def stack(self, graph: AgentGraph, spec: object) -> _Stack:
        """How runs that ask for ``spec`` run (worked out and checked once per stack)."""
        asked = _spec_key(spec)
        if asked is not None:
            found = self._asked.get(asked)
            if found is not None:
                return found
        found = self._stack(graph, spec)
        if asked is not None:
            self._asked[asked] = found
            if len(self._asked) > VARIANTS:
                self._asked.popitem(last=False)
        return found

    def _stack(self, graph: AgentGraph, spec: object) -> _Stack:
        members, key = self.choose(spec)
        found = self._stacks.get(key)
        if found is not None:
            self._stacks.move_to_end(key)
            return found
        base = graph.plan.middleware
        fixed = [m for m in members if id(m) not in self.switchable]
        if fixed == [m for m in base if id(m) not in self.switchable] and all(
            any(m is b for b in base) for m in members
        ):
            plan = self._check(members)
            if [id(m) for m in plan.middleware] == [id(m) for m in base if m in members]:
                chosen = {id(m) for m in members}
                skipped = frozenset(id(m) for m in base if id(m) not in chosen)
                found = _Stack(tuple(members), plan, skipped)
        if found is None:
            variant = self._build(members)
            found = _Stack(tuple(members), variant.plan, graph=variant)
        self._stacks[key] = found
        if len(self._stacks) > VARIANTS:
            self._stacks.popitem(last=False)
        return found

    def _split(self, config: Any) -> tuple[object, Any]:
        configurable = config.get("configurable") or {}
        spec = configurable.get(CONFIG_KEY)
        if spec is None:
            return None, config
        rest = dict(configurable)
        del rest[CONFIG_KEY]
        return spec, {**config, "configurable": rest}

    def _skipping(self, config: Any, skipped: frozenset[int]) -> Any:
        if not skipped:
            return config
        configurable = {**(config.get("configurable") or {}), SKIP_KEY: skipped}
        return {**config, "configurable": configurable}

    def through(
        self, graph: AgentGraph, input: Any, config: Any, kwargs: Kwargs, run: Runner[_R], how: How
    ) -> _R:
        """``run``, or the chosen stack's run, for the stack the config asks for."""
        chosen, config = self._chosen(graph, config)
        if chosen is not None:
            run = _runs(chosen, how)
        return run(input, config, **kwargs)

    def _chosen(self, graph: AgentGraph, config: Any) -> tuple[AgentGraph | None, Any]:
        """The graph built for the stack the config asks for (``None``: this agent's graph
        runs it), and the config to run it with."""
        spec, config = self._split(config)
        if spec is None:
            return None, self._skipping(config, self.default_skipped)
        chosen = self.stack(graph, spec)
        if chosen.graph is not None:
            return chosen.graph, config
        return None, self._skipping(config, chosen.skipped)


def _runs(graph: AgentGraph, how: How) -> Callable[..., Any]:
    """``graph``'s run (``stream`` or ``astream``: ``how``) with its run wraps, as its
    ``stream`` runs it past its entry checks."""
    from langgraph.graph.state import CompiledStateGraph

    run = getattr(CompiledStateGraph, how).__get__(graph)
    for wrap in reversed(graph.run_wraps):
        run = _bound(getattr(wrap, how), graph, run)
    return run  # type: ignore[no-any-return]


def _bound(wrap: Callable[..., Any], graph: AgentGraph, run: Any) -> Callable[..., Any]:
    def call(input: Any, config: Any, **kwargs: Any) -> Any:
        return wrap(graph, input, config, kwargs, run)

    return call


def plan_for(graph: AgentGraph, config: Mapping[str, Any]) -> AgentPlan:
    """The plan of the stack a run of ``graph`` with ``config`` gets (``explain``)."""
    from funcware.compose.seams import claim, claims

    taken = claims(config)
    if taken:  # an agent built without run-level control: as the run would take it
        claim(graph, taken)
    choice = next((w for w in graph.run_wraps if hasattr(w, "chooser")), None)
    if choice is None:
        return graph.plan
    spec = (config.get("configurable") or {}).get(CONFIG_KEY)
    chooser: PerRun = choice.chooser()
    return chooser.stack(graph, {} if spec is None else spec).plan
