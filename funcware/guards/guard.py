"""Guards that govern the stream: what a buffering or sliding guard decides is what streams.

Built once per agent from the middleware's ``stream`` policies (see
:mod:`funcware.guards.policy`); an agent whose guards all ``"pass"`` gets none of this.

Buffered turn: the model is called without the streaming callback handlers (tracers still
see it), so no token reaches the user. The messages the model node writes are marked as
already streamed, so langgraph does not stream them whole when the node ends; each
``after_model`` node up to the last buffering guard does the same for what it writes, and
the ids of the held messages travel in a private state field. Where the turn leaves the
guards (after the last buffering guard, or at a jump out before it), the held messages as
they now stand in the state are streamed through :class:`~.release.StreamRelease`; removed
ones are not. With only ``wrap_model_call`` guards buffering, the model node releases.

Sliding window: the model is streamed without the streaming handlers, its text goes through
the guards' checks (:mod:`.sliding`), and the released chunks are streamed as the answer;
the message the agent keeps is the released text.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, cast
from uuid import uuid4

from langchain_core.messages import AIMessage, AIMessageChunk, AnyMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.graph.message import add_messages
from langgraph.types import Command
from typing_extensions import NotRequired, TypedDict, get_type_hints

from funcware.compose.stream.hidden import current_config
from funcware.compose.stream.quiet import quiet_config
from funcware.guards.policy import SlidingWindow, StreamPolicy, check_stream_policy
from funcware.guards.release import StreamRelease, as_chunk, chunks_to_message
from funcware.guards.sliding import combine, sliding_achunks, sliding_chunks
from funcware.hooks.middleware import HookImpl, HookName, origin
from funcware.hooks.types import PrivateStateAttr

__all__ = ["HELD_KEY", "StreamGuard", "with_held_field"]

HELD_KEY = "funcware_stream_held"
"""Private state field: ids of the messages a buffered turn holds back."""

_GUARD_HOOKS: tuple[HookName, ...] = ("after_model", "wrap_model_call")

_Update = dict[str, Any] | Command[Any] | list[Command[Any]]


def _policy(middleware: object) -> StreamPolicy:
    value = getattr(middleware, "stream", "pass")
    if value == "pass" or value == "buffer" or isinstance(value, SlidingWindow):
        return value  # type: ignore[return-value]
    name = getattr(middleware, "name", type(middleware).__name__)  # only now: origin() is slow
    return check_stream_policy(value, f"middleware {name!r} ({origin(middleware)})")


def with_held_field(schema: type) -> type:
    """``schema`` plus the private field that carries a buffered turn's held ids."""
    fields = get_type_hints(schema, include_extras=True)
    fields[HELD_KEY] = NotRequired[Annotated[list[str], PrivateStateAttr]]
    return TypedDict(getattr(schema, "__name__", "AgentState"), fields)  # type: ignore[operator, no-any-return]


def _written_messages(result: object) -> list[Any]:
    if isinstance(result, list) and all(isinstance(c, Command) for c in result):
        return [m for command in result for m in _written_messages(command)]  # the model node's
    update = result.update if isinstance(result, Command) else result
    if isinstance(update, Mapping):
        found = update.get("messages")
        return list(found) if isinstance(found, (list, tuple)) else [found] if found else []
    if isinstance(update, (list, tuple)):
        out: list[Any] = []
        for key, value in update:
            if key == "messages":
                out.extend(value if isinstance(value, (list, tuple)) else [value])
        return out
    return []


def _ai(messages: Iterable[Any]) -> list[AIMessage]:
    found = [m for m in messages if isinstance(m, AIMessage)]
    for message in found:
        if message.id is None:  # the same id reaches the state: add_messages keeps it
            message.id = str(uuid4())
    return found


def _jumps(result: object) -> bool:
    if isinstance(result, Command):
        update = result.update if isinstance(result.update, Mapping) else {}
        return bool(result.goto) or bool(update.get("jump_to"))
    return isinstance(result, Mapping) and bool(result.get("jump_to"))


def _add_write(result: object, key: str, value: Any) -> Any:
    if result is None:
        return {key: value}
    if isinstance(result, list) and all(isinstance(c, Command) for c in result):
        return [*result, Command(update={key: value})]  # the model node's Commands
    if isinstance(result, Command):
        update = result.update
        if isinstance(update, Mapping):
            new_update: Any = {**update, key: value}
        else:
            new_update = [*(update or ()), (key, value)]
        return Command(
            graph=result.graph, update=new_update, resume=result.resume, goto=result.goto
        )
    if isinstance(result, Mapping):
        return {**result, key: value}
    return result


