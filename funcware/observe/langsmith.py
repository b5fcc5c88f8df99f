"""Wrap-layer calls as LangChain runs, so LangSmith and every LangChain tracer see them.

When the callbacks of the run a wrap onion is called in carry a tracer (a langchain-core
``BaseTracer``: LangSmith's ``LangChainTracer`` when ``LANGSMITH_TRACING=true``, a
``ConsoleCallbackHandler``, ...), each wrap-layer call becomes a ``chain`` run, as in
LangChain 1.5: named ``"{middleware}.wrap_model_call"`` (``awrap_model_call`` in async
runs; ``wrap_tool_call`` likewise), a child of the run it is called in (the ``model`` or
``tools`` node, or the layer outside it), and the parent of what it calls (the layers
inside it, then the model's or the tool's own run). Its inputs are
``{"request": <the request's fields but runtime>}``, its outputs ``{"output": <result>}``,
both shaped first by the middleware's ``trace_policy`` (else the process default,
:func:`funcware.compose.steps.tracing.configure_trace_policy`), so ``omit_payload`` keeps the run
and its timing and drops the payload. Only tracers are told about these runs (other
callback handlers, such as langgraph's stream handlers, never see them). With no tracer
in the callbacks nothing is done.

The tool node runs a tool with its own config, so a tool's run nests under the innermost
tool layer through LangSmith's run context (as in LangChain); other tracers see it under
the ``tools`` node, beside the layer runs.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from langchain_core.runnables.config import (
    get_async_callback_manager_for_config,
    get_callback_manager_for_config,
    var_child_runnable_config,
)
from langchain_core.tracers.base import AsyncBaseTracer, BaseTracer
from langchain_core.tracers.langchain import LangChainTracer
from langsmith.run_helpers import _set_tracing_context, get_tracing_context

from funcware.compose.steps.tracing import resolve_trace_policy
from funcware.compose.stream.quiet import own_config, under_callbacks
from funcware.observe.observers import Layer, Observer

__all__ = ["RUNS", "LangChainRuns", "langchain_runs"]

_log = logging.getLogger(__name__)
_TRACERS = (BaseTracer, AsyncBaseTracer)


class LangChainRuns:
    """Marks an onion call as traced: the layer runner opens a run around each layer.

    It is an :class:`~funcware.observe.observers.Observer` (told nothing it needs) so the
    onion takes its observed path; the runs themselves are made by :meth:`call` and
    :meth:`acall`, which see the request, the result and the middleware.
    """

    def start_layer(self, layer: Layer) -> None:
        return None

    def end_layer(self, layer: Layer) -> None:
        return None

    def call(
        self,
        middleware: object,
        hook: str,
        func: Callable[[Any, Any], Any],
        request: Any,
        handler: Any,
    ) -> Any:
        """``func(request, handler)`` inside a run named ``"{middleware}.{hook}"``."""
        manager = get_callback_manager_for_config(own_config() or {})
        name = f"{getattr(middleware, 'name', type(middleware).__name__)}.{hook}"
        tracing = _tracers_only(manager)
        run = tracing.on_chain_start(None, _inputs(middleware, request), name=name)
        run.inheritable_handlers = manager.inheritable_handlers  # the inside keeps them all
        try:
            with under_callbacks(run.get_child()), _langsmith_parent(run):
                result = func(request, handler)
        except BaseException as exc:
            run.on_chain_error(exc)
            raise
        run.on_chain_end(_outputs(middleware, result))
        return result

    async def acall(
        self,
        middleware: object,
        hook: str,
        func: Callable[[Any, Any], Awaitable[Any]],
        request: Any,
        handler: Any,
    ) -> Any:
        """The async :meth:`call`; the run is named ``"{middleware}.a{hook}"``."""
        manager = get_async_callback_manager_for_config(own_config() or {})
        name = f"{getattr(middleware, 'name', type(middleware).__name__)}.a{hook}"
        tracing = _tracers_only(manager)
        run = await tracing.on_chain_start(None, _inputs(middleware, request), name=name)
        run.inheritable_handlers = manager.inheritable_handlers
        try:
            with under_callbacks(run.get_child()), _langsmith_parent(run):
                result = await func(request, handler)
        except BaseException as exc:
            await run.on_chain_error(exc)
            raise
        await run.on_chain_end(_outputs(middleware, result))
        return result


RUNS = LangChainRuns()
"""The observer that turns wrap-layer calls into LangChain runs."""
_RUNS: tuple[Observer, ...] = (RUNS,)


def langchain_runs() -> tuple[Observer, ...]:
    """``(LangChainRuns,)`` when the current run's callbacks carry a tracer, else ``()``."""
    config = var_child_runnable_config.get()
    if not config:
        return ()
    callbacks = config.get("callbacks")
    handlers = callbacks if isinstance(callbacks, list) else getattr(callbacks, "handlers", ())
    for handler in handlers:
        if isinstance(handler, _TRACERS):
            return _RUNS
    return ()


def _tracers_only(manager: Any) -> Any:
    tracing = manager.copy()
    tracing.handlers = [h for h in manager.handlers if isinstance(h, _TRACERS)]
    tracing.inheritable_handlers = [
        h for h in manager.inheritable_handlers if isinstance(h, _TRACERS)
    ]
    return tracing


@contextmanager
def _langsmith_parent(run: Any) -> Iterator[None]:
    """Within, LangSmith's current run is ``run``'s (when LangSmith traces), so a run
    started with an explicit config (the tool node's tool) still nests under the layer,
    as langchain-core does for its own runnables."""
    tracer = next((h for h in run.handlers if isinstance(h, LangChainTracer)), None)
    tree = tracer.run_map.get(str(run.run_id)) if tracer is not None else None
    if tree is None:
        yield
        return
    previous = get_tracing_context()["parent"]
    _set_tracing_context({"parent": tree})
    try:
        yield
    finally:
        _set_tracing_context({"parent": previous})


def _apply(middleware: object, field: str, value: Any) -> Any:
    policy = resolve_trace_policy(middleware)
    process = getattr(policy, field) if policy is not None else None
    if process is None:
        return value
    try:
        return process(value)
    except Exception as exc:  # fail closed, as LangSmith does: drop the payload, say why
        name = getattr(middleware, "name", type(middleware).__name__)
        _log.warning(
            "trace_policy.%s of middleware %r failed (%r); payload dropped", field, name, exc
        )
        return {}


def _inputs(middleware: object, request: Any) -> dict[str, Any]:
    fields = (
        {
            f.name: getattr(request, f.name)
            for f in dataclasses.fields(request)
            if f.name != "runtime"
        }
        if dataclasses.is_dataclass(request) and not isinstance(request, type)
        else request
    )
    inputs = _apply(middleware, "process_inputs", {"request": fields})
    return inputs if isinstance(inputs, dict) else {"input": inputs}


def _outputs(middleware: object, result: Any) -> dict[str, Any]:
    outputs = _apply(middleware, "process_outputs", result)
    return outputs if isinstance(outputs, dict) else {"output": outputs}
