"""Deadlines, failure policies and always-run marks: a hook's callables wrapped once, at build.

A hook opts in with ``timeout=`` (seconds; a decorator keyword or ``hook_config``),
``always=True`` (``after_agent`` only) or its middleware's ``on_error = "continue"``.
:func:`apply_policies` wraps the callables of a :class:`HookImpl` that uses any of them;
a hook that uses none is returned as it is, so it costs nothing per call.

- A deadline covers the hook; for a wrap hook, the layer and everything inside it. When it
  passes, :class:`HookTimeoutError` is raised. An async hook is cancelled. A sync hook runs
  on a daemon thread of its own: the run stops waiting for it at the deadline, while the
  thread runs on until the function returns (Python cannot stop a thread); its result is
  then discarded, a wrap layer's later calls of its handler raise ``HookTimeoutError``
  (no model or tool call starts after the deadline), and the thread does not keep the
  process from exiting.
- ``on_error="continue"``: an exception from the hook is logged on the ``funcware`` logger
  and the run goes on as if a node hook had returned ``None`` or the wrap layer were absent.
  langgraph's control flow (``GraphBubbleUp``: interrupts, parent commands) and anything
  that is not an ``Exception`` (cancellation, ``KeyboardInterrupt``) always propagates.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import logging
import math
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from langgraph.errors import GraphBubbleUp

from funcware.compose.observing import note_continued
from funcware.errors import HookTimeoutError
from funcware.hooks.middleware import AgentMiddleware
from funcware.hooks.options import Context, OnError

if TYPE_CHECKING:
    from funcware.hooks.middleware import HookImpl

__all__ = [
    "ALWAYS_ATTR",
    "ON_ERROR_VALUES",
    "RUN_RECORD",
    "TIMEOUT_ATTR",
    "RunRecord",
    "apply_policies",
    "check_always",
    "check_on_error",
    "check_timeout",
    "resolve",
]

ON_ERROR_VALUES: tuple[OnError, ...] = ("raise", "continue")
TIMEOUT_ATTR = "__funcware_timeout__"
"""Set on a hook method (or the user's function) by ``timeout=``: the deadline in seconds."""
ALWAYS_ATTR = "__funcware_always__"
"""Set on an ``after_agent`` hook method by ``always=True``."""

logger = logging.getLogger("funcware")


def check_timeout(value: object, source: str) -> float | None:
    """``value`` as a deadline in seconds (``None``: no deadline), or a clear error."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"{source} got timeout={value!r} ({type(value).__name__}); give a number of "
            "seconds greater than 0 (e.g. timeout=2.5), or None for no deadline."
        )
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(
            f"{source} got timeout={value!r}; a deadline is a finite number of seconds "
            "greater than 0 (e.g. timeout=2.5), or None for no deadline."
        )
    return float(value)


def check_on_error(value: object, source: str) -> OnError:
    """``value`` if it is ``"raise"`` or ``"continue"``, else a clear error."""
    if value in ON_ERROR_VALUES:
        return value
    raise ValueError(
        f"{source} got on_error={value!r}; use 'raise' (the default: the run fails) or "
        "'continue' (the error is logged and the run goes on without this middleware)."
    )


def _option(funcs: tuple[Callable[..., Any] | None, ...], attr: str) -> Any:
    """``attr`` as set on a hook method, or on the method an adapter wraps."""
    for func in funcs:
        for target in (func, getattr(func, "__wrapped__", None)):
            value = getattr(target, attr, None)
            if value is not None:
                return value
    return None


def check_always(value: object, context: Context) -> bool:
    """``always=`` as given to a decorator or ``hook_config``: True, on an ``after_agent``."""
    if not isinstance(value, bool):
        raise TypeError(f"{context.source} got always={value!r}; use True or False.")
    if value and context.hook and context.hook != "after_agent":
        via = "@hook_config" if context.decorator == "hook_config" else "@" + context.decorator
        raise TypeError(
            f"{via}(always=True) on {context.function} has no effect on a {context.hook} "
            "hook; only after_agent hooks can always run."
        )
    return value


def resolve(impl: HookImpl) -> HookImpl:
    """``impl`` with the timeout, always flag and failure policy its hook declared.

    ``timeout`` and ``always`` are read from the hook's methods (where the decorators and
    ``hook_config`` marked them), ``on_error`` from the middleware; on another library's
    middleware (LangChain's ``ToolErrorMiddleware`` has an ``on_error`` callback of its
    own) ``on_error`` counts only when it is one of funcware's values.
    """
    timeout = _option(impl.methods, TIMEOUT_ATTR)
    always = bool(_option(impl.methods, ALWAYS_ATTR))
    declared = getattr(impl.middleware, "on_error", "raise")
    if not isinstance(impl.middleware, AgentMiddleware):
        on_error: OnError = declared if declared in ON_ERROR_VALUES else "raise"
    else:
        on_error = (  # the description only when there is a mistake to report
            declared
            if declared in ON_ERROR_VALUES
            else check_on_error(declared, f"{impl.describe()}:")
        )
    if always and impl.hook != "after_agent":
        raise TypeError(
            f"{impl.describe()} is marked always=True, but only after_agent hooks can "
            "always run; remove always=True from it (or move the cleanup to after_agent)."
        )
    if timeout is None and not always and on_error == "raise":
        return impl
    options = {
        **impl.options,
        "timeout": check_timeout(timeout, f"{impl.describe()}:"),
        "on_error": on_error,
        "always": always,
    }
    return dataclasses.replace(impl, options=options)


# -- always-run marks ----------------------------------------------------------------


@dataclasses.dataclass
class RunRecord:
    """One run of an agent with always-run hooks: the labels of those that have started."""

    started: set[str] = dataclasses.field(default_factory=set)


RUN_RECORD: contextvars.ContextVar[RunRecord | None] = contextvars.ContextVar(
    "funcware_run_record", default=None
)
"""Set by the agent while it drives a run that has always-run hooks."""


def _marked(func: Callable[..., Any], label: str, is_async: bool) -> Callable[..., Any]:
    if is_async:

        async def amark(*args: Any, **kwargs: Any) -> Any:
            record = RUN_RECORD.get()
            if record is not None:
                record.started.add(label)
            return await func(*args, **kwargs)

        return amark

    def mark(*args: Any, **kwargs: Any) -> Any:
        record = RUN_RECORD.get()
        if record is not None:
            record.started.add(label)
        return func(*args, **kwargs)

    return mark


# -- deadlines -------------------------------------------------------------------------


class _Outcome:
    __slots__ = ("error", "value")

    def __init__(self) -> None:
        self.value: Any = None
        self.error: BaseException | None = None


def _sync_deadline(func: Callable[..., Any], impl: HookImpl, seconds: float) -> Callable[..., Any]:
    is_wrap = impl.hook.startswith("wrap_")

    def call(*args: Any, **kwargs: Any) -> Any:
        outcome = _Outcome()
        finished, expired = threading.Event(), threading.Event()
        context = contextvars.copy_context()
        if is_wrap:  # once the run stopped waiting, the layer starts nothing more inward
            request, handler = args
            args = (request, _until(handler, expired, impl, seconds))

        def target() -> None:
            try:
                outcome.value = context.run(func, *args, **kwargs)
            except BaseException as exc:  # handed to the caller below
                outcome.error = exc
            finally:
                finished.set()

        name = f"funcware-deadline:{impl.label}"
        threading.Thread(target=target, name=name, daemon=True).start()
        if not finished.wait(seconds):
            expired.set()
            raise HookTimeoutError(impl.middleware.name, impl.hook, impl.where, seconds)
        if outcome.error is not None:
            error, outcome.error = outcome.error, None
            raise error
        return outcome.value

    return call


def _until(
    handler: Callable[[Any], Any], expired: threading.Event, impl: HookImpl, seconds: float
) -> Callable[[Any], Any]:
    """``handler``, refusing to run once the deadline has passed (an abandoned layer)."""

    def guarded(request: Any) -> Any:
        if expired.is_set():
            raise HookTimeoutError(impl.middleware.name, impl.hook, impl.where, seconds)
        return handler(request)

    return guarded


def _async_deadline(func: Callable[..., Any], impl: HookImpl, seconds: float) -> Callable[..., Any]:
    def expired() -> HookTimeoutError:
        return HookTimeoutError(impl.middleware.name, impl.hook, impl.where, seconds)

    if sys.version_info >= (3, 11):

        async def call(*args: Any, **kwargs: Any) -> Any:
            scope = asyncio.timeout(seconds)
            try:
                async with scope:
                    return await func(*args, **kwargs)
            except TimeoutError:
                if scope.expired():
                    raise expired() from None
                raise

        return call

    async def call_310(*args: Any, **kwargs: Any) -> Any:
        try:
            return await asyncio.wait_for(func(*args, **kwargs), seconds)
        except asyncio.TimeoutError:
            raise expired() from None

    return call_310


# -- on_error="continue" -----------------------------------------------------------------


def _log(impl: HookImpl, exc: BaseException) -> None:
    note_continued(exc)
    logger.warning(
        "%s raised %s: %s; the run goes on without it (on_error='continue')",
        impl.describe(),
        type(exc).__name__,
        exc,
        exc_info=exc,
        extra={
            "funcware_middleware": impl.middleware.name,
            "funcware_hook": impl.hook,
            "funcware_where": impl.where,
        },
    )


def _swallowable(exc: BaseException) -> bool:
    return isinstance(exc, Exception) and not isinstance(exc, GraphBubbleUp)


def _node_continue(func: Callable[..., Any], impl: HookImpl, is_async: bool) -> Callable[..., Any]:
    if is_async:

        async def acall(*args: Any, **kwargs: Any) -> Any:
            try:
                return await func(*args, **kwargs)
            except Exception as exc:
                if not _swallowable(exc):
                    raise
                _log(impl, exc)
                return None

        return acall

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except Exception as exc:
            if not _swallowable(exc):
                raise
            _log(impl, exc)
            return None

    return call


class _Attempt:
    """What the layer's handler did last: called, finished, and its result or error."""

    __slots__ = ("called", "error", "finished", "result")

    def __init__(self) -> None:
        self.called = False
        self.finished = False
        self.result: Any = None
        self.error: BaseException | None = None

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """One call of the handler: called, then finished or failed with its error."""
        self.called, self.finished, self.error = True, False, None
        try:
            yield
        except BaseException as exc:
            self.error = exc
            raise
        self.finished = True

    def settle(self, exc: Exception, impl: HookImpl) -> bool:
        """Whether the layer's own failure ``exc`` may be passed over (and is logged)."""
        if not _swallowable(exc) or exc is self.error:
            return False  # control flow, or an error from inside: not this layer's
        if isinstance(self.error, Exception):
            raise self.error  # the inner layers failed last: as if this layer were absent
        if self.called and not self.finished:
            return False  # timed out with the handler still running (or cancelled): no result
        _log(impl, exc)
        return True


