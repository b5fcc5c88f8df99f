"""The hook decorators: each lifts a plain function into a one-hook middleware.

``@before_model`` (and its siblings) generate an ``AgentMiddleware`` subclass named after
the function (or ``name=``) and return its instance. The instance stays callable exactly
like the function, so it can be unit-tested without an agent. ``hook_config`` stashes jump
targets on a function and works above or below the hook decorator, in either order.

Which options each decorator takes, how they are checked and where they land is the
registry's (:mod:`funcware.hooks.options`): the core's options are handled here, the
features' are checked by the function each feature registered and kept on the generated
class or the hook method.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, overload

from langchain_core.messages import SystemMessage
from typing_extensions import ParamSpec, Unpack

from funcware.hooks.injection import Injection, injection_for
from funcware.hooks.middleware import (
    DIRECT_ATTR,
    NODE_HOOKS,
    AgentMiddleware,
    HookName,
    hook_impls,
    where,
)
from funcware.hooks.options import (
    AfterAgentOptions,
    AfterModelOptions,
    Context,
    HookOptions,
    NodeOptions,
    WrapModelCallOptions,
    WrapToolCallOptions,
    document,
    option,
    options_for,
    unknown_option,
)
from funcware.hooks.types import JUMP_TARGETS, AgentState, JumpTo, ModelRequest
from funcware.hooks.wording import returned

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

P = ParamSpec("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])

_JUMP_ATTR = "__can_jump_to__"


class FunctionMiddleware(AgentMiddleware[Any, Any, Any], Generic[P, R]):
    """A middleware generated from one function. Calling it calls that function."""

    __wrapped__: Callable[P, R]

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.__wrapped__(*args, **kwargs)

    def __repr__(self) -> str:
        hooks = ", ".join(hook_impls(self)) or "no hooks"
        return f"<{hooks} middleware {self.name!r} from {where(self.__wrapped__)}>"


def _describe(obj: object) -> str:
    return f"{obj!r} ({type(obj).__name__})"


def _check_function(obj: object, decorator: str) -> Callable[..., Any]:
    if isinstance(obj, FunctionMiddleware):
        raise TypeError(
            f"@{decorator} was applied to {obj!r}, which is already a middleware. "
            "A function gets one hook decorator; use compose() to combine middleware."
        )
    if inspect.isfunction(obj) or inspect.ismethod(obj) or isinstance(obj, functools.partial):
        return obj
    hint = ""
    if isinstance(obj, str):
        hint = f" Did you mean @{decorator}(name={obj!r})?"
    elif inspect.isclass(obj):
        raise TypeError(
            f"@{decorator} expects a function, got the class {obj.__qualname__} "
            f"(@{decorator} applied at {_applied_at()}). To write a class, subclass "
            "AgentMiddleware and override the hook method."
        )
    raise TypeError(f"@{decorator} expects a function, got {_describe(obj)}.{hint}")


def _applied_at() -> str:
    """``file:line`` of the user's code that applied a decorator: the first frame outside
    funcware's hooks package (read only to word an error)."""
    here = os.path.dirname(os.path.realpath(__file__))
    frame = sys._getframe(1)
    while frame.f_back is not None and (
        os.path.dirname(os.path.realpath(frame.f_code.co_filename)) == here
    ):
        frame = frame.f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _label(func: Callable[..., Any]) -> str:
    return f"{getattr(func, '__qualname__', repr(func))!s} (defined at {where(func)})"


def _signature_text(func: Callable[..., Any]) -> str:
    try:
        return str(inspect.signature(func))
    except (TypeError, ValueError):
        return "(unknown)"


def _binds(func: Callable[..., Any], count: int) -> bool:
    try:
        inspect.signature(func).bind(*range(count))
    except TypeError:
        return False
    except ValueError:
        return True
    return True


def _normalise_jumps(value: object, func: Callable[..., Any], source: str) -> tuple[JumpTo, ...]:
    if value is None:
        return ()
    items: Sequence[object] = [value] if isinstance(value, str) else list(value)  # type: ignore[call-overload]
    bad = [item for item in items if item not in JUMP_TARGETS]
    if bad:
        raise ValueError(
            f"{source} got can_jump_to={value!r} for {_label(func)}: {bad!r} "
            f"is not a jump target. Allowed targets: {', '.join(JUMP_TARGETS)}."
        )
    return _in_order(items)  # type: ignore[arg-type]


