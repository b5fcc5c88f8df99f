"""What one agent run remembers for its error messages: which hooks jumped, how often.

``create_agent`` returns an :class:`AgentGraph`: a ``CompiledStateGraph`` whose
``stream``/``astream`` (which ``invoke``, ``ainvoke`` and ``stream_events`` go through)
give each run a :class:`JumpLog` in its config. When a run hits the recursion limit, the
error names the hooks whose jumps kept it going; a resume without a checkpointer says
what to pass. Nothing else about a run changes.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER
from langgraph.errors import GraphRecursionError
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from funcware.hooks.middleware import HookImpl

__all__ = ["AgentGraph", "JumpLog", "record_jump"]

_LOG_KEY = "__funcware_jump_log__"


class JumpLog:
    """The jumps one run made: ``(hook label, where, target)`` and how many times."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.jumps: Counter[tuple[str, str]] = Counter()

    def add(self, impl: HookImpl, target: str) -> None:
        """Count one jump of ``impl`` to ``target``."""
        with self._lock:
            self.jumps[(impl.describe(), target)] += 1

    def describe(self) -> str:
        """The sentence added to a recursion error."""
        if not self.jumps:
            return (
                "funcware: no middleware hook jumped in this run, so the loop is the model "
                "calling tools again and again; cap it with a before_model or after_model "
                "hook that ends the run (see the cookbook recipe tool_call_limit)."
            )
        counted = "; ".join(
            f"{owner} jumped to {target!r} {count} time{'s' if count != 1 else ''}"
            for (owner, target), count in self.jumps.most_common()
        )
        return (
            f"funcware: the jumps that kept this run going: {counted}. Make the hook stop "
            "jumping at some point (count its jumps in the state, or check a condition the "
            "run can reach), or raise recursion_limit in the config if the run is just long."
        )


def record_jump(config: RunnableConfig | None, impl: HookImpl, result: object) -> None:
    """Count a jump in ``result`` (a node hook's checked result) on the run's log."""
    if config is None:
        return
    update = result.update if isinstance(result, Command) else result
    target = update.get("jump_to") if isinstance(update, Mapping) else None
    if target is None and isinstance(result, Command) and isinstance(result.goto, str):
        target = result.goto or None
    if target is None:
        return
    log = config.get("configurable", {}).get(_LOG_KEY)
    if isinstance(log, JumpLog):
        log.add(impl, str(target))


def _with_log(config: RunnableConfig | None, log: JumpLog) -> RunnableConfig:
    given: dict[str, Any] = dict(config or {})
    given["configurable"] = {**given.get("configurable", {}), _LOG_KEY: log}
    return given  # type: ignore[return-value]


def _explained(exc: GraphRecursionError, log: JumpLog) -> GraphRecursionError:
    message = exc.args[0] if exc.args else ""
    exc.args = (f"{message}\n{log.describe()}", *exc.args[1:])
    return exc


def _check_resume(graph: CompiledStateGraph[Any, Any, Any, Any], input: Any, config: Any) -> None:
    if not isinstance(input, Command) or input.resume is None or graph.checkpointer:
        return
    if (config or {}).get("configurable", {}).get(CONFIG_KEY_CHECKPOINTER) is not None:
        return  # a subgraph run under a parent that has one
    raise RuntimeError(
        "Cannot use Command(resume=...) without checkpointer. funcware: this agent was "
        "built without one, so no paused run was saved to resume. Build it with "
        "create_agent(..., checkpointer=InMemorySaver()) (langgraph.checkpoint.memory) and "
        "run it with config={'configurable': {'thread_id': '...'}}, then resume that thread."
    )


class AgentGraph(CompiledStateGraph[Any, Any, Any, Any]):
    """The compiled agent: langgraph's graph, with errors that name the hooks involved."""

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """``CompiledStateGraph.stream``; a recursion error names the hooks that jumped."""
        _check_resume(self, input, config)
        log = JumpLog()
        try:
            yield from super().stream(input, _with_log(config, log), **kwargs)
        except GraphRecursionError as exc:
            raise _explained(exc, log) from None

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """``CompiledStateGraph.astream``; a recursion error names the hooks that jumped."""
        _check_resume(self, input, config)
        log = JumpLog()
        chunks = cast(
            "AsyncGenerator[Any, None]", super().astream(input, _with_log(config, log), **kwargs)
        )
        try:
            async for chunk in chunks:
                yield chunk
        except GraphRecursionError as exc:
            raise _explained(exc, log) from None
        finally:
            await chunks.aclose()
