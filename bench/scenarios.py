"""The scenarios, each written once against :class:`impls.Api` so both libraries run the same.

Every middleware here is a no-op decorated function (or, for the build scenario, a class
defining the four node hooks) that bumps a counter, so a verification run can check that
every layer really ran. The model is :class:`fake_model.BenchChatModel`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fake_model import BenchChatModel, add
from impls import FLOOR, FUNCWARE, LANGCHAIN, LIBRARIES, Api, build_floor, load_api
from langchain_core.messages import HumanMessage

__all__ = [
    "SCENARIOS",
    "Prepared",
    "Scenario",
    "chain_agent",
    "hit",
    "hits",
    "new_input",
    "noop",
]

_HITS = itertools.count()
hit = _HITS.__next__
"""Count one hook call (every no-op hook calls it; atomic, so threads may race it)."""


def hits() -> int:
    """Hook calls so far (each reading counts one more): proof that each layer ran."""
    return hit()


MIXED = ("before_model", "after_model", "wrap_model_call")


def new_input() -> dict[str, Any]:
    """A fresh agent input (one human message)."""
    return {"messages": [HumanMessage("What is 1 + 1?")]}


def _sync_node(state: Any, runtime: Any) -> None:
    hit()


async def _async_node(state: Any, runtime: Any) -> None:
    hit()


def _sync_wrap(request: Any, handler: Callable[[Any], Any]) -> Any:
    hit()
    return handler(request)


async def _async_wrap(request: Any, handler: Callable[[Any], Any]) -> Any:
    hit()
    return await handler(request)


def _copy(func: Callable[..., Any]) -> Callable[..., Any]:
    """A distinct function object with ``func``'s code, so no two middleware share one."""
    import types

    return types.FunctionType(func.__code__, func.__globals__, func.__name__)


def noop(api: Api, hook: str, name: str, *, is_async: bool = False, **options: Any) -> Any:
    """A no-op middleware: ``hook`` decorated with ``api``'s decorator, named ``name``."""
    func: Callable[..., Any]
    if hook in ("wrap_model_call", "wrap_tool_call"):
        func = _async_wrap if is_async else _sync_wrap
    else:
        func = _async_node if is_async else _sync_node
    return getattr(api, hook)(name=name, **options)(_copy(func))


def mixed(api: Api, count: int, *, is_async: bool = False, **options: Any) -> list[Any]:
    """``count`` no-op middleware cycling before_model, after_model, wrap_model_call."""
    return [
        noop(api, MIXED[i % 3], f"{MIXED[i % 3]}_{i}", is_async=is_async, **options)
        for i in range(count)
    ]


def mixed_classes(api: Api, count: int) -> list[Any]:
    """:func:`mixed`, written as ``AgentMiddleware`` subclasses (one hook each)."""

    def node(self: Any, state: Any, runtime: Any) -> None:
        hit()

    def wrap(self: Any, request: Any, handler: Callable[[Any], Any]) -> Any:
        hit()
        return handler(request)

    made = []
    for i in range(count):
        hook = MIXED[i % 3]
        body = wrap if hook == "wrap_model_call" else node
        made.append(type(f"{hook}_{i}", (api.AgentMiddleware,), {hook: body})())
    return made


def node_classes(api: Api, count: int) -> list[Any]:
    """``count`` instances of distinct classes, each defining the four node hooks."""

    def hook(self: Any, state: Any, runtime: Any) -> None:
        hit()

    hooks = ("before_agent", "before_model", "after_model", "after_agent")
    return [
        type(f"NodeHooks{i}", (api.AgentMiddleware,), dict.fromkeys(hooks, hook))()
        for i in range(count)
    ]


def _no_config() -> dict[str, Any] | None:
    return None


@dataclass(frozen=True)
class Prepared:
    """What a worker runs: an agent (invoke scenarios) or a builder (build scenarios)."""

    target: Any
    hits: int = 0
    """Hook calls one invocation must make."""
    tool_results: int = 0
    """Tool messages one invocation must produce."""
    inputs: Callable[[], dict[str, Any]] = new_input
    """A fresh input for one invocation."""
    config: Callable[[], dict[str, Any] | None] = _no_config
    """The config of one invocation (a new thread id with a checkpointer)."""
    cleanup: Callable[[dict[str, Any] | None], None] | None = None
    """Run after each invocation with its config (inside the timing, for every side)."""
    concurrency: int = 1
    """Invocations run at once (``concurrent`` scenarios)."""
    extra: dict[str, Any] = field(default_factory=dict)


def _agent(
    impl: str,
    middleware: Callable[[Api], list[Any]],
    tool_steps: int = 0,
    *,
    model: Any = None,
    tools: list[Any] | None = None,
    checkpointer: Any = None,
) -> Any:
    model = model if model is not None else BenchChatModel(tool_steps=tool_steps)
    tools = tools if tools is not None else [add]
    if impl == FLOOR:
        return build_floor(model, tools, checkpointer=checkpointer)
    api = load_api(impl)
    return api.create_agent(model, tools, middleware=middleware(api), checkpointer=checkpointer)


