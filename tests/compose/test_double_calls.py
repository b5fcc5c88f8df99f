"""A wrap layer that calls its handler again after it answered, and keeps the later answer.

It threw an answer away and paid twice: warned once per layer (what, which middleware and
hook, where, the fix), unless the middleware declared ``writes=["handler.retry"]`` or the
earlier call raised.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from funcware import (
    AgentMiddleware,
    DoubleCallWarning,
    ModelRequest,
    ModelResponse,
    compose,
    wrap_model_call,
    wrap_tool_call,
)

FLAVOURS = ["sync", "async"]


def _request() -> ModelRequest[Any]:
    return ModelRequest(model=None, messages=[HumanMessage("hi")])  # type: ignore[arg-type]


class Model:
    """A stub model handler that counts its calls and can fail the first."""

    def __init__(self, fail_first: bool = False) -> None:
        self.calls = 0
        self.fail_first = fail_first

    def answer(self, request: Any) -> ModelResponse[Any]:
        self.calls += 1
        if self.fail_first and self.calls == 1:
            raise ConnectionError("flaky")
        return ModelResponse(result=[AIMessage(f"answer {self.calls}")])


def _run_model(flavour: str, middleware: Any, model: Model, times: int = 1) -> list[Any]:
    onion = compose(*middleware) if isinstance(middleware, list) else compose(middleware)
    results = []
    for _ in range(times):
        if flavour == "sync":
            results.append(onion.wrap_model_call(_request(), model.answer))
        else:

            async def handler(request: Any) -> Any:
                return model.answer(request)

            results.append(asyncio.run(onion.awrap_model_call(_request(), handler)))
    return results


def _twice(flavour: str, **options: Any) -> Any:
    """A decorated layer that asks again and keeps the second answer."""
    if flavour == "sync":

        def ask_twice(request: Any, handler: Callable[[Any], Any]) -> Any:
            handler(request)
            return handler(request)

        return wrap_model_call(name="ask_twice", **options)(ask_twice)

    async def aask_twice(request: Any, handler: Any) -> Any:
        await handler(request)
        return await handler(request)

    return wrap_model_call(name="ask_twice", **options)(aask_twice)


class AskTwice(AgentMiddleware):
    """The class form of the same mistake."""

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        handler(request)
        return handler(request)

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        await handler(request)
        return await handler(request)


class RetriesOnPurpose(AskTwice):
    writes = ("handler.retry",)


def _caught(run: Callable[[], Any]) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run()
    return [w for w in caught if issubclass(w.category, DoubleCallWarning)]


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("form", ["decorated", "class"])
def test_a_second_call_after_an_answer_is_warned_once_per_layer(flavour: str, form: str) -> None:
    middleware = _twice(flavour) if form == "decorated" else AskTwice()
    model = Model()
    caught = _caught(lambda: _run_model(flavour, middleware, model, times=3))
    assert model.calls == 6
    assert len(caught) == 1
    message = str(caught[0].message)
    name = "ask_twice" if form == "decorated" else "AskTwice"
    assert f"middleware {name!r}, hook wrap_model_call" in message
    assert "test_double_calls.py:" in message  # where the layer is defined
    assert "thrown away" in message
    assert "writes=['handler.retry']" in message


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("form", ["decorated", "class"])
def test_a_declared_retry_is_not_warned(flavour: str, form: str) -> None:
    middleware = (
        _twice(flavour, writes=["handler.retry"]) if form == "decorated" else RetriesOnPurpose()
    )
    model = Model()
    results = _caught(lambda: _run_model(flavour, middleware, model))
    assert results == []
    assert model.calls == 2


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_retry_after_the_first_call_raised_is_not_warned(flavour: str) -> None:
    if flavour == "sync":

        def retry(request: Any, handler: Callable[[Any], Any]) -> Any:
            try:
                return handler(request)
            except ConnectionError:
                return handler(request)

        middleware = wrap_model_call(retry)
    else:

        async def aretry(request: Any, handler: Any) -> Any:
            try:
                return await handler(request)
            except ConnectionError:
                return await handler(request)

        middleware = wrap_model_call(aretry)
    model = Model(fail_first=True)
    answers: list[Any] = []
    assert _caught(lambda: answers.extend(_run_model(flavour, middleware, model))) == []
    assert answers[0].result[0].content == "answer 2"


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_keeping_the_first_answer_is_not_warned(flavour: str) -> None:
    """A second call whose answer is not the one returned threw nothing away."""
    if flavour == "sync":

        def keep_first(request: Any, handler: Callable[[Any], Any]) -> Any:
            first = handler(request)
            handler(request)
            return first

        middleware = wrap_model_call(keep_first)
    else:

        async def akeep_first(request: Any, handler: Any) -> Any:
            first = await handler(request)
            await handler(request)
            return first

        middleware = wrap_model_call(akeep_first)
    assert _caught(lambda: _run_model(flavour, middleware, Model())) == []


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_tool_layer_that_runs_the_tool_twice_is_warned(flavour: str) -> None:
    runs: list[int] = []

    def tool(request: Any) -> ToolMessage:
        runs.append(1)
        return ToolMessage(f"run {len(runs)}", tool_call_id="1")

    if flavour == "sync":

        def twice(request: Any, handler: Callable[[Any], Any]) -> Any:
            handler(request)
            return handler(request)

        layer = wrap_tool_call(name="tool_twice")(twice)
        onion = compose(layer)
        caught = _caught(lambda: onion.wrap_tool_call(object(), tool))  # type: ignore[arg-type]
    else:

        async def atwice(request: Any, handler: Any) -> Any:
            await handler(request)
            return await handler(request)

        async def atool(request: Any) -> ToolMessage:
            return tool(request)

        layer = wrap_tool_call(name="tool_twice")(atwice)
        onion = compose(layer)
        caught = _caught(
            lambda: asyncio.run(onion.awrap_tool_call(object(), atool))  # type: ignore[arg-type]
        )
    assert len(runs) == 2
    assert len(caught) == 1
    assert "middleware 'tool_twice', hook wrap_tool_call" in str(caught[0].message)
    assert "the tool was paid for 2 times" in str(caught[0].message)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_an_inner_layer_that_asks_twice_is_the_one_named(flavour: str) -> None:
    if flavour == "sync":

        def outer(request: Any, handler: Callable[[Any], Any]) -> Any:
            return handler(request)

    else:

        async def outer(request: Any, handler: Any) -> Any:
            return await handler(request)

    stack = [wrap_model_call(name="outer")(outer), _twice(flavour)]
    model = Model()
    caught = _caught(lambda: _run_model(flavour, stack, model))
    assert [str(w.message).split(", hook")[0] for w in caught] == ["middleware 'ask_twice'"]


def test_overlapping_attempts_are_not_warned() -> None:
    """Two calls started together (a race, a hedge): neither came after an answer."""

    async def race(request: Any, handler: Any) -> Any:
        _first, second = await asyncio.gather(handler(request), handler(request))
        return second

    model = Model()

    async def slow_model(request: Any) -> Any:
        await asyncio.sleep(0.01)  # both calls are under way before either answers
        return model.answer(request)

    onion = compose(wrap_model_call(race))
    caught = _caught(lambda: asyncio.run(onion.awrap_model_call(_request(), slow_model)))
    assert model.calls == 2
    assert caught == []
