"""``AgentMiddleware``, the base class, and :func:`hook_impls`: the hooks a middleware
defines (overrides: its sync method, its async ``a``-prefixed one, or both)."""

from __future__ import annotations

import contextlib
import inspect
import sys
import weakref
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias, cast

from langchain_core.messages import ToolMessage
from langgraph.stream import StreamTransformer
from langgraph.types import TracePolicy
from langgraph.typing import ContextT
from typing_extensions import TypeVar

from funcware.hooks.adapters import adapters
from funcware.hooks.class_hooks import check_class
from funcware.hooks.injection import PLAIN, Injection, injection_for
from funcware.hooks.types import (
    JUMP_TARGETS,
    AgentRequest,
    AgentResponse,
    AgentState,
    JumpTo,
    ModelCallResult,
    ModelRequest,
    ModelResponse,
    ResponseT,
    ToolCallRequest,
)

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool
    from langgraph.runtime import Runtime
    from langgraph.types import Command

__all__ = [
    "DIRECT_ATTR",
    "HOOKS",
    "JUMP_ATTR",
    "NODE_HOOKS",
    "WRAP_HOOKS",
    "AgentMiddleware",
    "HookImpl",
    "HookName",
    "TransformerFactory",
    "hook_impls",
    "is_middleware",
    "origin",
    "read_hooks",
    "where",
]

StateT = TypeVar("StateT", bound=AgentState[Any], default=AgentState[Any])

HookName = Literal[
    "before_agent",
    "before_model",
    "after_model",
    "after_agent",
    "wrap_model_call",
    "wrap_tool_call",
]
NODE_HOOKS: tuple[HookName, ...] = ("before_agent", "before_model", "after_model", "after_agent")
WRAP_HOOKS: tuple[HookName, ...] = ("wrap_model_call", "wrap_tool_call")
HOOKS: tuple[HookName, ...] = NODE_HOOKS + WRAP_HOOKS

TransformerFactory: TypeAlias = Callable[[tuple[str, ...]], StreamTransformer]
"""Builds a fresh stream transformer for a namespace scope (a transformer class fits)."""


