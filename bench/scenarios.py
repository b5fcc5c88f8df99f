"""The scenarios, each written once against :class:`impls.Api` so both libraries run the same.

Every middleware here is a no-op decorated function (or, for the build scenario, a class
defining the four node hooks) that bumps a counter, so a verification run can check that
every layer really ran. The model is :class:`fake_model.BenchChatModel`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fake_model import BenchChatModel, add
from impls import FLOOR, FUNCWARE, LANGCHAIN, LIBRARIES, Api, build_floor, load_api
from langchain_core.messages import HumanMessage

__all__ = ["HITS", "SCENARIOS", "Prepared", "Scenario", "chain_agent", "new_input"]

HITS = [0]
"""Hook calls so far (every no-op hook adds one): proof that each layer ran."""

MIXED = ("before_model", "after_model", "wrap_model_call")


def new_input() -> dict[str, Any]:
    """A fresh agent input (one human message)."""
    return {"messages": [HumanMessage("What is 1 + 1?")]}


def _sync_node(state: Any, runtime: Any) -> None:
    HITS[0] += 1


async def _async_node(state: Any, runtime: Any) -> None:
    HITS[0] += 1


def _sync_wrap(request: Any, handler: Callable[[Any], Any]) -> Any:
    HITS[0] += 1
    return handler(request)


async def _async_wrap(request: Any, handler: Callable[[Any], Any]) -> Any:
    HITS[0] += 1
    return await handler(request)


def _copy(func: Callable[..., Any]) -> Callable[..., Any]:
    """A distinct function object with ``func``'s code, so no two middleware share one."""
    import types

    return types.FunctionType(func.__code__, func.__globals__, func.__name__)


def noop(api: Api, hook: str, name: str, *, is_async: bool = False) -> Any:
    """A no-op middleware: ``hook`` decorated with ``api``'s decorator, named ``name``."""
    func: Callable[..., Any]
    if hook in ("wrap_model_call", "wrap_tool_call"):
        func = _async_wrap if is_async else _sync_wrap
    else:
        func = _async_node if is_async else _sync_node
    return getattr(api, hook)(name=name)(_copy(func))


def mixed(api: Api, count: int, *, is_async: bool = False) -> list[Any]:
    """``count`` no-op middleware cycling before_model, after_model, wrap_model_call."""
    return [noop(api, MIXED[i % 3], f"{MIXED[i % 3]}_{i}", is_async=is_async) for i in range(count)]


def node_classes(api: Api, count: int) -> list[Any]:
    """``count`` instances of distinct classes, each defining the four node hooks."""

    def hook(self: Any, state: Any, runtime: Any) -> None:
        HITS[0] += 1

    hooks = ("before_agent", "before_model", "after_model", "after_agent")
    return [
        type(f"NodeHooks{i}", (api.AgentMiddleware,), dict.fromkeys(hooks, hook))()
        for i in range(count)
    ]


@dataclass(frozen=True)
class Prepared:
    """What a worker runs: an agent (invoke scenarios) or a builder (the build scenario)."""

    target: Any
    hits: int = 0
    """Hook calls one invocation must make."""
    tool_results: int = 0
    """Tool messages one invocation must produce."""


def _agent(impl: str, middleware: Callable[[Api], list[Any]], tool_steps: int = 0) -> Any:
    model = BenchChatModel(tool_steps=tool_steps)
    if impl == FLOOR:
        return build_floor(model, [add])
    return load_api(impl).create_agent(model, [add], middleware=middleware(load_api(impl)))


def chain_agent(impl: str, layers: int) -> Any:
    """An agent with ``layers`` sync no-op ``wrap_model_call`` layers, one tool, one call."""

    def middleware(api: Api) -> list[Any]:
        return [noop(api, "wrap_model_call", f"wrap_{i}") for i in range(layers)]

    return _agent(impl, middleware)


@dataclass(frozen=True)
class Scenario:
    """One benchmark: what it measures and how to prepare it for an implementation."""

    name: str
    title: str
    kind: str
    """``invoke``, ``ainvoke``, ``build`` (timed samples), ``depth`` or ``memory``."""
    impls: tuple[str, ...]
    prepare: Callable[[str], Prepared] | None = None
    layers: int | None = None
    """For wrap chains: the number of ``wrap_model_call`` layers."""


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

    return Prepared(build)


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
