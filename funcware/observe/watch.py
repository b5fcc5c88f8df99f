"""The watcher: how the core runs a call while something observes it.

Registered on the core's observer seam (:mod:`funcware.compose.observing`); the core asks
for it once at the entry of each agent run, node, model call and tool call, and only when
something observes that call. The observers it tells are of one protocol
(:class:`~funcware.observe.observers.Observer`): the run record, OpenTelemetry's
instrument and LangChain tracers (LangSmith) alike.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, TypeVar

from funcware.compose.observing import installed, tracer_in_callbacks
from funcware.observe.calls import acall, agent_run, call
from funcware.observe.langsmith import RUNS
from funcware.observe.layers import failure_outcome, node_ended, observed_layer
from funcware.observe.nesting import inside_an_agent_run, nested_run
from funcware.observe.observers import Observer, active, end, note_continued, start

if TYPE_CHECKING:
    from funcware.hooks.middleware import HookImpl

__all__ = ["WATCH", "Watch"]

T = TypeVar("T")


def _layer_observers() -> tuple[Observer, ...]:
    """Who hears about a wrap layer now: the active observers, and LangChain's tracers."""
    observers = active()
    return (*observers, RUNS) if tracer_in_callbacks() else observers


@contextmanager
def _node_layer(observers: tuple[Observer, ...], impl: HookImpl) -> Iterator[Callable[[Any], None]]:
    """One node hook as a layer the observers see: started here, ended with what the
    block passes to the function it gets, or with the failure it raises."""
    started = start(observers, impl.middleware.name, impl.hook, impl.where)

    def ended(result: Any) -> None:
        outcome, wrote, jump_to = node_ended(result)
        end(observers, started, outcome, wrote=wrote, jump_to=jump_to)

    try:
        yield ended
    except BaseException as exc:
        end(observers, started, failure_outcome(exc), error=exc)
        raise


@contextmanager
def _both(outer: AbstractContextManager[Any], inner: AbstractContextManager[Any]) -> Iterator[None]:
    with outer, inner:
        yield


class Watch:
    """Runs agent runs, node hooks, model and tool calls and wrap layers, observed."""

    def run(self, graph: Any, input: Any, config: Any) -> AbstractContextManager[Any]:
        instruments = installed()
        # The run record and other layer observers; an instrument has its agent-run span.
        observers = tuple(o for o in active() if o not in instruments)
        nested = nested_run(observers, graph) if observers and inside_an_agent_run() else None
        if not instruments:
            return nested or nullcontext()
        name = (graph.config or {}).get("metadata", {}).get("lc_agent_name")
        instrumented = agent_run(
            instruments, name if isinstance(name, str) else None, input, config
        )
        return instrumented if nested is None else _both(nested, instrumented)

    def node(self, impl: HookImpl, run: Callable[[], T]) -> T:
        observers = active()
        if not observers:
            return run()
        with _node_layer(observers, impl) as ended:
            result = run()
            ended(result)
        return result

    async def anode(self, impl: HookImpl, run: Callable[[], Awaitable[T]]) -> T:
        observers = active()
        if not observers:
            return await run()
        with _node_layer(observers, impl) as ended:
            result = await run()
            ended(result)
        return result

    def model(self, request: Any, run: Callable[[Any], T]) -> T:
        instruments = installed()
        return call(instruments, "model", None, request, run) if instruments else run(request)

    async def amodel(self, request: Any, run: Callable[[Any], Awaitable[T]]) -> T:
        instruments = installed()
        if instruments:
            return await acall(instruments, "model", None, request, run)
        return await run(request)

    def tool(self, name: str, request: Any, run: Callable[[Any], T]) -> T:
        instruments = installed()
        return call(instruments, "tool", name, request, run) if instruments else run(request)

    async def atool(self, name: str, request: Any, run: Callable[[Any], Awaitable[T]]) -> T:
        instruments = installed()
        if instruments:
            return await acall(instruments, "tool", name, request, run)
        return await run(request)

    def layer(self, impl: HookImpl, func: Callable[..., Any], is_async: bool) -> Callable[..., Any]:
        return observed_layer(impl, func, is_async, _layer_observers)

    def continued(self, error: BaseException) -> None:
        note_continued(error)


WATCH = Watch()
"""The one watcher (what the core's ``register_watcher`` is given)."""