class AgentMiddleware(Generic[StateT, ContextT, ResponseT]):
    """Base class for agent middleware: override any of the hooks below.

    Node hooks (``before_agent``, ``before_model``, ``after_model``, ``after_agent``)
    take ``(state, runtime)`` and return a dict update, a ``Command`` or ``None``.
    Wrap hooks take ``(request, handler)`` and call ``handler`` to go on inward.
    Each hook has an async twin prefixed with ``a``; define either or both.
    """

    state_schema: type[StateT] = cast("type[StateT]", AgentState)
    """A TypedDict deriving from ``AgentState``: fields this middleware adds to the state."""
    tools: Sequence[BaseTool | dict[str, Any]] = ()
    """Tools this middleware contributes to the agent."""
    stream: Any = "pass"
    """What its guards let through to the stream: ``"pass"``, ``"buffer"`` or a window."""
    stream_internal_calls: bool = False
    """Whether model calls it makes itself show in the message stream (default: hidden)."""
    on_error: Literal["raise", "continue"] = "raise"
    """``"continue"``: an exception in its hooks is logged and the run goes on."""
    trace_policy: TracePolicy | None = None
    """What its hook spans record (LangChain's); ``None``: the process default."""
    transformers: Sequence[TransformerFactory] = ()
    """Stream transformer factories it registers, called per ``version="v3"`` scope."""
    reads: Collection[str] | None = None
    """Effects it reads (``"state.<key>"``, ``"request.messages"``, ...); ``None``: undeclared."""
    writes: Collection[str] | None = None
    """Effects it has (``"state.<key>"``, ``"tool.args"``, ...); ``None``: undeclared."""
    outside: Sequence[str | type] | None = None
    """Middleware (names or classes) it must sit outside of, when both are present."""
    inside: Sequence[str | type] | None = None
    """Middleware (names or classes) it must sit inside of, when both are present."""
    requires: Sequence[str | type] | None = None
    """Middleware (names or classes) that must be present with it."""
    position: Literal["outermost", "innermost"] | None = None
    """Where it must sit in the list: first (outermost) or last (innermost)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        body = sys._getframe(1)  # the class statement's frame: where it is, for errors
        _CLASS_WHERE[cls] = f"{body.f_code.co_filename}:{body.f_lineno}"

    @property
    def name(self) -> str:
        """The middleware's graph name; the class name unless set on the instance."""
        return cast(str, self.__dict__.get("_funcware_name", type(self).__name__))

    @name.setter
    def name(self, value: str) -> None:
        self.__dict__["_funcware_name"] = value

    def before_agent(
        self, state: StateT, runtime: Runtime[ContextT]
    ) -> dict[str, Any] | Command[Any] | None:
        """Runs once per invocation, before anything else."""
        return None

    async def abefore_agent(
        self, state: StateT, runtime: Runtime[ContextT]
    ) -> dict[str, Any] | Command[Any] | None:
        """Async ``before_agent``."""
        return None

    def before_model(
        self, state: StateT, runtime: Runtime[ContextT]
    ) -> dict[str, Any] | Command[Any] | None:
        """Runs on every loop, before the model is called."""
        return None

    async def abefore_model(
        self, state: StateT, runtime: Runtime[ContextT]
    ) -> dict[str, Any] | Command[Any] | None:
        """Async ``before_model``."""
        return None

    def after_model(
        self, state: StateT, runtime: Runtime[ContextT]
    ) -> dict[str, Any] | Command[Any] | None:
        """Runs on every loop, after the model answered."""
        return None

    async def aafter_model(
        self, state: StateT, runtime: Runtime[ContextT]
    ) -> dict[str, Any] | Command[Any] | None:
        """Async ``after_model``."""
        return None

    def after_agent(
        self, state: StateT, runtime: Runtime[ContextT]
    ) -> dict[str, Any] | Command[Any] | None:
        """Runs once per invocation, last."""
        return None

    async def aafter_agent(
        self, state: StateT, runtime: Runtime[ContextT]
    ) -> dict[str, Any] | Command[Any] | None:
        """Async ``after_agent``."""
        return None

    def wrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], ModelResponse[ResponseT]],
    ) -> ModelCallResult[ResponseT]:
        """Wraps every model call; ``handler`` runs the inner layers and the model."""
        return handler(request)

    async def awrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], Awaitable[ModelResponse[ResponseT]]],
    ) -> ModelCallResult[ResponseT]:
        """Async ``wrap_model_call``."""
        return await handler(request)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Wraps every tool call; ``handler`` runs the inner layers and the tool."""
        return handler(request)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async ``wrap_tool_call``."""
        return await handler(request)

    def wrap_agent_call(
        self,
        request: AgentRequest,
        handler: Callable[[AgentRequest], AgentResponse],
    ) -> AgentResponse:
        """Wraps every run of the agent (``invoke``, ``stream``, a resume, ...);
        ``handler`` runs the inner layers and the run. See :mod:`funcware.runs`."""
        return handler(request)

    async def awrap_agent_call(
        self,
        request: AgentRequest,
        handler: Callable[[AgentRequest], Awaitable[AgentResponse]],
    ) -> AgentResponse:
        """Async ``wrap_agent_call``."""
        return await handler(request)

    def __repr__(self) -> str:
        return f"<{type(self).__qualname__} middleware {self.name!r}>"


def where(func: object) -> str:
    """``file:line`` where ``func`` (or the function it wraps) is defined, or ``'<unknown>'``."""
    target: Any = getattr(func, "__func__", func)
    with contextlib.suppress(ValueError):
        target = inspect.unwrap(target)
    code = getattr(target, "__code__", None)
    if code is not None:
        return f"{code.co_filename}:{code.co_firstlineno}"
    if inspect.isclass(target):
        from funcware.hooks.locations import class_where

        return class_where(target)
    return "<unknown>"


_CLASS_WHERE: weakref.WeakKeyDictionary[type, str] = weakref.WeakKeyDictionary()


def origin(middleware: object) -> str:
    """Where a middleware comes from: its function's or its class's ``file:line``."""
    func = getattr(middleware, "__wrapped__", None)
    return where(func if func is not None else type(middleware))


