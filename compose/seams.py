"""The seams: where a feature plugs into the core. Each is used once per build.

A feature is an object with a ``name`` and any of the methods of :class:`Feature`;
:func:`register` adds it to the one registry. While ``create_agent`` builds an agent it
calls, in registration order, every registered feature that defines the seam:

``adapt(member)``
    while flattening the middleware list, for an object that is not a funcware
    ``AgentMiddleware`` (LangChain's middleware): a funcware middleware standing in for
    it, or ``None`` when the feature does not know it.
``arrange(members, build)``
    with the flat list: check it (or reorder it) and return it.
``transform(impl, build)``
    for every hook of every member: the :class:`~funcware.hooks.middleware.HookImpl` to
    use instead (wrapping its callables), or the same one.
``plan(plan, build)``
    once the plan is complete: add state fields, tools that end the loop, checks.
``model_call(call, build)``
    with the model node's :class:`~funcware.compose.steps.model_call.ModelCall`: the
    strategy to use instead (structured output, stream guards).
``node(impl, node, build)``
    with each node hook's graph callables ``(sync, async)``: the pair to use instead.
``node_options(name, impl, build)``
    for each node the agent adds (``impl`` is ``None`` for ``"model"`` and ``"tools"``):
    keyword arguments for langgraph's ``add_node`` (``retry_policy``, ``cache_policy``,
    ``error_handler``, ``timeout``), or an empty mapping. ``name="*"`` (``impl`` ``None``)
    asks once for the agent-wide defaults, passed to ``StateGraph.set_node_defaults``.
``compiled(graph, build)``
    with the compiled agent: attach data, add run wraps (always-run cleanups).

A feature that does not define a seam is never asked about it, and a feature that finds
nothing to do returns what it was given: a stack that uses no feature runs the core alone.
The core never imports a feature; ``funcware/__init__.py`` registers the built-in ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

    from funcware.compose.graph.plan import AgentPlan
    from funcware.compose.steps.model_call import ModelCall
    from funcware.hooks.middleware import AgentMiddleware, HookImpl

__all__ = ["SEAMS", "Build", "Feature", "NodePair", "features", "register", "registered"]

NodePair = tuple[Callable[..., Any], Callable[..., Any]]
"""A node's sync and async callables."""

SEAMS = (
    "adapt",
    "arrange",
    "transform",
    "plan",
    "model_call",
    "node",
    "node_options",
    "compiled",
)
"""Every seam, in the order a build reaches them."""


@dataclass
class Build:
    """What one build tells the features: who builds, with which options, and a scratch pad."""

    caller: str
    """``"create_agent"`` or ``"compose()"``: named in the features' messages."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """The feature options the caller was given (``order=``, ``effects=``, ...)."""
    report: bool = True
    """Whether checks warn and raise; ``False``: features arrange, and put what they would
    report in :attr:`problems` (``explain``)."""
    problems: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    """What a feature keeps between its seams during this build, under its own name."""
    arguments: Mapping[str, Any] = field(default_factory=dict)
    """The caller's own arguments (``create_agent``'s), so a feature can build the same
    agent again with another middleware list (``funcware.runs``: a stack chosen per run)."""


class Feature(Protocol):
    """A plug-in. Only ``name`` is required; define the seams you use."""

    name: str


_FEATURES: list[Feature] = []
_BY_SEAM: dict[str, list[Any]] = {seam: [] for seam in SEAMS}


def register(feature: Feature) -> Feature:
    """Add ``feature`` to the registry (once per name: a second one replaces the first)."""
    for index, known in enumerate(_FEATURES):
        if known.name == feature.name:
            _FEATURES[index] = feature
            break
    else:
        _FEATURES.append(feature)
    for seam in SEAMS:
        _BY_SEAM[seam] = [f for f in _FEATURES if callable(getattr(f, seam, None))]
    return feature


def registered() -> tuple[Feature, ...]:
    """Every registered feature, in registration order."""
    return tuple(_FEATURES)


def features(seam: str) -> list[Any]:
    """The registered features that define ``seam``, in registration order."""
    return _BY_SEAM[seam]


def adapt(member: object) -> AgentMiddleware[Any, Any, Any] | None:
    """A funcware middleware standing in for ``member``, if a feature knows it."""
    for feature in _BY_SEAM["adapt"]:
        adapted: AgentMiddleware[Any, Any, Any] | None = feature.adapt(member)
        if adapted is not None:
            return adapted
    return None


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
