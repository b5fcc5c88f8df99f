"""The observer seam: whether anything observes a call (an observer in its context, an
installed instrument, a LangChain tracer in its callbacks), and the watcher that runs it then
(:class:`funcware.compose.watching.Watcher`); docs/architecture.md tells the plain path."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_core.runnables.config import var_child_runnable_config
from langchain_core.tracers.base import AsyncBaseTracer, BaseTracer

if TYPE_CHECKING:
    from funcware.compose.watching import Watcher

__all__ = [
    "OBSERVERS",
    "install",
    "installed",
    "note_continued",
    "register_watcher",
    "tracer_in_callbacks",
    "uninstall",
    "watcher",
]

OBSERVERS: contextvars.ContextVar[tuple[Any, ...]] = contextvars.ContextVar(
    "funcware_observers", default=()
)
"""The observers active in this context (``funcware.observe.observing`` sets it)."""

_installed: tuple[Any, ...] = ()
_lock = threading.Lock()
_TRACERS = (BaseTracer, AsyncBaseTracer)


_watcher: list[Callable[[], Watcher]] = []


def register_watcher(load: Callable[[], Watcher]) -> None:
    """Set how to get the watcher (``load`` is called the first time something observes)."""
    _watcher[:] = [load]


def installed() -> tuple[Any, ...]:
    """The instruments installed in this process (empty: nothing is instrumented)."""
    return _installed


def install(instrument: object) -> None:
    """Install ``instrument`` for every run in the process (once; again is a no-op)."""
    global _installed  # process-wide, as OpenTelemetry instrumentors are
    with _lock:
        if instrument not in _installed:
            _installed = (*_installed, instrument)


def uninstall(instrument: object) -> None:
    """Remove ``instrument`` (not installed: a no-op). Runs already started keep it."""
    global _installed
    with _lock:
        _installed = tuple(i for i in _installed if i is not instrument)


def tracer_in_callbacks() -> bool:
    """Whether the current run's callbacks carry a LangChain tracer (LangSmith, ...)."""
    config = var_child_runnable_config.get()
    if not config:
        return False
    callbacks = config.get("callbacks")
    handlers = callbacks if isinstance(callbacks, list) else getattr(callbacks, "handlers", ())
    return any(isinstance(handler, _TRACERS) for handler in handlers)


def watcher() -> Watcher | None:
    """The watcher, when something observes the current call; ``None``: take the plain path."""
    if not (OBSERVERS.get() or _installed or tracer_in_callbacks()):
        return None
    if not _watcher:
        return None
    found = _watcher[0]()
    _watcher[:] = [lambda: found]
    return found


def note_continued(error: BaseException) -> None:
    """Tell the observers, if any, that the current layer's ``error`` was passed over."""
    observer = watcher()
    if observer is not None:
        observer.continued(error)