def _in_order(*groups: Sequence[JumpTo]) -> tuple[JumpTo, ...]:
    """Every target of ``groups`` once, in the order first declared (as LangChain keeps it)."""
    return tuple(dict.fromkeys(t for group in groups for t in group))


_NODE_HOOK_NAMES = "before_agent, before_model, after_model and after_agent"


def _caller() -> str:
    """``file:line`` of the code that called the public decorator (two frames up)."""
    frame = sys._getframe(2)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _friendly(typed: type | None = None) -> Callable[[F], F]:
    """Check a public decorator's options before it runs, with messages that cite the caller.

    The options it takes are the registry's (:func:`~funcware.hooks.options.options_for`);
    ``typed`` (the decorator's ``TypedDict``) gives ``help()`` their annotations.
    """

    def wrap(public: F) -> F:
        name = public.__name__
        own = inspect.signature(public).parameters
        takes_function = any(p.kind is p.POSITIONAL_ONLY for p in own.values())

        @functools.wraps(public)
        def checked(*args: Any, **options: Any) -> Any:
            allowed = {o.name for o in options_for(name)}
            for key in options:
                if key not in allowed:
                    raise TypeError(unknown_option(name, key, _caller(), options[key]))
            if args and not takes_function:
                target = args[0]
                what = _label(target) if callable(target) else repr(target)
                listed = ", ".join(f"{o}=..." for o in own if o != "func")
                raise TypeError(
                    f"@{name} needs its options in parentheses: write @{name}({listed}) "
                    f"above {what}."
                )
            if len(args) > 1:
                raise TypeError(
                    f"@{name} (at {_caller()}) takes one function, got {len(args)} "
                    "positional arguments; pass options by keyword."
                )
            return public(*args, **options)

        if typed is not None:
            annotations = typed.__annotations__
            keywords = [
                inspect.Parameter(
                    key,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=getattr(option(key), "default", None),
                    annotation=getattr(hint, "__forward_arg__", hint),
                )
                for key, hint in annotations.items()
            ]
            first = [inspect.Parameter("func", inspect.Parameter.POSITIONAL_ONLY, default=None)]
            checked.__signature__ = inspect.Signature(first + keywords)  # type: ignore[attr-defined]
        document(name, checked)
        return checked  # type: ignore[return-value]

    return wrap


def _stash(target: Any, options: dict[str, Any], context: Context) -> dict[str, Any]:
    """Check the features' ``options``; mark ``target`` with the method ones, and return
    the class ones (attributes of the generated class)."""
    attributes: dict[str, Any] = {}
    for key, value in options.items():
        found = option(key)
        if found is None or found.check is None:
            continue
        if value is found.default or (value == found.default and type(value) is bool):
            continue
        kept = found.check(value, context)
        if found.target == "method":
            setattr(target, found.mark, kept)
        else:
            attributes[key] = kept
    completions = {
        id(o.complete): o.complete for k in attributes if (o := option(k)) and o.complete
    }
    for complete in completions.values():
        complete(attributes, context)
    return attributes


@_friendly()
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
    given = {"timeout": timeout, "always": always}
    marked = {key: value for key, value in given.items() if value not in (None, False)}

    def decorator(target: F) -> F:
        if isinstance(target, FunctionMiddleware):
            if can_jump_to is not None or not marked:
                _add_jumps_to_generated(target, can_jump_to)
            for impl in hook_impls(target).values():
                name = impl.hook if impl.sync is not None else "a" + impl.hook
                context = Context("hook_config", impl.hook, _label(target.__wrapped__))
                _stash(type(target).__dict__[name], marked, context)
            return target
        if inspect.isclass(target):
            raise TypeError(
                f"@hook_config was applied to the class {target.__qualname__} "
                f"({where(target)}); put it on the hook method instead: "
                "@hook_config(can_jump_to=[...]) above `def after_model(self, state, runtime)` "
                "inside the class."
            )
        func = _check_function(target, "hook_config")
        _stash(func, marked, Context("hook_config", "", _label(func)))
        jumps = _normalise_jumps(can_jump_to, func, "@hook_config")
        old: tuple[JumpTo, ...] = tuple(getattr(func, _JUMP_ATTR, ()) or ())
        setattr(func, _JUMP_ATTR, list(_in_order(old, jumps)))
        return target

    return decorator