@dataclass(frozen=True)
class HookImpl:
    """One hook of one middleware: its sync and/or async callable and its jump targets."""

    middleware: Any
    hook: HookName
    sync: Callable[..., Any] | None
    async_: Callable[..., Any] | None
    can_jump_to: tuple[JumpTo, ...] = ()
    sync_call: Injection = PLAIN
    """How a node hook's ``sync`` is called (see :mod:`.injection`); ``async_call``: ``async_``."""
    async_call: Injection = PLAIN
    methods: tuple[Callable[..., Any] | None, Callable[..., Any] | None] = (None, None)
    """The middleware's own sync and async methods, which carry the hook's option marks."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """What features resolved for this hook at build (``timeout``, ``on_error``, ...)."""

    @property
    def label(self) -> str:
        """``"{middleware.name}.{hook}"``, the name of the hook's graph node."""
        return f"{self.middleware.name}.{self.hook}"

    @property
    def where(self) -> str:
        """Where the user's function for this hook is defined (``file:line``)."""
        return where(self.sync if self.sync is not None else self.async_)

    def describe(self) -> str:
        """``middleware 'x', hook before_model (file:line)`` for error messages."""
        return f"middleware {self.middleware.name!r}, hook {self.hook} (defined at {self.where})"


DIRECT_ATTR = "__funcware_direct__"
"""Set on a generated hook method that only forwards its arguments to the user's function."""

JUMP_ATTR = "__can_jump_to__"
"""Where a function or a hook method keeps its declared jump targets (LangChain's name)."""


def _direct(method: Callable[..., Any] | None) -> Callable[..., Any] | None:
    """The user's function a forwarding method calls (one stack frame less), else ``method``."""
    direct = getattr(getattr(method, "__func__", None), DIRECT_ATTR, None)
    return direct if direct is not None else method


def _overrides(cls: type, attr: str, bases: tuple[type, ...]) -> bool:
    for klass in cls.__mro__:
        if attr in klass.__dict__:
            return klass not in bases
    return False


def _jump_targets(*funcs: Callable[..., Any] | None) -> tuple[JumpTo, ...]:
    found: list[JumpTo] = []
    for func in funcs:
        for target in getattr(getattr(func, "__func__", func), JUMP_ATTR, None) or ():
            if target not in found:
                found.append(target)
    return tuple(t for t in JUMP_TARGETS if t in found)  # canonical order for the plan


def is_middleware(obj: object) -> bool:
    """Whether ``obj`` is funcware's middleware, a composite, or one an adapter knows."""
    if isinstance(obj, AgentMiddleware) or hasattr(obj, "__funcware_hooks__"):
        return True
    return any(adapter.hooks(obj) is not None for adapter in adapters())


def hook_impls(middleware: Any) -> dict[HookName, HookImpl]:
    """The hooks ``middleware`` defines (a composite's, or from the first adapter that knows it)."""
    provided = getattr(middleware, "__funcware_hooks__", None)
    if provided is not None:
        return cast("dict[HookName, HookImpl]", provided())
    if not isinstance(middleware, AgentMiddleware):
        for adapter in adapters():
            found = adapter.hooks(middleware)
            if found is not None:
                return found
        from funcware.hooks.class_refusals import not_a_middleware

        raise not_a_middleware(middleware)
    return read_hooks(middleware, AgentMiddleware)


def read_hooks(
    middleware: Any,
    base: type,
    adapt: Callable[[HookName, Callable[..., Any]], Callable[..., Any]] | None = None,
) -> dict[HookName, HookImpl]:
    """The hooks ``middleware`` overrides from ``base``, each method through ``adapt`` if given."""
    cls = type(middleware)
    bases = (AgentMiddleware, base)
    check_class(cls, bases)
    found: dict[HookName, HookImpl] = {}
    for hook in HOOKS:
        sync = getattr(middleware, hook) if _overrides(cls, hook, bases) else None
        async_ = getattr(middleware, "a" + hook) if _overrides(cls, "a" + hook, bases) else None
        if sync is None and async_ is None:
            continue
        methods = (sync, async_)
        if adapt is not None:
            sync = sync and adapt(hook, sync)
            async_ = async_ and adapt(hook, async_)
        jumps = _jump_targets(sync, async_)
        if jumps and hook not in NODE_HOOKS:
            from funcware.hooks.class_refusals import jumps_on_a_wrap

            raise jumps_on_a_wrap(cls, hook, jumps, where(sync or async_))
        direct_sync, direct_async = _direct(sync), _direct(async_)
        node = hook in NODE_HOOKS  # a node hook is called with what it declares
        found[hook] = HookImpl(
            middleware,
            hook,
            direct_sync,
            direct_async,
            jumps,
            injection_for(direct_sync) if node and direct_sync is not None else PLAIN,
            injection_for(direct_async) if node and direct_async is not None else PLAIN,
            methods,
        )
    return found
