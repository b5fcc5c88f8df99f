"""Deep onions at the default recursion limit (480 layers, sync or async), and the chain
built once.

The depth checks run in a fresh interpreter (pytest's own frames would eat into the
default limit of 1000). The rest checks what reusing one chain of handlers per run
must not change: no writes leak from one call into the next, retries keep only the
last attempt, overlapping attempts of one handler do not mix, concurrent calls stay
apart.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.types import Command

from funcware import (
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    compose,
    wrap_model_call,
)

DEPTH_SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from langchain_core.messages import HumanMessage
    from funcware import create_agent, wrap_model_call
    from funcware.testing import ScriptedChatModel

    layers, flavour = int(sys.argv[1]), sys.argv[2]
    assert sys.getrecursionlimit() == 1000
    ran = []

    def layer(i):
        if flavour == "async":
            async def wrap(request, handler):
                ran.append(i)
                return await handler(request)
        else:
            def wrap(request, handler):
                ran.append(i)
                return handler(request)
        return wrap_model_call(name=f"layer_{i}")(wrap)

    agent = create_agent(
        ScriptedChatModel(responses=["done"]), middleware=[layer(i) for i in range(layers)]
    )
    inputs = {"messages": [HumanMessage("hi")]}
    if flavour == "async":
        result = asyncio.run(agent.ainvoke(inputs))
    else:
        result = agent.invoke(inputs)
    assert result["messages"][-1].content == "done", result["messages"][-1]
    assert ran == list(range(layers)), (len(ran), ran[:3])
    print("ok", layers)
    """
)


def _run_depth(layers: int, flavour: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", DEPTH_SCRIPT, str(layers), flavour],
        capture_output=True,
        text=True,
        timeout=240,
    )


# Python 3.10 counts an awaiting coroutine's C frames against the limit too: 450 there.
ASYNC_LAYERS = 480 if sys.version_info >= (3, 11) else 450


@pytest.mark.parametrize(("layers", "flavour"), [(ASYNC_LAYERS, "async"), (480, "sync")])
def test_deep_onions_run_at_the_default_recursion_limit(layers: int, flavour: str) -> None:
    done = _run_depth(layers, flavour)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == f"ok {layers}"


def test_a_too_deep_sync_onion_fails_with_recursion_error_not_silently() -> None:
    done = _run_depth(3_000, "sync")
    assert done.returncode != 0
    assert "RecursionError" in done.stderr


# ------------------------------------------------------------------ chain reuse


def _request(text: str = "hi") -> ModelRequest[Any]:
    return ModelRequest(model=None, messages=[HumanMessage(text)])  # type: ignore[arg-type]


def _answer(request: ModelRequest[Any]) -> ModelResponse[Any]:
    return ModelResponse(result=[AIMessage(f"answer to {request.messages[-1].content}")])


def _writer(key: str, value: Callable[[ModelRequest[Any]], Any]) -> Any:
    @wrap_model_call(name=f"writes_{key}")
    def write(request: ModelRequest[Any], handler: Callable[..., Any]) -> Any:
        return ExtendedModelResponse(handler(request), Command(update={key: value(request)}))

    return write


def _update(result: Any) -> dict[str, Any]:
    assert isinstance(result, ExtendedModelResponse), result
    assert result.command is not None
    return dict(result.command.update)


def test_no_writes_leak_from_one_call_into_the_next() -> None:
    calls = [0]

    @wrap_model_call(name="cache")
    def cache(request: ModelRequest[Any], handler: Callable[..., Any]) -> Any:
        calls[0] += 1
        if calls[0] > 1:  # a cache hit: the layers inside do not run
            return ModelResponse(result=[AIMessage("cached")])
        return handler(request)

    stack = compose(_writer("outer", lambda r: 1), cache, _writer("inner", lambda r: 2))
    first = _update(stack.wrap_model_call(_request(), _answer))
    assert first == {"inner": 2, "outer": 1}
    second = _update(stack.wrap_model_call(_request(), _answer))
    assert second == {"outer": 1}  # not the inner write of the first call