def _add_jumps_to_generated(
    middleware: FunctionMiddleware[Any, Any], can_jump_to: Sequence[JumpTo] | None
) -> None:
    impls = hook_impls(middleware)
    node_hooks = [impl for hook, impl in impls.items() if hook in NODE_HOOKS]
    if not node_hooks:
        raise TypeError(
            f"@hook_config(can_jump_to=...) was applied to middleware {middleware.name!r} "
            f"({_label(middleware.__wrapped__)}), which defines only "
            f"{', '.join(impls)}; jumps apply to before_agent, before_model, after_model "
            "and after_agent hooks."
        )
    jumps = _normalise_jumps(can_jump_to, middleware.__wrapped__, "@hook_config")
    for impl in node_hooks:
        name = impl.hook if impl.sync is not None else "a" + impl.hook
        adapter = type(middleware).__dict__[name]
        old: tuple[JumpTo, ...] = tuple(getattr(adapter, _JUMP_ATTR, ()) or ())
        setattr(adapter, _JUMP_ATTR, list(_in_order(old, jumps)))


def _binds_call(func: Callable[..., Any], call: Injection) -> bool:
    try:
        inspect.signature(func).bind(
            *range(call.positional), **{name: None for name, _, _ in call.extras}
        )
    except TypeError:
        return False
    except ValueError:
        return True
    return True


def _node_adapter(func: Callable[..., Any], hook: HookName) -> Callable[..., Any]:
    call = injection_for(func)
    if not _binds_call(func, call):
        raise TypeError(
            f"@{hook} cannot use {_label(func)}: a {hook} hook is called as f(state) or "
            f"f(state, runtime) (and gets langgraph's config, writer, store, ... by name), "
            f"but its signature is {_signature_text(func)}. "
            f"Define it as `def {getattr(func, '__name__', 'hook')}(state, runtime): ...`."
        )
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
        raise TypeError(
            f"@{hook} cannot use {_label(func)}: a {hook} hook is called as "
            f"f(request, handler), but its signature is {_signature_text(func)}. "
            f"Define it as `def {getattr(func, '__name__', 'hook')}(request, handler): ...`."
        )
    if inspect.iscoroutinefunction(func):

        async def async_wrap(self: Any, request: Any, handler: Any) -> Any:
            return await func(request, handler)

        setattr(async_wrap, DIRECT_ATTR, func)
        return async_wrap

    def sync_wrap(self: Any, request: Any, handler: Any) -> Any:
        return func(request, handler)

    setattr(sync_wrap, DIRECT_ATTR, func)
    return sync_wrap


def _prompt_message(func: Callable[..., Any], value: object) -> SystemMessage:
    if isinstance(value, SystemMessage):
        return value
    if isinstance(value, str):
        return SystemMessage(content=value)
    raise TypeError(
        f"@dynamic_prompt function {_label(func)} returned {returned(value, handler=False)}; "
        "it must return a str or a SystemMessage."
    )


def _prompt_adapter(func: Callable[..., Any]) -> Callable[..., Any]:
    if not _binds(func, 1):
        raise TypeError(
            f"@dynamic_prompt cannot use {_label(func)}: it is called as f(request), "
            f"but its signature is {_signature_text(func)}. "
            f"Define it as `def {getattr(func, '__name__', 'prompt')}(request): ...`."
        )
    if inspect.iscoroutinefunction(func):

        async def async_prompt(self: Any, request: ModelRequest[Any], handler: Any) -> Any:
            message = _prompt_message(func, await func(request))
            return await handler(request.override(system_message=message))

        return async_prompt

    def sync_prompt(self: Any, request: ModelRequest[Any], handler: Any) -> Any:
        message = _prompt_message(func, func(request))
        return handler(request.override(system_message=message))

    return sync_prompt


def _check_schema(state_schema: object, func: Callable[..., Any], decorator: str) -> None:
    if state_schema is not None and not (
        inspect.isclass(state_schema) and hasattr(state_schema, "__annotations__")
    ):
        raise TypeError(
            f"@{decorator} got state_schema={state_schema!r} for {_label(func)}; "
            "it must be a TypedDict class deriving from AgentState."
        )


