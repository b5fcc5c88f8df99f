"""The callables the plugin runs for funcware's nodes: as activities, and in the workflow.

In an activity (on any worker), a node runs its sync path on a thread (a call that blocks
never stops the heartbeat) and gets back the config langgraph would have given it:
the plugin sends a stripped one and restores the rest (scratchpad, runtime) as the current
config, which ``interrupt()`` needs; the checkpoints stay with the workflow, which a marker
says, so a hook's ``interrupt()`` is not refused for want of a checkpointer. The activity
heartbeats while the node runs when its options set a ``heartbeat_timeout`` (a dead
worker's activity is then retried within that timeout), gives the messages the node
returns ids (recorded in the workflow's history with the result), and, when a retry layer
of the stack already retries the call, fails for good on an error (Temporal retries it
only when the worker is lost).

In the workflow, a node runs on the workflow's event loop and gives the messages it
returns ids from ``workflow.uuid4()``, the same on every replay.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables.config import var_child_runnable_config
from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command
from temporalio import activity, workflow
from temporalio.exceptions import ApplicationError

__all__ = ["WORKFLOW_CHECKPOINTS", "activity_node", "tools_with_state", "with_ids", "workflow_node"]

Node = Callable[..., Any]


class _WorkflowCheckpoints:
    """Stands for the checkpointer in an activity: the workflow keeps the checkpoints."""

    def __repr__(self) -> str:
        return "<checkpoints kept by the Temporal workflow>"


WORKFLOW_CHECKPOINTS = _WorkflowCheckpoints()


def with_ids(result: Any, new_id: Callable[[], str]) -> Any:
    """``result`` with an id (from ``new_id``) on every message of it that has none."""
    if isinstance(result, BaseMessage):
        if result.id is None:
            result.id = new_id()
    elif isinstance(result, Command):
        with_ids(result.update, new_id)
    elif isinstance(result, dict):
        with_ids(result.get("messages"), new_id)
    elif isinstance(result, (list, tuple)):
        for item in result:
            with_ids(item, new_id)
    return result


def _name(body: Node, node: str, where: str) -> Node:
    # The plugin names an activity's task by module and qualname; closures are refused.
    body.__name__ = node
    body.__qualname__ = f"{where}[{node}]"
    body.__module__ = __name__
    return body


def _restored(config: Any) -> dict[str, Any]:
    """The node's config: what the plugin restored, with the checkpoints' marker."""
    current = var_child_runnable_config.get() or {}
    configurable = dict(current.get("configurable") or {})
    configurable.setdefault(CONFIG_KEY_CHECKPOINTER, WORKFLOW_CHECKPOINTS)
    restored = {**(config or {}), **current, "configurable": configurable}
    var_child_runnable_config.set(restored)  # type: ignore[arg-type]
    return restored


async def _beat(every: float) -> None:
    while True:
        activity.heartbeat()
        await asyncio.sleep(every)


def activity_node(node: str, sync: Node | None, async_: Node | None, *, final_errors: bool) -> Node:
    """The activity body for graph node ``node`` (its sync and async callables).

    ``final_errors``: an exception the node raises fails the activity for good (a retry
    layer of the stack retried it already); otherwise Temporal's retry policy applies.
    """

    async def body(state: Any, runtime: Any = None, config: Any = None) -> Any:
        kwargs = {"runtime": runtime, "config": _restored(config)}
        timeout = activity.info().heartbeat_timeout
        beating = asyncio.create_task(_beat(timeout.total_seconds() / 3)) if timeout else None
        try:
            if sync is not None:  # on a thread: a blocking call never stops the heartbeat
                result = await asyncio.to_thread(sync, state, **kwargs)
            else:
                assert async_ is not None
                result = await async_(state, **kwargs)
        except GraphBubbleUp:  # an interrupt: the plugin hands it to the workflow
            raise
        except Exception as exc:
            if not final_errors:
                raise
            raise ApplicationError(
                f"{node}: {type(exc).__name__}: {exc} (not retried by Temporal: a retry "
                "layer of the stack already retried it)",
                type=type(exc).__name__,
                non_retryable=True,
            ) from exc
        finally:
            if beating is not None:
                beating.cancel()
        return with_ids(result, lambda: str(uuid.uuid4()))

    return _name(body, node, "activity")


def workflow_node(node: str, sync: Node | None, async_: Node | None) -> Node:
    """The workflow-side callable for graph node ``node``: no thread, replay-stable ids."""

    async def body(state: Any, runtime: Any = None, config: Any = None) -> Any:
        if sync is not None:  # a node hook's sync path calls the hook directly
            result = sync(state, runtime=runtime, config=config)
        else:
            assert async_ is not None
            result = await async_(state, runtime=runtime, config=config)
        return with_ids(result, lambda: str(workflow.uuid4()))

    return _name(body, node, "workflow")


def tools_with_state(scheduled: Node, extract_state: Callable[[Any, Any], Any]) -> Node:
    """The workflow-side tools node: the graph state inlined in each tool call it sends.

    funcware sends each tool call to the tools node alone (``Send("tools", [call])``), and
    ``ToolNode`` then reads the graph's state from the config, which does not cross into
    the activity; ``ToolNode``'s own ``ToolCallWithContext`` carries the state along.
    """

    async def tools(input: Any, **kwargs: Any) -> Any:
        one_call = isinstance(input, list) and len(input) == 1 and isinstance(input[0], dict)
        if one_call and input[0].get("type") == "tool_call":
            state = extract_state(input, var_child_runnable_config.get() or {})
            input = {"__type": "tool_call_with_context", "tool_call": input[0], "state": state}
        return await scheduled(input, **kwargs)

    return tools