def test_a_retry_keeps_only_the_last_attempt_every_call() -> None:
    attempt = [0]

    @wrap_model_call(name="retry")
    def retry(request: ModelRequest[Any], handler: Callable[..., Any]) -> Any:
        try:
            return handler(request)
        except ValueError:
            return handler(request)

    @wrap_model_call(name="flaky")
    def flaky(request: ModelRequest[Any], handler: Callable[..., Any]) -> Any:
        attempt[0] += 1
        response = handler(request)
        if attempt[0] % 2:
            raise ValueError("first attempt fails after its inner layers wrote")
        return response

    stack = compose(retry, flaky, _writer("n", lambda r: attempt[0]))
    for call in range(3):
        assert _update(stack.wrap_model_call(_request(), _answer)) == {"n": 2 * call + 2}


async def test_overlapping_attempts_of_one_handler_do_not_mix() -> None:
    @wrap_model_call(name="race")
    async def race(request: ModelRequest[Any], handler: Callable[..., Awaitable[Any]]) -> Any:
        slow, _fast = await asyncio.gather(
            handler(request.override(messages=[HumanMessage("slow")])),
            handler(request.override(messages=[HumanMessage("fast")])),
        )
        return slow

    fast_done = asyncio.Event()

    @wrap_model_call(name="tag")
    async def tag(request: ModelRequest[Any], handler: Callable[..., Awaitable[Any]]) -> Any:
        text = request.messages[-1].content
        response = await handler(request)
        if text == "slow":  # its inner layers have written; finish last, so it wins
            await fast_done.wait()
        else:
            fast_done.set()
        return ExtendedModelResponse(response, Command(update={"tag": text}))

    async def answer(request: ModelRequest[Any]) -> ModelResponse[Any]:
        return _answer(request)

    stack = compose(race, tag, _writer("seen", lambda r: r.messages[-1].content))
    for _ in range(3):  # later calls run on a fresh chain, not the shared one
        fast_done.clear()
        result = await stack.awrap_model_call(_request(), answer)
        assert _update(result) == {"seen": "slow", "tag": "slow"}
        assert isinstance(result, ExtendedModelResponse)
        assert result.model_response.result[0].content == "answer to slow"


async def test_concurrent_calls_of_one_onion_stay_apart() -> None:
    @wrap_model_call(name="pause")
    async def pause(request: ModelRequest[Any], handler: Callable[..., Awaitable[Any]]) -> Any:
        await asyncio.sleep(0)
        return await handler(request)

    async def answer(request: ModelRequest[Any]) -> ModelResponse[Any]:
        await asyncio.sleep(0)
        return _answer(request)

    stack = compose(
        _writer("outer", lambda r: r.messages[-1].content),
        pause,
        _writer("inner", lambda r: r.messages[-1].content),
    )
    results = await asyncio.gather(
        *(stack.awrap_model_call(_request(str(i)), answer) for i in range(50))
    )
    for i, result in enumerate(results):
        assert _update(result) == {"inner": str(i), "outer": str(i)}


async def test_the_attempt_that_finishes_last_wins_also_when_it_started_second() -> None:
    @wrap_model_call(name="race")
    async def race(request: ModelRequest[Any], handler: Callable[..., Awaitable[Any]]) -> Any:
        _first, second = await asyncio.gather(
            handler(request.override(messages=[HumanMessage("first")])),
            handler(request.override(messages=[HumanMessage("second")])),
        )
        return second

    first_done = asyncio.Event()

    @wrap_model_call(name="tag")
    async def tag(request: ModelRequest[Any], handler: Callable[..., Awaitable[Any]]) -> Any:
        text = request.messages[-1].content
        response = await handler(request)
        if text == "second":  # started while "first" ran; finishes after it
            await first_done.wait()
        else:
            first_done.set()
        return ExtendedModelResponse(response, Command(update={"tag": text}))

    async def answer(request: ModelRequest[Any]) -> ModelResponse[Any]:
        await asyncio.sleep(0)
        return _answer(request)

    stack = compose(race, tag, _writer("seen", lambda r: r.messages[-1].content))
    for _ in range(3):
        first_done.clear()
        result = await stack.awrap_model_call(_request(), answer)
        assert _update(result) == {"seen": "second", "tag": "second"}
