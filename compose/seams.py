"""The seams where features plug into the core, each used once per build (adapting another
library's middleware is :mod:`funcware.hooks.adapters`). :func:`register` adds a feature,
or a :class:`Plugin` naming where it lives; a build calls every loaded feature that defines
a seam, in registration order. ``docs/architecture.md`` tells each seam in full."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import import_module
from typing import TYPE_CHECKING, Any, Protocol

from langchain_core.runnables.config import var_child_runnable_config

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

    from funcware.compose.graph.plan import AgentPlan
    from funcware.compose.steps.model_call import ModelCall
    from funcware.hooks.middleware import AgentMiddleware, HookImpl

__all__ = [
    "SEAMS",
    "Build",
    "Feature",
    "NodePair",
    "Plugin",
    "activate",
    "claim",
    "claim_run_key",
    "claims",
    "register",
]

NodePair = tuple[Callable[..., Any], Callable[..., Any]]
"""A node's sync and async callables."""

SEAMS = ("arrange", "transform", "plan", "model_call", "node", "node_options", "compiled")
"""Every seam, in the order a build reaches them (adapting another library's middleware is
:mod:`funcware.hooks.adapters`)."""


@dataclass
class Build:
    """What one build tells the features: who builds, with which options, and a scratch pad."""

    caller: str
    """``"create_agent"`` or ``"compose()"``: named in the features' messages."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """The feature options the caller gave away from their defaults (``effects=``, ...)."""
    report: bool = True
    """Whether checks warn and raise; ``False``: features arrange, and put what they would
    report in :attr:`problems` (``explain``)."""
    problems: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    """What a feature keeps between its seams during this build, under its own name."""
    arguments: Mapping[str, Any] = field(default_factory=dict)
    """``create_agent``'s arguments: how to build the agent again with other middleware."""


class Feature(Protocol):
    """A plug-in. Only ``name`` is required; define the seams you use."""

    name: str


@dataclass(frozen=True)
class Plugin:
    """A feature named by where it lives (``target``: ``"module:Class"``), made the first
    time a build needs it. ``on``: ``"*"`` (every build), ``"foreign"`` (a stack with another
    library's middleware), ``"hook:<name>"`` (a member defines that hook), or an option a
    build's caller gave or a member sets away from its default."""

    name: str
    target: str
    on: frozenset[str] = frozenset({"*"})

    def load(self) -> Feature:
        """The feature itself."""
        module, _, attribute = self.target.partition(":")
        made: Feature = getattr(import_module(module), attribute)()
        return made


_FEATURES: list[Feature | Plugin] = []
_BY_SEAM: dict[str, list[Any]] = {seam: [] for seam in SEAMS}
_ON: dict[str, frozenset[str]] = {}


def register(feature: Feature | Plugin) -> Feature | Plugin:
    """Add ``feature`` to the registry (once per name: a second one replaces the first)."""
    if isinstance(feature, Plugin):
        _ON[feature.name] = feature.on
    for index, known in enumerate(_FEATURES):
        if known.name == feature.name:
            _FEATURES[index] = feature
            break
    else:
        _FEATURES.append(feature)
    _index()
    return feature


def _index() -> None:
    for seam in SEAMS:
        _BY_SEAM[seam] = [
            f for f in _FEATURES if not isinstance(f, Plugin) and callable(getattr(f, seam, None))
        ]


def activate(members: Sequence[object], build: Build) -> None:
    """Load every registered :class:`Plugin` that the build of ``members`` needs."""
    waiting = [f for f in _FEATURES if isinstance(f, Plugin)]
    if not waiting:
        return
    hooks = {word[5:] for f in waiting for word in f.on if word.startswith("hook:")}
    used = {"*", *build.options, *_used_options(members, hooks)}
    loaded = False
    for index, feature in enumerate(_FEATURES):
        if isinstance(feature, Plugin) and not used.isdisjoint(feature.on):
            _FEATURES[index] = feature.load()
            loaded = True
    if loaded:
        _index()


_RUN_KEYS: dict[str, str] = {}
_CLAIMERS: dict[str, Callable[[Any], None]] = {}


def claim_run_key(key: str, target: str) -> None:
    """Let a feature take the runs whose ``config["configurable"]`` holds ``key`` (or whose
    caller's run's does: a run started inside another). ``target``, ``"module:function"``,
    is called as ``function(graph)`` the first time such a run of ``graph`` starts, and adds
    the feature's run wraps to it."""
    _RUN_KEYS[key] = target


