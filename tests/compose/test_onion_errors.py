"""Errors, commands and retries through a stack of wrap layers: each noted and kept right.

Every layer gets the same check of what it returned. An error is noted once, as the layer's
that raised it, even when many layers share one function; the tail's error is noted as no
layer's; and only the last attempt's commands count.
"""

from __future__ import annotations

import asyncio
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
from funcware.compose.wraps.results import MODEL_CALLS
from funcware.hooks.middleware import hook_impls

Handler = Callable[[Any], Any]
AHandler = Callable[[Any], Awaitable[Any]]
RESPONSE = ModelResponse(result=[AIMessage("done")])


def plain(request: Any, handler: Handler) -> Any:
    return handler(request)


async def aplain(request: Any, handler: AHandler) -> Any:
    return await handler(request)


# --- behaviour: a stack of layers sharing one function, one of them raising ----------


def layers(flavour: str, count: int, raising: int | None, writer: int | None) -> list[Any]:
    """``count`` layers from one factory; ``raising`` raises; ``writer`` is checked
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
def test_commands_below_passing_layers_still_reach_the_outside(flavour: str) -> None:
    response, writes = run(flavour, layers(flavour, 6, raising=None, writer=4))
    assert response is RESPONSE
    assert writes == (("attempt", 1),)


def test_only_the_last_attempts_command_counts_through_a_retry() -> None:
    """A layer that calls its handler twice: the writer's second write wins alone."""

    async def twice(request: Any, handler: AHandler) -> Any:
        await handler(request)
        return await handler(request.override(messages=[*request.messages, HumanMessage("x")]))

    impls = [
        hook_impls(wrap_model_call(name="twice", writes=["handler.retry"])(twice))[
            "wrap_model_call"
        ]
    ]
    impls += layers("async", 3, raising=None, writer=2)[1:]
    _, writes = run("async", impls)
    assert writes == (("attempt", 2),)
