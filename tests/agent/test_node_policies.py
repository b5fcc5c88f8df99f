"""LangGraph's own node policies on an agent's nodes (``create_agent(node_policies=...)``):
retries of a hook, the model and the tools, agent-wide defaults a node's own policy beats,
cached hook results, an error handler, run and idle timeouts refreshed by
``runtime.heartbeat()``; sync, async and streamed, with a checkpointer."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import pytest
from harness import Driver
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.cache.memory import InMemoryCache
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.errors import NodeError, NodeTimeoutError
from langgraph.types import CachePolicy, Command, RetryPolicy, TimeoutPolicy

from funcware import before_model, create_agent
from funcware.testing import ScriptedChatModel

FAST = {"initial_interval": 0.001, "jitter": False}


def question() -> dict[str, Any]:
    return {"messages": [HumanMessage("hi")]}


def flaky(failures: int) -> Any:
    tries: list[int] = []

    @before_model
    def fetch_profile(state: Any) -> None:
        tries.append(1)
        if len(tries) <= failures:
            raise ConnectionError("profile service blipped")

    fetch_profile.tries = tries  # type: ignore[attr-defined]
    return fetch_profile


def run(driver: Driver, agent: Any, thread: dict[str, Any] | None, streamed: bool) -> Any:
    if streamed:
        driver.stream(agent, question(), thread)
    else:
        driver.invoke(agent, question(), thread)
    return driver.get_state(agent, thread).values if thread else None


@pytest.mark.parametrize("checkpointer", ["memory", "sqlite"], indirect=True)
@pytest.mark.parametrize("streamed", [False, True], ids=["invoke", "stream"])
def test_a_hook_named_by_its_middleware_is_retried(
    driver: Driver, checkpointer: BaseCheckpointSaver[Any], thread: dict[str, Any], streamed: bool
) -> None:
    hook = flaky(failures=2)
    agent = create_agent(
        ScriptedChatModel(responses=["ok"]),
        middleware=[hook],
        checkpointer=checkpointer,
        node_policies={"fetch_profile": {"retry_policy": RetryPolicy(max_attempts=3, **FAST)}},
    )
    values = run(driver, agent, thread, streamed)
    assert len(hook.tries) == 3 and values["messages"][-1].content == "ok"


def test_the_model_node_is_retried(driver: Driver) -> None:
    model = ScriptedChatModel(responses=[ConnectionError("provider down"), AIMessage("ok")])
    agent = create_agent(
        model, node_policies={"model": {"retry_policy": RetryPolicy(max_attempts=2, **FAST)}}
    )
    assert driver.invoke(agent, question())["messages"][-1].content == "ok"


def test_the_tools_node_is_retried(driver: Driver) -> None:
    tries: list[int] = []

    def lookup(city: str) -> str:
        """Look up the weather."""
        tries.append(1)
        if len(tries) == 1:
            raise ConnectionError("weather service down")
        return "sunny"

    call = {"name": "lookup", "args": {"city": "Paris"}, "id": "call-1"}
    model = ScriptedChatModel(responses=[AIMessage("", tool_calls=[call]), "It is sunny."])
    retry = RetryPolicy(max_attempts=2, retry_on=ConnectionError, **FAST)
    agent = create_agent(model, [lookup], node_policies={"tools": {"retry_policy": retry}})
    # A tool error becomes an error ToolMessage unless the tool node lets it through.
    result = driver.invoke(agent, question())
    assert result["messages"][-1].content == "It is sunny."


def test_defaults_apply_to_every_node_and_a_nodes_own_policy_wins(driver: Driver) -> None:
    defaults = {"retry_policy": RetryPolicy(max_attempts=3, **FAST)}
    hook = flaky(failures=2)
    agent = create_agent(
        ScriptedChatModel(responses=["ok"]), middleware=[hook], node_policies={"*": defaults}
    )
    assert driver.invoke(agent, question())["messages"][-1].content == "ok"
    assert len(hook.tries) == 3

    hook = flaky(failures=2)
    agent = create_agent(
        ScriptedChatModel(responses=["ok"]),
        middleware=[hook],
        node_policies={"*": defaults, "fetch_profile.before_model": {"retry_policy": []}},
    )
    with pytest.raises(ConnectionError):
        driver.invoke(agent, question())
    assert len(hook.tries) == 1


def _text(state: Any) -> str:
    return repr([m.content for m in state["messages"]])


def test_a_cached_hook_runs_once_for_the_same_state(driver: Driver) -> None:
    ran: list[int] = []

    @before_model
    def expensive(state: Any) -> None:
        ran.append(1)

    agent = create_agent(
        ScriptedChatModel(responses=["ok", "ok"]),
        middleware=[expensive],
        cache=InMemoryCache(),
        # Keyed by the conversation's text: each run gives its messages fresh ids.
        node_policies={"expensive": {"cache_policy": CachePolicy(key_func=_text, ttl=60)}},
    )
    driver.invoke(agent, question())
    driver.invoke(agent, question())
    assert len(ran) == 1


def test_an_error_handler_recovers_and_sends_the_run_on(driver: Driver) -> None:
    @before_model
    def broken(state: Any) -> None:
        raise RuntimeError("profile store offline")

    def recover(state: Any, error: NodeError) -> Command[Any]:
        note = AIMessage(f"{error.node} failed: {error.error}")
        return Command(update={"messages": [note]}, goto="model")

    agent = create_agent(
        ScriptedChatModel(responses=["ok"]),
        middleware=[broken],
        node_policies={"broken": {"error_handler": recover}},
    )
    messages = driver.invoke(agent, question())["messages"]
    assert [m.content for m in messages] == [
        "hi",
        "broken.before_model failed: profile store offline",
        "ok",
    ]


def slow_hook(beats: int, then: float) -> Any:
    @before_model
    async def crawl(state: Any, runtime: Any) -> None:
        for _ in range(beats):
            await asyncio.sleep(0.03)
            runtime.heartbeat()
        await asyncio.sleep(then)

    return crawl


def test_an_idle_timeout_is_kept_alive_by_heartbeats_and_fires_without() -> None:
    # langgraph runs node timeouts only in async runs (the sync case is the next test).
    driver = Driver("async", asyncio.new_event_loop())
    idle = {"timeout": TimeoutPolicy(idle_timeout=0.2, refresh_on="heartbeat")}
    alive = create_agent(
        ScriptedChatModel(responses=["ok"]),
        middleware=[slow_hook(beats=10, then=0)],
        node_policies={"crawl": idle},
    )
    assert driver.invoke(alive, question())["messages"][-1].content == "ok"
    stuck = create_agent(
        ScriptedChatModel(responses=["ok"]),
        middleware=[slow_hook(beats=1, then=2)],
        node_policies={"crawl": idle},
    )
    with pytest.raises(NodeTimeoutError, match=r"'crawl\.before_model' exceeded its idle timeout"):
        driver.invoke(stuck, question())
    assert driver.loop is not None
    driver.loop.close()


def test_a_sync_run_of_an_agent_with_a_node_timeout_is_refused_by_langgraph() -> None:
    agent = create_agent(
        ScriptedChatModel(responses=["ok"]),
        middleware=[slow_hook(beats=0, then=0)],
        node_policies={"crawl": {"timeout": 5}},
    )
    with pytest.raises(ValueError, match=r"Node timeouts are only supported for async nodes"):
        agent.invoke(question())


def test_unknown_nodes_and_keywords_are_refused_with_the_agents_nodes() -> None:
    hook = flaky(failures=0)
    model = ScriptedChatModel(responses=["ok"])
    with pytest.raises(ValueError, match=r"names 'fetch_profil', .* Did you mean 'fetch_profile'"):
        create_agent(model, middleware=[hook], node_policies={"fetch_profil": {"timeout": 1}})
    with pytest.raises(TypeError, match=r"sets retries; a node policy takes langgraph add_node's"):
        create_agent(model, middleware=[hook], node_policies={"model": {"retries": 3}})
    with pytest.raises(ValueError, match=r"names 'tools', but this agent has no tools node"):
        create_agent(model, node_policies={"tools": {"timeout": 1}})


def test_an_agent_without_policies_gives_langgraph_none() -> None:
    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[flaky(failures=0)])
    for spec in agent.builder.nodes.values():
        assert spec.retry_policy is None and spec.cache_policy is None
        assert spec.timeout is None and spec.error_handler_node is None


def test_a_hook_carries_its_own_policy_and_the_agents_wins_a_keyword(driver: Driver) -> None:
    tries: list[int] = []

    @before_model(node_policy={"retry_policy": RetryPolicy(max_attempts=3, **FAST)})
    def fetch(state: Any) -> None:
        tries.append(1)
        if len(tries) < 3:
            raise ConnectionError("blip")

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[fetch])
    assert driver.invoke(agent, question())["messages"][-1].content == "ok"
    assert len(tries) == 3

    tries.clear()
    agent = create_agent(
        ScriptedChatModel(responses=["ok"]),
        middleware=[fetch],
        node_policies={"fetch": {"retry_policy": []}},
    )
    with pytest.raises(ConnectionError):
        driver.invoke(agent, question())
    assert len(tries) == 1


def test_a_class_sets_the_policy_of_each_of_its_node_hooks() -> None:
    from funcware import AgentMiddleware

    retry = RetryPolicy(max_attempts=2)

    class Audit(AgentMiddleware):
        node_policy: ClassVar[dict[str, Any]] = {"retry_policy": retry}

        def before_model(self, state: Any, runtime: Any) -> None:
            return None

        def after_model(self, state: Any, runtime: Any) -> None:
            return None

    agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[Audit()])
    assert agent.builder.nodes["Audit.before_model"].retry_policy is retry
    assert agent.builder.nodes["Audit.after_model"].retry_policy is retry
    assert agent.builder.nodes["model"].retry_policy is None


def test_the_option_is_checked_where_it_is_given() -> None:
    with pytest.raises(TypeError, match=r"node_policy= sets retries; a node policy takes"):
        before_model(node_policy={"retries": 3})(lambda state: None)
    from funcware import wrap_model_call

    with pytest.raises(TypeError, match=r"does not take node_policy="):
        wrap_model_call(node_policy={})(lambda request, handler: handler(request))