def _lift(
    target: object,
    hook: HookName,
    adapter: Callable[[Callable[..., Any]], Callable[..., Any]],
    *,
    decorator: str,
    state_schema: object = None,
    tools: Sequence[BaseTool | dict[str, Any]] | None = None,
    can_jump_to: Sequence[JumpTo] | None = None,
    name: str | None = None,
    stream_internal_calls: bool = False,
    **options: Any,
) -> FunctionMiddleware[Any, Any]:
    """The generated middleware for ``target``; ``options`` are the features' (checked by
    the function each registered)."""
    func = _check_function(target, decorator)
    context = Context(decorator, hook, _label(func))
    _check_schema(state_schema, func, decorator)
    if name is not None and (not isinstance(name, str) or not name):
        raise TypeError(f"@{decorator} got name={name!r} for {_label(func)}; use a non-empty str.")
    if not isinstance(stream_internal_calls, bool):
        raise TypeError(
            f"{context.source} got stream_internal_calls={stream_internal_calls!r}; "
            "use True or False."
        )
    method = adapter(func)
    method.__wrapped__ = func  # type: ignore[attr-defined]
    method.__qualname__ = f"{getattr(func, '__qualname__', 'hook')}.<{hook}>"
    attributes = _stash(method, options, context)
    for found in options_for("hook_config"):  # marks hook_config left on the function
        if found.target == "method" and hasattr(func, found.mark):
            _stash(method, {found.name: getattr(func, found.mark)}, context)
    if hook in NODE_HOOKS:
        jumps = _normalise_jumps(can_jump_to, func, f"@{decorator}")
        stashed = _normalise_jumps(getattr(func, _JUMP_ATTR, None), func, "@hook_config")
        setattr(method, _JUMP_ATTR, list(_in_order(jumps, stashed)))
    elif getattr(func, _JUMP_ATTR, None):
        raise TypeError(
            f"@hook_config(can_jump_to=...) on {_label(func)} has no effect on a {hook} hook; "
            "jumps apply to before_agent, before_model, after_model and after_agent hooks."
        )
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


class Lifted(Protocol):
    """What a called decorator (``@before_model(...)``) returns; generic per function.

    A protocol, not a ``Callable`` alias: with an alias, mypy solves ``P``/``R`` at
    ``before_model(...)`` (to ``Never``) instead of at the decorated function.
    """

    def __call__(self, func: Callable[P, R], /) -> FunctionMiddleware[P, R]: ...


def _hook_decorator(
    hook: HookName, adapter: Callable[[Callable[..., Any]], Callable[..., Any]], decorator: str
) -> Any:
    """The runtime body of one public decorator: lift bare, or take options and then lift."""

    def decorate(func: object = None, /, **options: Any) -> Any:
        def lift(target: object) -> FunctionMiddleware[Any, Any]:
            return _lift(target, hook, adapter, decorator=decorator, **options)

        return lift if func is None else lift(func)

    return decorate


def _node_decorator(hook: HookName) -> Any:
    return _hook_decorator(hook, lambda f: _node_adapter(f, hook), hook)


_before_agent = _node_decorator("before_agent")
_before_model = _node_decorator("before_model")
_after_model = _node_decorator("after_model")
_after_agent = _node_decorator("after_agent")
_wrap_model_call = _hook_decorator(
    "wrap_model_call", lambda f: _wrap_adapter(f, "wrap_model_call"), "wrap_model_call"
)
_wrap_tool_call = _hook_decorator(
    "wrap_tool_call", lambda f: _wrap_adapter(f, "wrap_tool_call"), "wrap_tool_call"
)
_dynamic_prompt = _hook_decorator("wrap_model_call", _prompt_adapter, "dynamic_prompt")


@overload
def before_agent(func: Callable[P, R], /) -> FunctionMiddleware[P, R]: ...
@overload
def before_agent(func: None = None, /, **options: Unpack[NodeOptions]) -> Lifted: ...
@_friendly(NodeOptions)
def before_agent(func: Any = None, /, **options: Any) -> Any:
    """Lift ``func(state[, runtime])`` into a middleware run once per invocation, first.

    The function returns a dict of state updates, a ``Command`` or ``None``; it may be
    ``async def`` (used by ``ainvoke``; a sync one works there too, and vice versa).
    Use it bare (``@before_agent``) or with options (``@before_agent(name=...)``).


    Example::

        @before_agent
        def load_profile(state, runtime):
            return {"profile": load(runtime.context.user_id)}
    """
    return _before_agent(func, **options)


@overload
def before_model(func: Callable[P, R], /) -> FunctionMiddleware[P, R]: ...
@overload
def before_model(func: None = None, /, **options: Unpack[NodeOptions]) -> Lifted: ...
@_friendly(NodeOptions)
def before_model(func: Any = None, /, **options: Any) -> Any:
    """Lift ``func(state[, runtime])`` into a middleware run before every model call.

    The function returns a dict of state updates, a ``Command`` or ``None``; it may be
    ``async def`` (used by ``ainvoke``; a sync one works there too, and vice versa).
    Use it bare (``@before_model``) or with options (``@before_model(name=...)``).


    Example::

        @before_model(can_jump_to=["end"])
        def message_limit(state):
            return {"jump_to": "end"} if len(state["messages"]) > 50 else None
    """
    return _before_model(func, **options)


