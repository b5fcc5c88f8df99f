"""A wrap layer's call as observers see it (only while something observes the run).

The layer is started before it is called and ended with its outcome: ``short_circuited``
(it never called its handler), ``retried`` (it called it more than once), ``modified``
(it changed the request, wrote state or answered with something else than its handler's
answer), ``passed``, or, when it raised, ``failed``, ``timed_out`` or ``interrupted``.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from langgraph.errors import GraphInterrupt
from langgraph.types import Command

from funcware.effects.strict import contents_of
from funcware.errors import HookTimeoutError
from funcware.hooks.types import ExtendedModelResponse
from funcware.observe.langsmith import LangChainRuns
from funcware.observe.observers import Observer, Outcome, end, start

if TYPE_CHECKING:
    from collections.abc import Callable

    from funcware.compose.wraps.layers import Handler
    from funcware.hooks.middleware import HookImpl

__all__ = ["changed_fields", "failure_outcome", "node_ended", "observed_layer", "wrote_keys"]


def failure_outcome(exc: BaseException) -> Outcome:
    """How a layer that raised ``exc`` ended."""
    if isinstance(exc, HookTimeoutError):
        return "timed_out"
    if isinstance(exc, GraphInterrupt):
        return "interrupted"
    return "failed"


Snapshot = dict[str, tuple[Any, Any]]
"""A request's fields before a layer ran: each value and what an in-place edit changes."""


def snapshot(request: Any) -> Snapshot | None:
    """The request's fields and their contents (``None`` for what is no dataclass)."""
    if not dataclasses.is_dataclass(request):
        return None
    values = {f.name: getattr(request, f.name, None) for f in dataclasses.fields(request)}
    return {name: (value, contents_of(value)) for name, value in values.items()}


def changed_fields(before: Snapshot | None, after: Any) -> tuple[str, ...]:
    """The fields of request ``after`` that differ from the ``before`` snapshot: another
    value, or the same list, dict or message edited in place."""
    if before is None or after is None:
        return ()
    changed = []
    for name, (value, contents) in before.items():
        now = getattr(after, name, None)
        if _differs(value, now) or contents_of(now) != contents:
            changed.append(name)
    return tuple(changed)


def _differs(before: Any, after: Any) -> bool:
    """Not the same object and not equal (a bridged layer passes on equal copies)."""
    if before is after:
        return False
    try:
        return bool(before != after)
    except Exception:  # a value whose comparison fails: count it as changed
        return True


def _changed(before: Snapshot | None, handler: Handler) -> tuple[str, ...]:
    return changed_fields(before, handler.request) if handler.calls else ()


def wrote_keys(update: object) -> tuple[str, ...]:
    """The state keys a node update, a ``Command`` or an ``ExtendedModelResponse`` writes."""
    if isinstance(update, ExtendedModelResponse):
        update = update.command
    if isinstance(update, Command):
        update = update.update
    if isinstance(update, Mapping):
        return tuple(str(key) for key in update if key != "jump_to")
    if isinstance(update, (list, tuple)):
        return tuple(
            dict.fromkeys(
                str(item[0]) for item in update if isinstance(item, tuple) and item[0] != "jump_to"
            )
        )
    return ()


def node_ended(result: object) -> tuple[Outcome, tuple[str, ...], str | None]:
    """How a node hook that returned ``result`` ended: outcome, keys written, jump target."""
    update = result.update if isinstance(result, Command) else result
    jump_to = update.get("jump_to") if isinstance(update, Mapping) else None
    wrote = wrote_keys(result)
    if jump_to is not None:
        return "jumped", wrote, str(jump_to)
    if isinstance(result, Command) and result.goto:
        return "jumped", wrote, str(result.goto)
    return ("modified" if wrote else "passed"), wrote, None


def _outcome(result: Any, handler: Handler, changed: tuple[str, ...], wrote: Any) -> Outcome:
    if handler.calls == 0:
        return "short_circuited"
    if handler.calls > 1:
        return "retried"
    answer = result.model_response if isinstance(result, ExtendedModelResponse) else result
    if changed or wrote or not handler.answered or _differs(handler.answer, answer):
        return "modified"
    return "passed"


def _langchain_runs(observers: tuple[Observer, ...]) -> LangChainRuns | None:
    """The LangChain runs to open around each layer, when a tracer is in the callbacks."""
    for observer in observers:
        if isinstance(observer, LangChainRuns):
            return observer
    return None


class _LayerCall:
    """One call of an observed layer, told to ``observers``: started when made, then ended
    with its outcome (:meth:`ended`) or with the error it raised (:meth:`failing`)."""

    def __init__(
        self,
        observers: tuple[Observer, ...],
        layer: tuple[str, str, str],
        request: Any,
        handler: Any,
    ) -> None:
        """``layer``: the middleware's name, the hook, and where the hook is defined."""
        self.observers = observers
        self.started = start(observers, *layer)
        self.before = snapshot(request)
        self.inner: Handler = handler.__self__

    @contextlib.contextmanager
    def failing(self) -> Iterator[None]:
        """An error the block raises ends the call, then goes on."""
        try:
            yield
        except BaseException as exc:
            changed = _changed(self.before, self.inner)
            end(
                self.observers,
                self.started,
                failure_outcome(exc),
                handler_calls=self.inner.calls,
                changed=changed,
                error=exc,
            )
            raise

    def ended(self, result: Any) -> Any:
        """``result``, the call's, once the call is ended with it."""
        changed = _changed(self.before, self.inner)
        wrote = wrote_keys(result)
        outcome = _outcome(result, self.inner, changed, wrote)
        end(
            self.observers,
            self.started,
            outcome,
            handler_calls=self.inner.calls,
            wrote=wrote,
            changed=changed,
        )
        return result


def observed_layer(
    impl: HookImpl, func: Callable[..., Any], is_async: bool, active: Callable[[], Any]
) -> Callable[..., Any]:
    """``func`` (a wrap layer of ``impl``), telling the observers ``active()`` gives how
    each call went: started, then ended with its outcome."""
    name, where, hook, middleware = impl.middleware.name, impl.where, impl.hook, impl.middleware
    layer_of = (name, hook, where)

    if is_async:

        async def alayer(request: Any, handler: Any) -> Any:
            call = _LayerCall(active(), layer_of, request, handler)
            with call.failing():
                runs = _langchain_runs(call.observers)
                if runs is None:
                    result = await func(request, handler)
                else:
                    result = await runs.acall(middleware, hook, func, request, handler)
            return call.ended(result)

        return alayer

    def layer(request: Any, handler: Any) -> Any:
        call = _LayerCall(active(), layer_of, request, handler)
        with call.failing():
            runs = _langchain_runs(call.observers)
            if runs is None:
                result = func(request, handler)
            else:
                result = runs.call(middleware, hook, func, request, handler)
        return call.ended(result)

    return layer
