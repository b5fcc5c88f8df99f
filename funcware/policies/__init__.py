"""Deadlines, failure policies and cleanup that always runs: ``timeout=``, ``on_error=``,
``always=``.

A feature on the core's seams (registered in ``funcware/plugins.py`` with its three hook
options, loaded by a build whose stack uses one). It uses two seams:

- ``transform``: a hook that declared ``timeout=``, ``on_error="continue"`` or
  ``always=True`` gets its callables wrapped once, at build (see
  :mod:`funcware.policies.hooks`); a hook that declared none is left as it is and costs
  nothing per call;
- ``compiled``: an agent with always-run ``after_agent`` hooks gets a run wrap that calls
  them when a run fails (see :mod:`funcware.policies.always`); :func:`run_error` tells
  such a hook what failed the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funcware.errors import HookTimeoutError
from funcware.hooks.options import Context

if TYPE_CHECKING:
    from funcware.compose.seams import Build
    from funcware.compose.steps.runs import AgentGraph
    from funcware.hooks.middleware import HookImpl

__all__ = ["HookTimeoutError", "Policies", "run_error"]


def run_error() -> BaseException | None:
    """The exception that failed the run, inside an always-run hook called for it.

    ``None`` everywhere else, including an always-run hook on a run that succeeded.
    """
    from funcware.policies.always import current_error

    return current_error()


def check_timeout(value: object, context: Context) -> float | None:
    from funcware.policies.hooks import check_timeout

    return check_timeout(value, context.source)


def check_on_error(value: object, context: Context) -> str:
    from funcware.policies.hooks import check_on_error

    return check_on_error(value, context.source)


def check_always(value: object, context: Context) -> bool:
    from funcware.policies.hooks import check_always

    return check_always(value, context)


def _marked(impl: HookImpl) -> bool:
    """Whether a decorator or ``hook_config`` gave the hook a deadline or ``always``."""
    for method in impl.methods:
        for target in (method, getattr(method, "__wrapped__", None)):
            if getattr(target, "__funcware_timeout__", None) is not None:
                return True
            if getattr(target, "__funcware_always__", None):
                return True
    return False


class Policies:
    """The plug-in: deadlines and ``on_error`` as hook transforms, always-run as a run wrap."""

    name = "policies"

    def transform(self, impl: HookImpl, build: Build) -> HookImpl:
        """``impl`` with its deadline, failure policy and always-run mark, if it has any."""
        if not _marked(impl) and getattr(impl.middleware, "on_error", "raise") == "raise":
            return impl
        from funcware.policies.hooks import apply_policies

        return apply_policies(impl)

    def compiled(self, graph: AgentGraph, build: Build) -> None:
        """Add the always-run wrap to an agent that has always-run hooks."""
        if not any(impl.options.get("always") for impl in graph.plan.hooks["after_agent"]):
            return
        from funcware.policies.always import always_run

        wrap = always_run(graph.plan)
        if wrap is not None:
            graph.run_wraps = (*graph.run_wraps, wrap)