@overload
def after_model(func: Callable[P, R], /) -> FunctionMiddleware[P, R]: ...
@overload
def after_model(func: None = None, /, **options: Unpack[AfterModelOptions]) -> Lifted: ...
@_friendly(AfterModelOptions)
def after_model(func: Any = None, /, **options: Any) -> Any:
    """Lift ``func(state[, runtime])`` into a middleware run after every model call.

    The function returns a dict of state updates, a ``Command`` or ``None``; it may be
    ``async def`` (used by ``ainvoke``; a sync one works there too, and vice versa).
    Use it bare (``@after_model``) or with options (``@after_model(name=...)``).


    Example::

        @after_model
        def count_calls(state):
            return {"model_calls": state.get("model_calls", 0) + 1}
    """
    return _after_model(func, **options)


@overload
def after_agent(func: Callable[P, R], /) -> FunctionMiddleware[P, R]: ...
@overload
def after_agent(func: None = None, /, **options: Unpack[AfterAgentOptions]) -> Lifted: ...
@_friendly(AfterAgentOptions)
def after_agent(func: Any = None, /, **options: Any) -> Any:
    """Lift ``func(state[, runtime])`` into a middleware run once, when the agent ends.

    The function returns a dict of state updates, a ``Command`` or ``None``; it may be
    ``async def`` (used by ``ainvoke``; a sync one works there too, and vice versa).
    Use it bare (``@after_agent``) or with options (``@after_agent(name=...)``).


    Example::

        @after_agent
        def audit(state):
            log(state["messages"][-1].text)
    """
    return _after_agent(func, **options)


@overload
def wrap_model_call(func: Callable[P, R], /) -> FunctionMiddleware[P, R]: ...
@overload
def wrap_model_call(func: None = None, /, **options: Unpack[WrapModelCallOptions]) -> Lifted: ...
@_friendly(WrapModelCallOptions)
def wrap_model_call(func: Any = None, /, **options: Any) -> Any:
    """Lift ``func(request, handler)`` into a middleware around every model call.

    ``handler(request)`` runs the inner layers and the model and returns a
    ``ModelResponse``; the function returns a ``ModelResponse``, an ``AIMessage`` or an
    ``ExtendedModelResponse`` (a response plus a ``Command`` whose update is written to the
    state). It may call the handler again (retry) or not at all (a cached answer).


    Example::

        @wrap_model_call
        def retry_once(request, handler):
            try:
                return handler(request)
            except TimeoutError:
                return handler(request.override(model_settings={"timeout": 60}))
    """
    return _wrap_model_call(func, **options)


@overload
def wrap_tool_call(func: Callable[P, R], /) -> FunctionMiddleware[P, R]: ...
@overload
def wrap_tool_call(func: None = None, /, **options: Unpack[WrapToolCallOptions]) -> Lifted: ...
@_friendly(WrapToolCallOptions)
def wrap_tool_call(func: Any = None, /, **options: Any) -> Any:
    """Lift ``func(request, handler)`` into a middleware around every tool call.

    ``request.tool_call`` is the call (``name``, ``args``, ``id``); ``handler(request)``
    runs the inner layers and the tool. The function returns a ``ToolMessage`` answering
    that call (``tool_call_id=request.tool_call["id"]``) or a langgraph ``Command``.


    Example::

        @wrap_tool_call
        def log_tools(request, handler):
            print("calling", request.tool_call["name"])
            return handler(request)
    """
    return _wrap_tool_call(func, **options)


@overload
def dynamic_prompt(func: Callable[P, R], /) -> FunctionMiddleware[P, R]: ...
@overload
def dynamic_prompt(func: None = None, /, **options: Unpack[HookOptions]) -> Lifted: ...
@_friendly(HookOptions)
def dynamic_prompt(func: Any = None, /, **options: Any) -> Any:
    """Lift ``func(request) -> str | SystemMessage`` into a middleware setting the prompt.

    The returned prompt replaces the request's system message for that model call.


    Example::

        @dynamic_prompt
        def by_user(request):
            return f"You help {request.runtime.context.user_name}."
    """
    return _dynamic_prompt(func, **options)