def chain_agent(impl: str, layers: int, *, is_async: bool = False) -> Any:
    """An agent with ``layers`` no-op ``wrap_model_call`` layers, one tool, one call."""

    def middleware(api: Api) -> list[Any]:
        return [noop(api, "wrap_model_call", f"wrap_{i}", is_async=is_async) for i in range(layers)]

    return _agent(impl, middleware)


@dataclass(frozen=True)
class Scenario:
    """One benchmark: what it measures and how to prepare it for an implementation."""

    name: str
    title: str
    kind: str
    """``invoke``, ``ainvoke``, ``build``, ``concurrent`` (timed samples), ``depth``,
    ``memory`` or ``onion``."""
    impls: tuple[str, ...]
    prepare: Callable[[str], Prepared] | None = None
    layers: int | None = None
    """For wrap chains: the number of ``wrap_model_call`` layers."""
    group: str = "core"
    """Which table the scenario is reported in."""
    requires: str | None = None
    """A distribution the scenario needs besides the implementations (skipped without)."""
    flavour: str = "sync"
    """For depth scenarios: ``sync`` (invoke) or ``async`` (ainvoke)."""


def _mixed_scenario(count: int, *, is_async: bool = False) -> Callable[[str], Prepared]:
    def prepare(impl: str) -> Prepared:
        agent = _agent(impl, lambda api: mixed(api, count, is_async=is_async))
        return Prepared(agent, hits=count)

    return prepare


def _no_middleware(impl: str) -> Prepared:
    return Prepared(_agent(impl, lambda api: []))


def _tool_loop(impl: str) -> Prepared:
    def middleware(api: Api) -> list[Any]:
        layers = []
        for i in range(5):
            layers.append(noop(api, "wrap_model_call", f"wrap_model_{i}"))
            layers.append(noop(api, "wrap_tool_call", f"wrap_tool_{i}"))
        return layers

    agent = _agent(impl, middleware, tool_steps=5)
    # 6 model calls x 5 model layers + 5 tool calls x 5 tool layers (the floor has none)
    return Prepared(agent, hits=0 if impl == FLOOR else 55, tool_results=5)


def _chain(layers: int) -> Callable[[str], Prepared]:
    def prepare(impl: str) -> Prepared:
        return Prepared(chain_agent(impl, layers), hits=layers)

    return prepare


def _build50(impl: str) -> Prepared:
    api = load_api(impl)
    middleware = node_classes(api, 50)
    model = BenchChatModel()

    def build() -> Any:
        return api.create_agent(model, [add], middleware=middleware)

    return Prepared(build, hits=200)


WITH_FLOOR = (FUNCWARE, LANGCHAIN, FLOOR)

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "no_middleware", "no middleware, 1 model call", "invoke", WITH_FLOOR, _no_middleware
        ),
        Scenario(
            "mw10",
            "10 mixed decorated middleware, 1 call",
            "invoke",
            LIBRARIES,
            _mixed_scenario(10),
        ),
        Scenario(
            "mw50",
            "50 mixed decorated middleware, 1 call",
            "invoke",
            LIBRARIES,
            _mixed_scenario(50),
        ),
        Scenario(
            "tool_loop",
            "5-step tool loop, 5 wrap_tool + 5 wrap_model",
            "invoke",
            WITH_FLOOR,
            _tool_loop,
        ),
        Scenario(
            "mw10_async",
            "10 mixed async middleware, ainvoke",
            "ainvoke",
            LIBRARIES,
            _mixed_scenario(10, is_async=True),
        ),
        Scenario(
            "build50",
            "create_agent + compile, 50 class mw x 4 node hooks",
            "build",
            LIBRARIES,
            _build50,
        ),
        Scenario(
            "wrap50",
            "50 sync wrap_model_call layers, 1 call",
            "invoke",
            LIBRARIES,
            _chain(50),
            layers=50,
        ),
        Scenario(
            "wrap100",
            "100 sync wrap_model_call layers, 1 call",
            "invoke",
            LIBRARIES,
            _chain(100),
            layers=100,
        ),
        Scenario(
            "wrap200",
            "200 sync wrap_model_call layers, 1 call",
            "invoke",
            LIBRARIES,
            _chain(200),
            layers=200,
        ),
        Scenario(
            "deepest_sync_chain", "deepest sync wrap_model_call chain that runs", "depth", LIBRARIES
        ),
        Scenario(
            "peak_memory",
            "tracemalloc peak, 1 invoke of mw50",
            "memory",
            LIBRARIES,
            _mixed_scenario(50),
        ),
    )
}

SCENARIOS["deepest_async_chain"] = Scenario(
    "deepest_async_chain",
    "deepest async wrap_model_call chain that runs (ainvoke)",
    "depth",
    LIBRARIES,
    flavour="async",
)
SCENARIOS["onion_layers"] = Scenario(
    "onion_layers",
    "the onion's own cost per layer over nested calls (bench/onion.py)",
    "onion",
    (FUNCWARE,),
    group="onion",
)

from dimensions import DIMENSIONS  # noqa: E402 - they build on the helpers above
from options import OPTIONS  # noqa: E402

SCENARIOS.update((s.name, s) for s in (*DIMENSIONS, *OPTIONS))
