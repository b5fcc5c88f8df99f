"""The hook decorators: each lifts a function into an instance of a generated one-hook
``AgentMiddleware`` subclass named after it, callable like it. Refusals: :mod:`.refusals`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from typing_extensions import ParamSpec, Unpack

from funcware.hooks.injection import injection_for
from funcware.hooks.middleware import (
    DIRECT_ATTR,
    JUMP_ATTR,
    NODE_HOOKS,
    AgentMiddleware,
    HookName,
    hook_impls,
    where,
)
from funcware.hooks.options import Context, document, options_for
from funcware.hooks.types import AgentState, JumpTo

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from funcware.hooks.option_types import (
        AfterAgentOptions,
        AfterModelOptions,
        HookOptions,
        Lifted,
        NodeOptions,
        WrapModelCallOptions,
        WrapToolCallOptions,
    )

P = ParamSpec("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])


class FunctionMiddleware(AgentMiddleware[Any, Any, Any], Generic[P, R]):
    """A middleware generated from one function. Calling it calls that function."""

    __wrapped__: Callable[P, R]

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.__wrapped__(*args, **kwargs)

    def __repr__(self) -> str:
        hooks = ", ".join(hook_impls(self)) or "no hooks"
        return f"<{hooks} middleware {self.name!r} from {where(self.__wrapped__)}>"


def _check_function(obj: object, decorator: str) -> Callable[..., Any]:
    if not isinstance(obj, FunctionMiddleware) and (
        inspect.isfunction(obj) or inspect.ismethod(obj) or isinstance(obj, functools.partial)
    ):
        return obj
    from funcware.hooks.refusals import not_a_function

    raise not_a_function(obj, decorator)


def _label(func: Callable[..., Any]) -> str:
    return f"{getattr(func, '__qualname__', repr(func))!s} (defined at {where(func)})"


def _binds(func: Callable[..., Any], positional: int, names: Sequence[str] = ()) -> bool:
    """Whether ``func`` takes ``positional`` arguments and the keywords ``names`` (or may)."""
    try:
        inspect.signature(func).bind(*range(positional), **dict.fromkeys(names))
    except TypeError:
        return False
    except ValueError:
        return True
    return True


def _friendly(typed: bool = True) -> Callable[[F], F]:
    """Check a public decorator's arguments against the registry; ``typed``: its signature
    shows the options with their types."""

    def wrap(public: F) -> F:
        name = public.__name__
        own = list(inspect.signature(public).parameters)
        most = 1 if "func" in own else 0  # positional arguments: the function, if it takes one

        @functools.wraps(public)
        def checked(*args: Any, **options: Any) -> Any:
            allowed = {o.name for o in options_for(name)}
            if len(args) > most or not allowed.issuperset(options):
                from funcware.hooks.refusals import bad_call

                raise bad_call(name, args, options, own)
            return public(*args, **options)

        document(name, checked, signed=typed)
        return checked  # type: ignore[return-value]

    return wrap


@_friendly(typed=False)
def hook_config(
    *,
    can_jump_to: Sequence[JumpTo] | None = None,
    timeout: float | None = None,
    always: bool = False,
) -> Callable[[F], F]:
    """Declare where a node hook may jump (``"model"``, ``"tools"``, ``"end"``), its deadline
    and whether an ``after_agent`` hook always runs.

    Put it above or below a hook decorator, or on a hook method of an
    ``AgentMiddleware`` subclass. Targets from several places are united.

    Example::

        @hook_config(can_jump_to=["end"])
        @after_model
        def stop_on_done(state):
            return {"jump_to": "end"} if "DONE" in state["messages"][-1].text else None
    """
    from funcware.hooks.configuring import configure

    return configure(can_jump_to, timeout, always)


def _node_adapter(func: Callable[..., Any], hook: HookName) -> Callable[..., Any]:
    call = injection_for(func)
    if not _binds(func, call.positional, [name for name, _, _ in call.extras]):
        from funcware.hooks.refusals import bad_signature

        raise bad_signature(hook, func)
    takes_runtime = call.positional == 2
    if inspect.iscoroutinefunction(func):

        async def async_node(self: Any, state: Any, runtime: Any, **injected: Any) -> Any:
            if takes_runtime:
                return await func(state, runtime, **injected)
            return await func(state, **injected)

        adapter: Callable[..., Any] = async_node
    else:

        def sync_node(self: Any, state: Any, runtime: Any, **injected: Any) -> Any:
            return func(state, runtime, **injected) if takes_runtime else func(state, **injected)

        adapter = sync_node
    setattr(adapter, DIRECT_ATTR, func)  # agents call func itself, with what it declares
    return adapter


def _wrap_adapter(func: Callable[..., Any], hook: HookName) -> Callable[..., Any]:
    if not _binds(func, 2):
        from funcware.hooks.refusals import bad_signature

        raise bad_signature(hook, func)
    if inspect.iscoroutinefunction(func):

        async def async_wrap(self: Any, request: Any, handler: Any) -> Any:
            return await func(request, handler)

        setattr(async_wrap, DIRECT_ATTR, func)
        return async_wrap

    def sync_wrap(self: Any, request: Any, handler: Any) -> Any:
        return func(request, handler)

    setattr(sync_wrap, DIRECT_ATTR, func)
    return sync_wrap


def _core_options_ok(state_schema: object, name: object, stream_internal_calls: object) -> bool:
    """Whether the core's options are of the types they take (else :mod:`.refusals` says)."""
    schema_ok = state_schema is None or (
        inspect.isclass(state_schema) and hasattr(state_schema, "__annotations__")
    )
    name_ok = name is None or (isinstance(name, str) and bool(name))
    return schema_ok and name_ok and isinstance(stream_internal_calls, bool)