def claims(config: Mapping[str, Any] | None) -> list[str]:
    """The features (targets) that take a run started with ``config``."""
    given = (config or {}).get("configurable") or {}
    ambient = (var_child_runnable_config.get() or {}).get("configurable") or {}
    return [target for key, target in _RUN_KEYS.items() if key in given or key in ambient]


def claim(graph: CompiledStateGraph[Any, Any, Any, Any], targets: list[str]) -> None:
    """Let the features at ``targets`` (from :func:`claims`) add their run wraps to ``graph``."""
    for target in dict.fromkeys(targets):
        if target not in _CLAIMERS:
            module, _, name = target.partition(":")
            _CLAIMERS[target] = getattr(import_module(module), name)
        _CLAIMERS[target](graph)


def _used_options(members: Sequence[object], hooks: set[str]) -> set[str]:
    """The words that switch plugins on: ``"foreign"``, options set away from their defaults
    (class attributes, marks on hook methods) and ``"hook:<name>"`` for ``hooks`` defined."""
    from funcware.hooks.middleware import AgentMiddleware
    from funcware.hooks.options import feature_options

    options = feature_options()
    marks = tuple((o.name, o.mark) for o in options if o.target != "class")
    used: set[str] = set()
    for member in members:
        if not isinstance(member, AgentMiddleware):
            used.add("foreign")
            continue
        cls: Any = type(member)
        used |= _class_marks(cls, marks, frozenset(hooks))
        used.update(
            o.name
            for o in options
            if o.target == "class" and getattr(member, o.name, None) not in (None, o.default)
        )
    return used


@lru_cache(maxsize=1024)
def _class_marks(
    cls: Any, marks: tuple[tuple[str, str], ...], hooks: frozenset[str]
) -> frozenset[str]:
    """What ``cls``'s hook methods say (marked options, ``hook:`` names), read once a class."""
    from funcware.hooks.middleware import HOOKS, AgentMiddleware

    base = AgentMiddleware
    found = {
        f"hook:{h}"
        for h in hooks
        if any(getattr(cls, n) is not getattr(base, n) for n in (h, f"a{h}"))
    }
    for method in (getattr(cls, n, None) for hook in HOOKS for n in (hook, f"a{hook}")):
        for target in (method, getattr(method, "__wrapped__", None)):
            found.update(n for n, mark in marks if getattr(target, mark, None) not in (None, False))
    return frozenset(found)


def arrange(
    members: list[AgentMiddleware[Any, Any, Any]], build: Build
) -> list[AgentMiddleware[Any, Any, Any]]:
    """``members`` as every feature's ``arrange`` leaves them."""
    for feature in _BY_SEAM["arrange"]:
        members = feature.arrange(members, build)
    return members


def transform(impl: HookImpl, build: Build) -> HookImpl:
    """``impl`` as every feature's ``transform`` leaves it."""
    for feature in _BY_SEAM["transform"]:
        impl = feature.transform(impl, build)
    return impl


def plan(agent_plan: AgentPlan, build: Build) -> None:
    """Let every feature complete the plan."""
    for feature in _BY_SEAM["plan"]:
        feature.plan(agent_plan, build)


def model_call(call: ModelCall, build: Build) -> ModelCall:
    """The model strategy every feature's ``model_call`` leaves."""
    for feature in _BY_SEAM["model_call"]:
        call = feature.model_call(call, build)
    return call


def node(impl: HookImpl, pair: NodePair, build: Build) -> NodePair:
    """A node hook's callables as every feature's ``node`` leaves them."""
    for feature in _BY_SEAM["node"]:
        pair = feature.node(impl, pair, build)
    return pair


def node_options(name: str, impl: HookImpl | None, build: Build) -> dict[str, Any]:
    """langgraph's ``add_node`` keywords for node ``name`` from every feature (a later
    feature's value wins a keyword); ``"*"``: the defaults for ``set_node_defaults``."""
    options: dict[str, Any] = {}
    for feature in _BY_SEAM["node_options"]:
        options.update(feature.node_options(name, impl, build))
    return options


def compiled(graph: CompiledStateGraph[Any, Any, Any, Any], build: Build) -> None:
    """Let every feature finish the compiled agent."""
    for feature in _BY_SEAM["compiled"]:
        feature.compiled(graph, build)
