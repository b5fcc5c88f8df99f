"""Layers proven to return their handler's result: what is proven, and that nothing changes.

The onion calls a proven layer with no frame of its own around it (``proofs.py``); these
tests pin which functions are proven, and that errors, commands and retries behave
exactly as for checked layers: an error is noted as the layer's that raised it even when
many layers share one function, and only the last attempt's commands count.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.types import Command
from support import funcware_notes

from funcware import (
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    dynamic_prompt,
    wrap_model_call,
)
from funcware.compose.steps.failures import passed_through
from funcware.compose.wraps.onion import build_async, build_sync
from funcware.compose.wraps.proofs import passes_through
from funcware.compose.wraps.results import MODEL_CALLS, TOOL_CALLS
from funcware.hooks.middleware import hook_impls

Handler = Callable[[Any], Any]
AHandler = Callable[[Any], Awaitable[Any]]
RESPONSE = ModelResponse(result=[AIMessage("done")])


def plain(request: Any, handler: Handler) -> Any:
    return handler(request)


async def aplain(request: Any, handler: AHandler) -> Any:
    return await handler(request)


async def alogged(request: Any, handler: AHandler) -> Any:
    seen = len(request.messages)
    response = await handler(request.override(messages=request.messages))
    if seen > 10:
        response = await handler(request)
    return response


async def apositional(request: Any, handler: AHandler, /) -> Any:
    return await handler(request)


async def aretry_without_try(request: Any, handler: AHandler) -> Any:
    first = await handler(request)
    if first.result[0].content == "again":
        return await handler(request)
    return first


class Methods:
    def wrap_model_call(self, request: Any, handler: Handler) -> Any:
        return handler(request)

    async def awrap_model_call(self, request: Any, handler: AHandler) -> Any:
        return await handler(request)


async def a_new_response_later(request: Any, handler: AHandler) -> Any:
    """Not proven itself (it builds a new response); a passing wrapper of it is."""
    response = await handler(request)
    return ModelResponse(result=response.result)


def factory() -> Callable[..., Any]:
    calls: list[int] = []

    async def counted(request: Any, handler: AHandler) -> Any:
        calls.append(1)
        return await handler(request)

    return counted


def passing_wrapper(func: Callable[..., Any]) -> Callable[..., Any]:
    """A ``functools.wraps`` wrapper that passes through: proven on its own code."""

    @functools.wraps(func)
    async def wrapper(request: Any, handler: AHandler) -> Any:
        return await handler(request)

    return wrapper


@dynamic_prompt
def prompt(request: Any) -> str:
    return "be brief"


@dynamic_prompt
async def aprompt(request: Any) -> str:
    return "be brief"


@pytest.mark.parametrize(
    ("func", "is_async"),
    [
        (hook_impls(prompt)["wrap_model_call"].sync, False),
        (hook_impls(aprompt)["wrap_model_call"].async_, True),
        (passing_wrapper(a_new_response_later), True),
        (plain, False),
        (aplain, True),
        (alogged, True),
        (aretry_without_try, True),
        (apositional, True),
        (Methods().wrap_model_call, False),
        (Methods().awrap_model_call, True),
        (factory(), True),
    ],
)
def test_layers_that_return_their_handlers_result_are_proven(func: Any, is_async: bool) -> None:
    assert passes_through(func, is_async=is_async)


async def a_try(request: Any, handler: AHandler) -> Any:
    try:
        return await handler(request)
    except ValueError:
        return RESPONSE


async def a_with(request: Any, handler: AHandler) -> Any:
    with open(__file__):
        return await handler(request)


async def a_new_response(request: Any, handler: AHandler) -> Any:
    response = await handler(request)
    return ModelResponse(result=response.result)


async def a_command(request: Any, handler: AHandler) -> Any:
    return ExtendedModelResponse(model_response=await handler(request), command=None)


async def a_passes_handler_on(request: Any, handler: AHandler) -> Any:
    results = await asyncio.gather(handler(request))
    return await handler(request) if results else None


async def a_rebinds(request: Any, handler: AHandler) -> Any:
    handler = aplain.__get__(handler)  # type: ignore[assignment]
    return await handler(request)


async def a_falls_off(request: Any, handler: AHandler) -> Any:
    if request.messages:
        return await handler(request)


async def a_rebinds_result(request: Any, handler: AHandler) -> Any:
    response = await handler(request)
    if not request.messages:
        response = RESPONSE
    return response


async def a_unawaited(request: Any, handler: AHandler) -> Any:
    pending = handler(request)
    return await pending


def s_returns_other(request: Any, handler: Handler) -> Any:
    handler(request)
    return RESPONSE


def decorated(func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    async def wrapper(request: Any, handler: AHandler) -> Any:
        return await func(request, lambda r: asyncio.sleep(0, RESPONSE))

    return wrapper


namespace: dict[str, Any] = {}
exec("async def no_source(request, handler):\n    return await handler(request)\n", namespace)


@pytest.mark.parametrize(
    ("func", "is_async"),
    [
        (a_try, True),
        (a_with, True),
        (a_new_response, True),
        (a_command, True),
        (a_passes_handler_on, True),
        (a_rebinds, True),
        (a_falls_off, True),
        (a_rebinds_result, True),
        (a_unawaited, True),
        (s_returns_other, False),
        (decorated(aplain), True),  # inspect finds aplain's source, not the wrapper's
        (namespace["no_source"], True),
        (aplain, False),  # the wrong flavour
        (functools.partial(aplain), True),
        (lambda request, handler: handler(request), False),
    ],
)
def test_anything_else_is_checked(func: Any, is_async: bool) -> None:
    assert not passes_through(func, is_async=is_async)


# --- behaviour: a stack of layers sharing one function, one of them raising ----------


def layers(flavour: str, count: int, raising: int | None, writer: int | None) -> list[Any]:
    """``count`` proven layers from one factory; ``raising`` raises; ``writer`` is checked
    and returns a command (``ExtendedModelResponse``)."""

    def make(index: int) -> Any:
        if index == writer:
            if flavour == "async":

                async def awriter(request: Any, handler: AHandler) -> Any:
                    response = await handler(request)
                    update = {"attempt": len(request.messages)}
                    return ExtendedModelResponse(
                        model_response=response, command=Command(update=update)
                    )

                return wrap_model_call(name=f"layer{index}")(awriter)

            def swriter(request: Any, handler: Handler) -> Any:
                response = handler(request)
                update = {"attempt": len(request.messages)}
                return ExtendedModelResponse(
                    model_response=response, command=Command(update=update)
                )

            return wrap_model_call(name=f"layer{index}")(swriter)
        if flavour == "async":

            async def alayer(request: Any, handler: AHandler) -> Any:
                if index == raising:
                    raise ValueError(f"layer {index} failed")
                return await handler(request)

            return wrap_model_call(name=f"layer{index}")(alayer)

        def slayer(request: Any, handler: Handler) -> Any:
            if index == raising:
                raise ValueError(f"layer {index} failed")
            return handler(request)

        return wrap_model_call(name=f"layer{index}")(slayer)

    return [hook_impls(make(i))["wrap_model_call"] for i in range(count)]


def run(flavour: str, impls: list[Any], tail: Callable[[Any], Any] | None = None) -> Any:
    request = ModelRequest(model=None, messages=[HumanMessage("hi")])  # type: ignore[arg-type]
    answer = tail or (lambda r: RESPONSE)
    if flavour == "sync":
        return build_sync(impls, MODEL_CALLS)(request, answer)

    async def atail(r: Any) -> Any:
        return answer(r)

    return asyncio.run(build_async(impls, MODEL_CALLS)(request, atail))


@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize("raising", [0, 1, 5, 11])
def test_an_error_is_noted_as_the_layers_that_raised_it(flavour: str, raising: int) -> None:
    impls = layers(flavour, 12, raising, writer=None)
    assert all(
        passes_through(impl.sync if flavour == "sync" else impl.async_, is_async=flavour == "async")
        for impl in impls
    )
    with pytest.raises(ValueError, match=f"layer {raising} failed") as info:
        run(flavour, impls)
    notes = funcware_notes(info.value)
    assert len(notes) == 1
    assert f"middleware 'layer{raising}', hook wrap_model_call" in notes[0]


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_dynamic_prompts_bad_value_is_noted_as_its_layers(flavour: str) -> None:
    if flavour == "sync":

        @dynamic_prompt
        def broken(request: Any) -> Any:
            return 42

        around: Callable[..., Any] = plain
    else:

        @dynamic_prompt
        async def broken(request: Any) -> Any:
            return 42

        around = aplain
    impls = [
        hook_impls(wrap_model_call(name=f"layer{i}")(around))["wrap_model_call"] for i in range(4)
    ]
    impls[2] = hook_impls(broken)["wrap_model_call"]
    assert passes_through(impls[2].sync or impls[2].async_, is_async=flavour == "async")
    with pytest.raises(TypeError, match="returned an int") as info:
        run(flavour, impls)
    notes = funcware_notes(info.value)
    assert len(notes) == 1
    assert "middleware 'broken', hook wrap_model_call" in notes[0]


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_an_error_below_a_checked_layer_is_noted_once_and_as_its_own(flavour: str) -> None:
    impls = layers(flavour, 8, raising=6, writer=3)
    with pytest.raises(ValueError) as info:
        run(flavour, impls)
    assert [n.split(", hook")[0] for n in funcware_notes(info.value)] == [
        "raised in middleware 'layer6'"
    ]


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_the_tails_error_is_noted_for_no_layer(flavour: str) -> None:
    def failing(r: Any) -> Any:
        with passed_through:  # as every tail does
            raise ConnectionError("model down")

    with pytest.raises(ConnectionError) as info:
        run(flavour, layers(flavour, 6, raising=None, writer=None), failing)
    assert funcware_notes(info.value) == []


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_commands_below_proven_layers_still_reach_the_outside(flavour: str) -> None:
    response, writes = run(flavour, layers(flavour, 6, raising=None, writer=4))
    assert response is RESPONSE
    assert writes == (("attempt", 1),)


def test_only_the_last_attempts_command_counts_through_a_proven_retry() -> None:
    """A proven layer that calls its handler twice: the writer's second write wins alone."""

    async def twice(request: Any, handler: AHandler) -> Any:
        await handler(request)
        return await handler(request.override(messages=[*request.messages, HumanMessage("x")]))

    assert passes_through(twice, is_async=True)
    impls = [hook_impls(wrap_model_call(name="twice")(twice))["wrap_model_call"]]
    impls += layers("async", 3, raising=None, writer=2)[1:]
    _, writes = run("async", impls)
    assert writes == (("attempt", 2),)


@pytest.mark.parametrize("inner", [aplain, a_try])
def test_a_proven_layer_is_called_with_no_frame_of_the_onions(inner: Any) -> None:
    """The handler outside a proven layer calls it directly; outside a checked one it is a
    coroutine of the onion's own, which checks what the layer returns."""
    seen: list[Any] = []

    async def outer(request: Any, handler: AHandler) -> Any:
        seen.append(handler)
        return await handler(request)

    impls = [
        hook_impls(wrap_model_call(name="outer")(outer))["wrap_model_call"],
        hook_impls(wrap_model_call(name="inner")(inner))["wrap_model_call"],
    ]
    response, _ = run("async", impls)
    assert response is RESPONSE
    assert inspect.iscoroutinefunction(seen[0]) is (inner is a_try)


def test_tool_onions_check_every_layer() -> None:
    """Tool tails may return what a layer must check (a Command), so no proofs there."""
    assert MODEL_CALLS.proves and not TOOL_CALLS.proves
