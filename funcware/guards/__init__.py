"""Stream guards: what a guard decides is what streams (``stream=`` on a middleware).

A feature on the core's seams, registered in ``funcware/plugins.py`` with the ``stream``
option (``@after_model`` and
``@wrap_model_call``; the ``stream`` attribute of a class) and, for an agent with a
guard whose policy is not ``"pass"``, uses three seams:

- ``plan``: the guard is worked out from the stack, and a buffering guard adds its
  private state field;
- ``model_call``: the model is called as the policy says (held, or through a sliding
  window) and a buffered turn is released where it leaves the guards;
- ``node``: the ``after_model`` nodes up to the last buffering guard hold what they write.

An agent whose guards all ``"pass"`` uses none of it. See :mod:`funcware.guards.guard`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from funcware.compose.steps.model_call import Delegate, ModelCall, Update
from funcware.hooks.options import Context

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage, AnyMessage
    from langchain_core.runnables import RunnableConfig

    from funcware.compose.graph.plan import AgentPlan
    from funcware.compose.seams import Build, NodePair
    from funcware.guards.guard import StreamGuard
    from funcware.guards.policy import SlidingWindow, StreamPolicy
    from funcware.hooks.middleware import HookImpl

__all__ = ["SlidingWindow", "StreamGuards", "StreamPolicy"]


def _guard(build: Build) -> StreamGuard | None:
    found: StreamGuard | None = build.data.get("guards")
    return found


class StreamGuards:
    """The plug-in: the guard worked out at plan time, the model call and nodes it governs."""

    name = "guards"

    def plan(self, plan: AgentPlan, build: Build) -> None:
        """Work out the guard; a buffering one adds its private state field."""
        if all(getattr(m, "stream", "pass") == "pass" for m in plan.middleware):
            return
        from funcware.guards.guard import StreamGuard, with_held_field

        guard = StreamGuard.build(plan.middleware, plan.hooks)
        if guard is None:
            return
        build.data["guards"] = guard
        if guard.section:
            plan.state_schema = with_held_field(plan.state_schema)

    def model_call(self, call: ModelCall, build: Build) -> ModelCall:
        """The model called as the guard's policy says."""
        guard = _guard(build)
        return call if guard is None else _Guarded(call, guard)

    def node(self, impl: HookImpl, node: NodePair, build: Build) -> NodePair:
        """An ``after_model`` node inside the buffered section holds what it writes."""
        guard = _guard(build)
        if guard is None or impl.label not in guard.section:
            return node
        sync, async_ = node
        return guard.after_node(impl.label, sync), guard.aafter_node(impl.label, async_)


class _Guarded(Delegate):
    """A model strategy whose model call and output the stream guard governs."""

    def __init__(self, inner: ModelCall, guard: StreamGuard) -> None:
        super().__init__(inner)
        self.guard = guard
        self.buffers = inner.buffers or guard.buffer

    def invoke(
        self, bound: Any, messages: list[AnyMessage], config: RunnableConfig | None
    ) -> AIMessage:
        return self.guard.invoke(bound, messages, config)  # type: ignore[no-any-return]

    async def ainvoke(
        self, bound: Any, messages: list[AnyMessage], config: RunnableConfig | None
    ) -> AIMessage:
        return await self.guard.ainvoke(bound, messages, config)  # type: ignore[no-any-return]

    def finish(self, update: Update, config: RunnableConfig | None) -> Update:
        update = self.inner.finish(update, config)
        return self.guard.model_output(update, config) if self.guard.buffer else update

    async def afinish(self, update: Update, config: RunnableConfig | None) -> Update:
        update = await self.inner.afinish(update, config)
        return await self.guard.amodel_output(update, config) if self.guard.buffer else update


def __getattr__(name: str) -> Any:
    if name in ("SlidingWindow", "StreamPolicy"):
        from funcware.guards import policy

        return getattr(policy, name)
    raise AttributeError(f"module 'funcware.guards' has no attribute {name!r}")


def check_stream(value: object, context: Context) -> StreamPolicy:
    from funcware.guards.policy import check_stream_policy

    return check_stream_policy(value, context.source)
