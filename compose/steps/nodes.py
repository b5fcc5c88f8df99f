"""Running one node-style hook: the right flavour (bridged if need be), its result checked:
a dict update, a ``Command`` (:mod:`.node_commands`) or ``None``, with a ``jump_to`` only to
a target the hook declared (else ``funcware.errors.InvalidJumpError``)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any, Optional

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from funcware.compose.observing import watcher
from funcware.compose.steps.keys import check_keys, written_keys
from funcware.compose.stream.hidden import hidden_calls, runnable_config
from funcware.hooks.injection import Injection
from funcware.hooks.middleware import HookImpl

__all__ = ["check_jump", "check_node_result", "run_node", "run_node_async"]

Result = dict[str, Any] | Command[Any] | None
"""What a node hook returns (checked)."""
Keys = frozenset[str] | None
"""The keys (or nodes) a result may write (or go to); ``None``: any."""
Config = RunnableConfig | None


def check_jump(target: object, impl: HookImpl) -> None:
    """Refuse a ``jump_to`` the hook did not declare in ``can_jump_to``."""
    if target is not None and target not in impl.can_jump_to:
        from funcware.compose.steps.node_errors import invalid_jump

        raise invalid_jump(target, impl)


def check_node_result(
    result: object, impl: HookImpl, known: Keys = None, nodes: Keys = None
) -> Result:
    """``result`` if it is a valid node-hook result (with ``known``: writing only those keys;
    with ``nodes``: a ``Command`` going only to those nodes)."""
    if result is None:
        return None
    if isinstance(result, Command):
        from funcware.compose.steps.node_commands import check_command

        return check_command(result, impl, known, nodes)
    if isinstance(result, Mapping):
        check_jump(result.get("jump_to"), impl)
        check_keys(written_keys(result), known, impl.describe())
        return dict(result)
    from funcware.compose.steps.node_errors import not_a_result

    raise not_a_result(result, impl)


def _hiding(impl: HookImpl, config: Config) -> Config:
    """The config to hide the hook's own model calls from, unless its middleware opts in."""
    return None if getattr(impl.middleware, "stream_internal_calls", False) else config


_NO_KWARGS: dict[str, Any] = {}


def _arguments(
    call: Injection, state: Any, runtime: Any, config: Config
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The hook's positional arguments and the langgraph parameters it declared."""
    args = (state, runtime) if call.positional == 2 else (state,)
    return args, call.values(runtime, config) if call.extras else _NO_KWARGS


def _failed(exc: BaseException, impl: HookImpl, config: Config) -> None:
    """Note ``exc`` on the hook that raised it (an interrupt needs a checkpointer)."""
    from funcware.compose.steps.error_notes import note_raised
    from funcware.compose.steps.pauses import refuse_unresumable

    note_raised(exc, impl)
    refuse_unresumable(exc, config, impl.describe())


def _returned(result: object, impl: HookImpl, config: Config, known: Keys, nodes: Keys) -> Result:
    """The hook's checked result; a jump in it is counted for the run's errors."""
    checked = check_node_result(result, impl, known, nodes)
    if isinstance(checked, Command) or (checked and checked.get("jump_to") is not None):
        from funcware.compose.steps.jump_counts import record_jump

        record_jump(config, impl, checked)
    return checked


def _call_node(
    impl: HookImpl, state: Any, runtime: Any, config: Config, known: Keys, nodes: Keys
) -> Result:
    """:func:`run_node`, unobserved."""
    try:
        with runnable_config(config), hidden_calls(_hiding(impl, config)):
            if impl.sync is not None:
                args, kwargs = _arguments(impl.sync_call, state, runtime, config)
                result = impl.sync(*args, **kwargs)
            else:
                assert impl.async_ is not None
                from funcware.compose.threads.bridge import run_coroutine_sync

                args, kwargs = _arguments(impl.async_call, state, runtime, config)
                result = run_coroutine_sync(impl.async_(*args, **kwargs))
    except BaseException as exc:
        _failed(exc, impl, config)
        raise
    return _returned(result, impl, config, known, nodes)


async def _acall_node(
    impl: HookImpl, state: Any, runtime: Any, config: Config, known: Keys, nodes: Keys
) -> Result:
    """:func:`run_node_async`, unobserved."""
    try:
        with runnable_config(config), hidden_calls(_hiding(impl, config)):
            if impl.async_ is not None:
                args, kwargs = _arguments(impl.async_call, state, runtime, config)
                result = await impl.async_(*args, **kwargs)
            else:
                assert impl.sync is not None
                from funcware.compose.threads.bridge import run_in_thread

                args, kwargs = _arguments(impl.sync_call, state, runtime, config)
                result = await run_in_thread(partial(impl.sync, **kwargs), *args)
    except BaseException as exc:
        _failed(exc, impl, config)
        raise
    return _returned(result, impl, config, known, nodes)


def run_node(
    impl: HookImpl,
    state: Any,
    runtime: Any,
    config: Optional[RunnableConfig] = None,  # noqa: UP045 - langgraph injects by this spelling
    *,
    known: frozenset[str] | None = None,
    nodes: frozenset[str] | None = None,
) -> Result:
    """Call the hook from sync code (an async-only hook runs on an event loop), writing only
    ``known`` keys and going only to ``nodes`` (``None``: any); observed, the watcher runs it."""
    observer = watcher()
    if observer is None:
        return _call_node(impl, state, runtime, config, known, nodes)
    return observer.node(impl, partial(_call_node, impl, state, runtime, config, known, nodes))


async def run_node_async(
    impl: HookImpl,
    state: Any,
    runtime: Any,
    config: Optional[RunnableConfig] = None,  # noqa: UP045 - langgraph injects by this spelling
    *,
    known: frozenset[str] | None = None,
    nodes: frozenset[str] | None = None,
) -> Result:
    """Async :func:`run_node` (a sync-only hook runs on a worker thread)."""
    observer = watcher()
    if observer is None:
        return await _acall_node(impl, state, runtime, config, known, nodes)
    return await observer.anode(
        impl, partial(_acall_node, impl, state, runtime, config, known, nodes)
    )