def _current(config: RunnableConfig | None) -> RunnableConfig | None:
    return config if config is not None else var_child_runnable_config.get()


def _quietly(source: Iterator[Any], quiet: RunnableConfig) -> Iterator[Any]:
    """Pull ``source`` (a model stream) with the quiet config current at every step."""
    while True:
        with current_config(quiet):
            try:
                item = next(source)
            except StopIteration:
                return
        yield item


async def _aquietly(source: AsyncIterator[Any], quiet: RunnableConfig) -> AsyncIterator[Any]:
    """Async :func:`_quietly`."""
    iterator = source.__aiter__()
    while True:
        with current_config(quiet):
            try:
                item = await iterator.__anext__()
            except StopAsyncIteration:
                return
        yield item


def _noop(_: object) -> None:
    return None


async def _aiter(chunks: Sequence[AIMessageChunk]) -> AsyncIterator[AIMessageChunk]:
    for chunk in chunks:
        yield chunk


@dataclass(frozen=True)
class StreamGuard:
    """The agent's stream policy, worked out from its middleware (``None`` if all pass)."""

    buffer: bool
    """Whether the model's turn is held until the buffering guards have run."""
    window: SlidingWindow | None
    """The sliding check on the model's text, if any guard slides."""
    release_at: str | None
    """The ``after_model`` node that releases a held turn; ``None``: the model node does."""
    section: frozenset[str]
    """The ``after_model`` nodes that run while the turn is held (from the model on)."""

    @classmethod
    def build(
        cls, middleware: Sequence[object], hooks: Mapping[HookName, Sequence[HookImpl]]
    ) -> StreamGuard | None:
        """The guard for these middleware and their hooks; refuses a policy it cannot apply."""
        guards = {id(i.middleware) for hook in _GUARD_HOOKS for i in hooks[hook]}
        policies: list[tuple[object, StreamPolicy]] = []
        for member in middleware:
            policy = _policy(member)
            if policy == "pass":
                continue
            if id(member) not in guards:
                name = getattr(member, "name", type(member).__name__)
                raise ValueError(
                    f"middleware {name!r} ({origin(member)}) sets stream={policy!r}, but it "
                    "has no after_model or wrap_model_call hook, so it decides nothing about "
                    "the model's answer; move stream= to the guard that does, or remove it."
                )
            policies.append((member, policy))
        if not policies:
            return None
        buffering = {id(m) for m, p in policies if p == "buffer"}
        windows = [p for _, p in reversed(policies) if isinstance(p, SlidingWindow)]
        after = list(hooks["after_model"])  # in list order; they run last to first
        held_by = [index for index, impl in enumerate(after) if id(impl.middleware) in buffering]
        release_at = after[held_by[0]].label if held_by else None
        section = frozenset(i.label for i in after[held_by[0] :]) if held_by else frozenset()
        return cls(
            buffer=bool(buffering),
            window=combine(windows) if windows else None,
            release_at=release_at,
            section=section,
        )

    # -- the model call ------------------------------------------------------------

    def invoke(self, bound: Any, messages: list[AnyMessage], config: RunnableConfig | None) -> Any:
        """Call the model as the policy says (sync); the message the agent keeps."""
        visible = _current(config)
        quiet = quiet_config(visible)
        if self.window is None:
            with current_config(quiet):
                return bound.invoke(messages, quiet)
        with current_config(quiet):
            raw = iter(bound.stream(messages, quiet))
        chunks = sliding_chunks(_quietly(raw, quiet), self.window)
        if self.buffer:
            return chunks_to_message(chunks)
        if visible is None:
            return StreamRelease(chunks=chunks).invoke([])
        with current_config(visible):
            return StreamRelease(chunks=chunks).invoke([], visible)

    async def ainvoke(
        self, bound: Any, messages: list[AnyMessage], config: RunnableConfig | None
    ) -> Any:
        """Async :meth:`invoke`."""
        visible = _current(config)
        quiet = quiet_config(visible)
        if self.window is None:
            with current_config(quiet):
                return await bound.ainvoke(messages, quiet)
        chunks = sliding_achunks(_aquietly(bound.astream(messages, quiet), quiet), self.window)
        if self.buffer:
            return chunks_to_message([chunk async for chunk in chunks])
        if visible is None:
            return await StreamRelease(achunks=chunks).ainvoke([])
        with current_config(visible):
            return await StreamRelease(achunks=chunks).ainvoke([], visible)

    # -- holding and releasing a buffered turn ---------------------------------------

    def _seen(self, messages: list[AIMessage], config: RunnableConfig | None) -> Callable[[], Any]:
        """A run that marks ``messages`` as streamed for langgraph's messages handler.

        That handler treats the messages a node receives as already streamed; a run named
        like the node, given them as input, tells it so before the node's output is read.
        """
        node = ((config or {}).get("metadata") or {}).get("langgraph_node")
        runnable = RunnableLambda(_noop, name=str(node))
        return lambda: runnable.invoke({"messages": messages}, config)

    def _release_runs(self, messages: list[AIMessage]) -> list[StreamRelease]:
        return [StreamRelease(chunks=[as_chunk(m)]) for m in messages]

    def model_output(self, update: _Update, config: RunnableConfig | None) -> _Update:
        """The model node's update, held (or released here when no after_model guard buffers)."""
        config = _current(config)
        held = _ai(_written_messages(update))
        if config is not None and held:
            self._seen(held, config)()
            if self.release_at is None:
                for run in self._release_runs(held):
                    run.invoke([], config)
        if self.release_at is None:
            return update
        return cast("_Update", _add_write(update, HELD_KEY, [m.id for m in held]))

    async def amodel_output(self, update: _Update, config: RunnableConfig | None) -> _Update:
        """Async :meth:`model_output`."""
        config = _current(config)
        held = _ai(_written_messages(update))
        if config is not None and held:
            node = (config.get("metadata") or {}).get("langgraph_node")
            await RunnableLambda(_noop, name=str(node)).ainvoke({"messages": held}, config)
            if self.release_at is None:
                for message in held:
                    await StreamRelease(achunks=_aiter([as_chunk(message)])).ainvoke([], config)
        if self.release_at is None:
            return update
        return cast("_Update", _add_write(update, HELD_KEY, [m.id for m in held]))

    def _after(
        self, label: str, state: Any, result: Any
    ) -> tuple[list[AIMessage], list[AIMessage], Any]:
        """``(to mark seen, to release, result with the held ids written)``."""
        written = _written_messages(result)
        fresh = _ai(written)
        held_ids = [*(state.get(HELD_KEY) or ()), *(m.id for m in fresh)]
        if label != self.release_at and not _jumps(result):
            return fresh, [], _add_write(result, HELD_KEY, held_ids)
        final = add_messages(list(state["messages"]), written) if written else state["messages"]
        wanted = set(held_ids)
        release = [m for m in final if isinstance(m, AIMessage) and m.id in wanted]
        return fresh, release, _add_write(result, HELD_KEY, [])

    def after_node(self, label: str, node: Callable[..., Any]) -> Callable[..., Any]:
        """``node`` (a sync after_model node) holding and releasing as the turn requires."""

        def guarded(state: Any, *args: Any, **kwargs: Any) -> Any:
            result = node(state, *args, **kwargs)
            config = _current(kwargs.get("config"))
            fresh, release, result = self._after(label, state, result)
            if config is not None:
                if fresh:
                    self._seen(fresh, config)()
                for run in self._release_runs(release):
                    run.invoke([], config)
            return result

        guarded.__signature__ = getattr(node, "__signature__", None)  # type: ignore[attr-defined]
        return guarded

    def aafter_node(self, label: str, node: Callable[..., Any]) -> Callable[..., Any]:
        """Async :meth:`after_node`."""

        async def guarded(state: Any, *args: Any, **kwargs: Any) -> Any:
            result = await node(state, *args, **kwargs)
            config = _current(kwargs.get("config"))
            fresh, release, result = self._after(label, state, result)
            if config is not None:
                if fresh:
                    node_name = (config.get("metadata") or {}).get("langgraph_node")
                    await RunnableLambda(_noop, name=str(node_name)).ainvoke(
                        {"messages": fresh}, config
                    )
                for message in release:
                    await StreamRelease(achunks=_aiter([as_chunk(message)])).ainvoke([], config)
            return result

        guarded.__signature__ = getattr(node, "__signature__", None)  # type: ignore[attr-defined]
        return guarded
