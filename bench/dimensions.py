"""The dimensions users meet, each over a range: conversation length, number of tools,
concurrency, tool-loop length, build size (and deepagents' stack), chain depth.

Every scenario here runs on funcware, LangChain and (where it has a meaning) the
hand-written LangGraph floor, and is checked once before it is timed.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from fake_model import BenchChatModel, ConvertingChatModel, add, many_tools
from impls import FLOOR, FUNCWARE, LANGCHAIN, LIBRARIES, Api, build_floor, load_api
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from scenarios import Prepared, Scenario, _agent, mixed, noop

__all__ = ["DIMENSIONS"]

ALL = (FUNCWARE, LANGCHAIN, FLOOR)

CONVERSATION = (10, 100, 1000, 5000)
TOOLS = (1, 10, 100, 500)
CONCURRENCY = (1, 10, 100, 1000)
LOOPS = (1, 5, 20, 50)
BUILDS = (0, 1, 10, 50, 200)


def _typical(api: Api) -> list[Any]:
    """What a small real agent has: a ``before_model`` and a ``wrap_model_call``."""
    return [noop(api, "before_model", "trim"), noop(api, "wrap_model_call", "retry")]


def _hits(impl: str, per_library: int) -> int:
    return 0 if impl == FLOOR else per_library


# ---------------------------------------------------------------- conversation length


def _history(length: int) -> list[BaseMessage]:
    """``length - 1`` earlier turns (alternating) and the new question last."""
    turns: list[BaseMessage] = [
        HumanMessage(f"question {i}") if i % 2 == 0 else AIMessage(f"answer {i}")
        for i in range(length - 1)
    ]
    return [*turns, HumanMessage("What is 1 + 1?")]


def _conversation(length: int, checkpointed: bool) -> Callable[[str], Prepared]:
    def prepare(impl: str) -> Prepared:
        saver = None
        if checkpointed:
            from langgraph.checkpoint.memory import InMemorySaver

            saver = InMemorySaver()
        agent = _agent(impl, _typical, checkpointer=saver)
        history = _history(length)

        def inputs() -> dict[str, Any]:
            return {"messages": list(history)}

        if saver is None:
            return Prepared(agent, hits=_hits(impl, 2), inputs=inputs)

        def config() -> dict[str, Any]:
            return {"configurable": {"thread_id": uuid.uuid4().hex}}

        def cleanup(used: dict[str, Any] | None) -> None:
            assert used is not None and saver is not None
            saver.delete_thread(used["configurable"]["thread_id"])

        return Prepared(agent, hits=_hits(impl, 2), inputs=inputs, config=config, cleanup=cleanup)

    return prepare


# ---------------------------------------------------------------- number of tools


def _tools(count: int) -> Callable[[str], Prepared]:
    def prepare(impl: str) -> Prepared:
        model = ConvertingChatModel(tool_steps=1)
        agent = _agent(impl, _typical, model=model, tools=many_tools(count))
        # 2 model calls x 2 hooks; one tool result
        return Prepared(agent, hits=_hits(impl, 4), tool_results=1)

    return prepare


# ---------------------------------------------------------------- concurrency


def _concurrent(count: int) -> Callable[[str], Prepared]:
    def prepare(impl: str) -> Prepared:
        # sync node hooks inside ainvoke, as most middleware is written (each side runs
        # them off the event loop its own way: threads are counted), and an async wrap
        # (LangChain refuses a sync wrap_model_call inside ainvoke)
        def middleware(api: Api) -> list[Any]:
            return [
                noop(api, "before_model", "trim"),
                noop(api, "wrap_model_call", "retry", is_async=True),
                noop(api, "after_model", "audit"),
            ]

        agent = _agent(impl, middleware)
        return Prepared(agent, hits=_hits(impl, 3), concurrency=count)

    return prepare


# ---------------------------------------------------------------- tool-loop length


def _loop(steps: int) -> Callable[[str], Prepared]:
    def prepare(impl: str) -> Prepared:
        def middleware(api: Api) -> list[Any]:
            return [*_typical(api), noop(api, "wrap_tool_call", "audit")]

        agent = _agent(impl, middleware, tool_steps=steps)
        # (steps + 1) model calls x 2 hooks + steps tool calls x 1 wrap
        return Prepared(agent, hits=_hits(impl, 3 * steps + 2), tool_results=steps)

    return prepare


# ---------------------------------------------------------------- build time


def _build(count: int) -> Callable[[str], Prepared]:
    def prepare(impl: str) -> Prepared:
        model = BenchChatModel()
        if impl == FLOOR:
            return Prepared(lambda: build_floor(model, [add]))
        api = load_api(impl)
        middleware = mixed(api, count)

        def build() -> Any:
            return api.create_agent(model, [add], middleware=middleware)

        return Prepared(build, hits=count)

    return prepare


def _deep_agent(impl: str) -> Prepared:
    """deepagents' ``create_deep_agent`` (its whole middleware stack and the general-purpose
    subagent); on funcware, with deepagents' ``create_agent`` swapped for funcware's."""
    import deepagents
    import deepagents.graph
    import deepagents.middleware.subagents

    if impl == FUNCWARE:
        import funcware

        deepagents.graph.create_agent = funcware.create_agent  # type: ignore[assignment]
        deepagents.middleware.subagents.create_agent = funcware.create_agent  # type: ignore[assignment]
    model = BenchChatModel()

    def build() -> Any:
        return deepagents.create_deep_agent(model=model)

    return Prepared(build)


# ---------------------------------------------------------------- registry


def _scenarios() -> list[Scenario]:
    found: list[Scenario] = []
    for length in CONVERSATION:
        for checkpointed in (False, True):
            suffix = "_ckpt" if checkpointed else ""
            saver = ", InMemorySaver" if checkpointed else ""
            found.append(
                Scenario(
                    f"conv{length}{suffix}",
                    f"{length}-message conversation, 2 middleware{saver}",
                    "invoke",
                    ALL,
                    _conversation(length, checkpointed),
                    group="conversation",
                )
            )
    for count in TOOLS:
        found.append(
            Scenario(
                f"tools{count}",
                f"{count} tools converted by bind_tools, 1 tool step, 2 middleware",
                "invoke",
                ALL,
                _tools(count),
                group="tools",
            )
        )
    for count in CONCURRENCY:
        found.append(
            Scenario(
                f"concurrent{count}",
                f"{count} concurrent ainvoke, sync before/after_model + async wrap",
                "concurrent",
                ALL,
                _concurrent(count),
                group="concurrency",
            )
        )
    for steps in LOOPS:
        found.append(
            Scenario(
                f"loop{steps}",
                f"{steps}-step tool loop, 2 model + 1 tool middleware",
                "invoke",
                ALL,
                _loop(steps),
                group="tool loop",
            )
        )
    for count in BUILDS:
        found.append(
            Scenario(
                f"build_mw{count}",
                f"create_agent + compile, {count} mixed decorated middleware",
                "build",
                ALL,
                _build(count),
                group="build",
            )
        )
    found.append(
        Scenario(
            "build_deepagents",
            "deepagents create_deep_agent (its stack + a subagent)",
            "build",
            LIBRARIES,
            _deep_agent,
            group="build",
            requires="deepagents",
        )
    )
    return found


DIMENSIONS: list[Scenario] = _scenarios()
