"""What a run refuses or explains, in words: a resume nothing waits for, a context of the
wrong shape, a recursion limit hit (with the jumps that kept the run going).

Loaded only when a run is resumed or fails one of these checks.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Mapping
from typing import Any

from langgraph.errors import GraphRecursionError
from langgraph.types import Command, Interrupt

from funcware.compose.steps.jumplog import JumpLog
from funcware.hooks.middleware import HookImpl
from funcware.hooks.wording import a

__all__ = ["check_pending", "context_error", "explained", "no_checkpointer"]


def no_checkpointer() -> RuntimeError:
    """The error for ``Command(resume=...)`` sent to an agent built without a checkpointer."""
    return RuntimeError(
        "Cannot use Command(resume=...) without checkpointer. funcware: this agent was "
        "built without one, so no paused run was saved to resume. Build it with "
        "create_agent(..., checkpointer=InMemorySaver()) (langgraph.checkpoint.memory) and "
        "run it with config={'configurable': {'thread_id': '...'}}, then resume that thread."
    )


def _is_interrupt_id(key: object) -> bool:
    return isinstance(key, str) and len(key) == 32 and all(c in "0123456789abcdef" for c in key)


def check_pending(
    input: Command[Any], config: Any, pending: tuple[Interrupt, ...], halfway: bool
) -> None:
    """Refuse a resume that nothing pending is waiting for: on a thread at rest with no pause,
    or addressed (``Command(resume={interrupt_id: value})``) to pauses the thread does not
    have. langgraph would start the run afresh, or drop the answer in silence. A thread
    ``halfway`` through a step (a run recovered after its worker died, the answer already
    taken) goes on as langgraph goes on."""
    thread = config["configurable"]["thread_id"]
    if not pending and halfway:
        return
    if not pending:
        raise ValueError(
            f"Command(resume=...) on thread {thread!r}, which has nothing pending: no "
            "interrupt is waiting for this answer (it was meant for a pause already answered, "
            "or for another thread). funcware: nothing was run; send a new turn with "
            "invoke({'messages': [...]}) instead, or resume the thread that is paused."
        )
    resume = input.resume
    if isinstance(resume, Mapping) and resume and all(_is_interrupt_id(k) for k in resume):
        ids = [i.id for i in pending]
        unknown = [k for k in resume if k not in ids]
        if unknown:
            raise ValueError(
                f"Command(resume=...) answers interrupt(s) {unknown} on thread {thread!r}, "
                f"which are not pending there (pending: {ids}): each was answered already, or "
                "belongs to another thread. funcware: nothing was run; answer the pending "
                "interrupts by their ids."
            )


def context_error(graph: Any, context: Any, schema: type[Any], fix: str) -> TypeError:
    """The error for a ``context`` that cannot serve as the agent's ``context_schema``."""
    readers = [i.describe() for i in _context_readers(graph)]
    who = f" ({'; '.join(readers)})" if readers else ""
    return TypeError(
        f"context={context!r} ({type(context).__name__}) does not match the agent's "
        f"context_schema={schema.__name__}: hooks read runtime.context as "
        f"{a(schema.__name__)}{who}. Pass context={fix} to invoke/stream."
    )


def _context_readers(graph: Any) -> list[HookImpl]:
    """The hooks whose functions read an attribute named ``context``."""
    plan = getattr(graph, "plan", None)
    found = []
    for impls in plan.hooks.values() if plan is not None else ():
        for impl in impls:
            for method in (impl.sync, impl.async_):
                func = getattr(method, "__func__", method)
                with contextlib.suppress(ValueError):
                    func = inspect.unwrap(func)
                code = getattr(func, "__code__", None)
                if code is not None and "context" in code.co_names:
                    found.append(impl)
                    break
    return found


def explained(exc: GraphRecursionError, log: JumpLog) -> GraphRecursionError:
    """``exc`` with a sentence naming the hooks whose jumps kept the run going (or none)."""
    if not log.jumps:
        why = (
            "funcware: no middleware hook jumped in this run, so the loop is the model "
            "calling tools again and again; cap it with a before_model or after_model "
            "hook that ends the run (see the cookbook recipe tool_call_limit)."
        )
    else:
        counted = "; ".join(
            f"{owner} jumped to {target!r} {count} time{'s' if count != 1 else ''}"
            for (owner, target), count in log.jumps.most_common()
        )
        why = (
            f"funcware: the jumps that kept this run going: {counted}. Make the hook stop "
            "jumping at some point (count its jumps in the state, or check a condition the "
            "run can reach), or raise recursion_limit in the config if the run is just long."
        )
    message = exc.args[0] if exc.args else ""
    exc.args = (f"{message}\n{why}", *exc.args[1:])
    return exc