def _lift(
    target: object,
    hook: HookName,
    adapter: Callable[[Callable[..., Any], HookName], Callable[..., Any]],
    *,
    decorator: str,
    state_schema: object = None,
    tools: Sequence[BaseTool | dict[str, Any]] | None = None,
    can_jump_to: Sequence[JumpTo] | None = None,
    name: str | None = None,
    stream_internal_calls: bool = False,
    **options: Any,
) -> FunctionMiddleware[Any, Any]:
    """The generated middleware for ``target``; ``options`` are the features'."""
    func = _check_function(target, decorator)
    context = Context(decorator, hook, _label(func))
    if not _core_options_ok(state_schema, name, stream_internal_calls):
        from funcware.hooks.refusals import bad_core_option

        raise bad_core_option(context, state_schema, name, stream_internal_calls)
    method = adapter(func, hook)
    method.__wrapped__ = func  # type: ignore[attr-defined]
    method.__qualname__ = f"{getattr(func, '__qualname__', 'hook')}.<{hook}>"
    attributes: dict[str, Any] = {}
    if options or any(hasattr(func, o.mark) for o in options_for("hook_config")):
        from funcware.hooks.option_values import apply_options

        attributes = apply_options(method, func, options, context)
    if hook in NODE_HOOKS:
        jumps: list[JumpTo] = []
        if can_jump_to is not None or getattr(func, JUMP_ATTR, None) is not None:
            from funcware.hooks.jumps import declared_jumps

            jumps = declared_jumps(can_jump_to, func, decorator)
        setattr(method, JUMP_ATTR, jumps)
    elif getattr(func, JUMP_ATTR, None):
        from funcware.hooks.refusals import jumps_on_a_wrap

        raise jumps_on_a_wrap(func, hook)
    method_name = ("a" + hook) if inspect.iscoroutinefunction(func) else hook
    class_name = name or getattr(func, "__name__", None) or type(func).__name__
    namespace: dict[str, Any] = {
        method_name: method,
        "__module__": getattr(func, "__module__", __name__),
        "__qualname__": getattr(func, "__qualname__", class_name) if name is None else name,
        "__doc__": getattr(func, "__doc__", None),
        "state_schema": state_schema if state_schema is not None else AgentState,
        "tools": list(tools or ()),
        **attributes,
    }
    if stream_internal_calls:
        namespace["stream_internal_calls"] = True
    cls = type(class_name, (FunctionMiddleware,), namespace)
    instance: FunctionMiddleware[Any, Any] = cls()
    functools.update_wrapper(instance, func, updated=())
    return instance


def _decorate(
    func: object,
    options: dict[str, Any],
    hook: HookName,
    adapter: Callable[[Callable[..., Any], HookName], Callable[..., Any]],
    decorator: str | None = None,
) -> Any:
    """One public decorator's body: lift ``func``, or (called with options) return the lift."""

    def lift(target: object) -> FunctionMiddleware[Any, Any]:
        return _lift(target, hook, adapter, decorator=decorator or hook, **options)

    return lift if func is None else lift(func)


@overload
def before_agent(func: Callable[P, R], /) -> FunctionMiddleware[P, R]: ...
@overload
def before_agent(func: None = None, /, **options: Unpack[NodeOptions]) -> Lifted: ...
@_friendly()
def before_agent(func: Any = None, /, **options: Any) -> Any:
    """Lift ``func(state[, runtime])`` into a middleware run once per invocation, first.

    It returns a dict of state updates, a ``Command`` or ``None``; it may be ``async def``.

    Example::

        @before_agent
        def load_profile(state, runtime):
            return {"profile": load(runtime.context.user_id)}
    """
    return _decorate(func, options, "before_agent", _node_adapter)