def _wrap_continue(func: Callable[..., Any], impl: HookImpl, is_async: bool) -> Callable[..., Any]:
    if is_async:

        async def acall(request: Any, handler: Any) -> Any:
            attempt = _Attempt()

            async def tracked(req: Any) -> Any:
                with attempt.running():
                    attempt.result = await handler(req)
                return attempt.result

            try:
                return await func(request, tracked)
            except Exception as exc:
                if not attempt.settle(exc, impl):
                    raise
            return attempt.result if attempt.called else await handler(request)

        return acall

    def call(request: Any, handler: Any) -> Any:
        attempt = _Attempt()

        def tracked(req: Any) -> Any:
            with attempt.running():
                attempt.result = handler(req)
            return attempt.result

        try:
            return func(request, tracked)
        except Exception as exc:
            if not attempt.settle(exc, impl):
                raise
        return attempt.result if attempt.called else handler(request)

    return call


# -- putting it together -----------------------------------------------------------------


def _wrapped(func: Callable[..., Any] | None, impl: HookImpl) -> Callable[..., Any] | None:
    if func is None:
        return None
    is_async = func is impl.async_
    wrapped = func
    timeout = impl.options.get("timeout")
    if timeout is not None:
        deadline = _async_deadline if is_async else _sync_deadline
        wrapped = deadline(wrapped, impl, timeout)
    if impl.options.get("on_error") == "continue":
        policy = _node_continue if impl.hook.startswith(("before_", "after_")) else _wrap_continue
        wrapped = policy(wrapped, impl, is_async)
    if impl.options.get("always"):
        wrapped = _marked(wrapped, impl.label, is_async)
    wrapped.__wrapped__ = func  # type: ignore[attr-defined]  # where() finds the user's code
    return wrapped


def apply_policies(impl: HookImpl) -> HookImpl:
    """``impl`` with its deadline, failure policy and always-run mark applied (built once).

    A hook that uses none of them is returned unchanged: no wrapper, no per-call cost.
    """
    resolved = resolve(impl)
    if resolved is impl:
        return impl
    impl = resolved
    return dataclasses.replace(
        impl, sync=_wrapped(impl.sync, impl), async_=_wrapped(impl.async_, impl)
    )
