"""Agent runs, model calls and tool calls, as a process-wide instrument sees them.

An :class:`Instrument` (the OpenTelemetry one, :func:`funcware.observe.instrument`) is
installed for the whole process with :func:`install`. Nothing is installed by default:
:func:`installed` is an empty tuple and the runners skip every call below, so a run costs
what it cost before. While one is installed, each agent run tells it when the run, each
model call and each tool execution starts and ends (:class:`Call`), and makes it an active
layer observer (:mod:`.observers`) for the run, so it also sees every hook and wrap layer.
A call starts and ends in the context that runs it, inside the layer that called it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from funcware.compose.observing import install, installed, uninstall
from funcware.observe.observers import Layer, active, observing

__all__ = [
    "Call",
    "CallKind",
    "Instrument",
    "acall",
    "agent_run",
    "call",
    "install",
    "installed",
    "uninstall",
]

CallKind = Literal["agent", "model", "tool"]
T = TypeVar("T")


@dataclass(eq=False)
class Call:
    """One agent run, model call or tool execution. Instruments read it; runners write it.

    ``request`` is what the call was given: the agent's input (agent), the
    ``ModelRequest`` (model) or the ``ToolCallRequest`` (tool). ``result`` and ``error``
    are set when it ends: the last stream chunk is not kept for an agent run (``None``),
    the ``AIMessage`` of a model call, the ``ToolMessage`` or ``Command`` of a tool.
    """

    kind: CallKind
    name: str | None
    """The agent's name (``create_agent(name=...)``), else ``None``; the tool's name."""
    request: Any
    config: Any = None
    """The agent run's ``RunnableConfig`` (agent runs only)."""
    result: Any = None
    error: BaseException | None = None
    data: dict[str, Any] = field(default_factory=dict)
    """Scratch space for instruments, keyed by the instrument's own name."""


class Instrument(Protocol):
    """Told about agent runs, model and tool calls (and, during runs, every layer)."""

    def start_call(self, call: Call) -> None: ...

    def end_call(self, call: Call) -> None: ...

    def start_layer(self, layer: Layer) -> None: ...

    def end_layer(self, layer: Layer) -> None: ...


def _start(instruments: tuple[Instrument, ...], call: Call) -> None:
    for instrument in instruments:
        instrument.start_call(call)


def _end(instruments: tuple[Instrument, ...], call: Call) -> None:
    for instrument in reversed(instruments):
        instrument.end_call(call)


@contextmanager
def agent_run(
    instruments: tuple[Instrument, ...], name: str | None, input: Any, config: Any
) -> Iterator[Call]:
    """One agent run: told to ``instruments``, which also observe its layers meanwhile."""
    run = Call("agent", name, input, config)
    stack = ExitStack()
    observing_now = active()
    for instrument in instruments:
        if instrument not in observing_now:  # a sub-agent's run: already observed
            stack.enter_context(observing(instrument))
    _start(instruments, run)
    try:
        yield run
    except GeneratorExit:  # the caller stopped reading the stream: not a failure
        raise
    except BaseException as exc:
        run.error = exc
        raise
    finally:
        try:
            _end(instruments, run)
        finally:  # an instrument that fails to end the run must not stay observing
            with suppress(ValueError):  # an abandoned stream closed from another context
                stack.close()


def call(
    instruments: tuple[Instrument, ...],
    kind: CallKind,
    name: str | None,
    request: Any,
    run: Callable[[Any], T],
) -> T:
    """``run(request)`` as a model or tool call told to ``instruments``."""
    with _told(instruments, Call(kind, name, request)) as record:
        result = record.result = run(request)
    return result


async def acall(
    instruments: tuple[Instrument, ...],
    kind: CallKind,
    name: str | None,
    request: Any,
    run: Callable[[Any], Awaitable[T]],
) -> T:
    """The async :func:`call`."""
    with _told(instruments, Call(kind, name, request)) as record:
        result = record.result = await run(request)
    return result


@contextmanager
def _told(instruments: tuple[Instrument, ...], record: Call) -> Iterator[Call]:
    """A model or tool call told to ``instruments``: started, then ended with the result
    the block sets on ``record``, or the error it raises."""
    _start(instruments, record)
    try:
        yield record
    except BaseException as exc:
        record.error = exc
        raise
    finally:
        _end(instruments, record)