@overload
def before_model(func: Callable[P, R], /) -> FunctionMiddleware[P, R]: ...
@overload
def before_model(func: None = None, /, **options: Unpack[NodeOptions]) -> Lifted: ...
@_friendly()
def before_model(func: Any = None, /, **options: Any) -> Any:
    """Lift ``func(state[, runtime])`` into a middleware run before every model call.

    It returns a dict of state updates, a ``Command`` or ``None``; it may be ``async def``.

    Example::

        @before_model(can_jump_to=["end"])
        def message_limit(state):
            return {"jump_to": "end"} if len(state["messages"]) > 50 else None
    """
    return _decorate(func, options, "before_model", _node_adapter)


@overload
def after_model(func: Callable[P, R], /) -> FunctionMiddleware[P, R]: ...
@overload
def after_model(func: None = None, /, **options: Unpack[AfterModelOptions]) -> Lifted: ...
@_friendly()
def after_model(func: Any = None, /, **options: Any) -> Any:
    """Lift ``func(state[, runtime])`` into a middleware run after every model call.

    It returns a dict of state updates, a ``Command`` or ``None``; it may be ``async def``.

    Example::

        @after_model
        def count_calls(state):
            return {"model_calls": state.get("model_calls", 0) + 1}
    """
    return _decorate(func, options, "after_model", _node_adapter)


@overload
def after_agent(func: Callable[P, R], /) -> FunctionMiddleware[P, R]: ...
@overload
def after_agent(func: None = None, /, **options: Unpack[AfterAgentOptions]) -> Lifted: ...
@_friendly()
def after_agent(func: Any = None, /, **options: Any) -> Any:
    """Lift ``func(state[, runtime])`` into a middleware run once, when the agent ends.

    It returns a dict of state updates, a ``Command`` or ``None``; it may be ``async def``.

    Example::

        @after_agent
        def audit(state):
            log(state["messages"][-1].text)
    """
    return _decorate(func, options, "after_agent", _node_adapter)


@overload
def wrap_model_call(func: Callable[P, R], /) -> FunctionMiddleware[P, R]: ...
@overload
def wrap_model_call(func: None = None, /, **options: Unpack[WrapModelCallOptions]) -> Lifted: ...
@_friendly()
def wrap_model_call(func: Any = None, /, **options: Any) -> Any:
    """Lift ``func(request, handler)`` into a middleware around every model call.

    ``handler(request)`` runs the inner layers and the model and returns a ``ModelResponse``;
    the function returns a ``ModelResponse``, an ``AIMessage`` or an ``ExtendedModelResponse``
    (plus a ``Command`` updating the state), and may call the handler again or not at all.

    Example::

        @wrap_model_call
        def retry_once(request, handler):
            try:
                return handler(request)
            except TimeoutError:
                return handler(request.override(model_settings={"timeout": 60}))
    """
    return _decorate(func, options, "wrap_model_call", _wrap_adapter)


@overload
def wrap_tool_call(func: Callable[P, R], /) -> FunctionMiddleware[P, R]: ...
@overload
def wrap_tool_call(func: None = None, /, **options: Unpack[WrapToolCallOptions]) -> Lifted: ...
@_friendly()
def wrap_tool_call(func: Any = None, /, **options: Any) -> Any:
    """Lift ``func(request, handler)`` into a middleware around every tool call.

    ``request.tool_call`` is the call (``name``, ``args``, ``id``); ``handler(request)`` runs
    the inner layers and the tool. The function returns a ``ToolMessage`` answering that
    call (``tool_call_id=request.tool_call["id"]``) or a langgraph ``Command``.

    Example::

        @wrap_tool_call
        def log_tools(request, handler):
            print("calling", request.tool_call["name"])
            return handler(request)
    """
    return _decorate(func, options, "wrap_tool_call", _wrap_adapter)


@overload
def dynamic_prompt(func: Callable[P, R], /) -> FunctionMiddleware[P, R]: ...
@overload
def dynamic_prompt(func: None = None, /, **options: Unpack[HookOptions]) -> Lifted: ...
@_friendly()
def dynamic_prompt(func: Any = None, /, **options: Any) -> Any:
    """Lift ``func(request) -> str | SystemMessage`` into a middleware setting the prompt:
    it replaces the request's system message for that model call.

    Example::

        @dynamic_prompt
        def by_user(request):
            return f"You help {request.runtime.context.user_name}."
    """
    from funcware.hooks.prompts import prompt_adapter

    return _decorate(func, options, "wrap_model_call", prompt_adapter, "dynamic_prompt")
