"""Why a hook decorator refuses what it was given: the errors of :mod:`.decorators`.

Each function words one refusal and returns the exception for the decorator to raise; this
module loads only when something is wrong.
"""

from __future__ import annotations

import difflib
import inspect
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from funcware.hooks.decorators import FunctionMiddleware, _label
from funcware.hooks.options import Context, option, options_for
from funcware.hooks.types import JUMP_TARGETS
from funcware.hooks.wording import returned


def _applied_at() -> str:
    """``file:line`` of the user's code that applied a decorator: the first frame outside
    funcware's hooks package."""
    here = os.path.dirname(os.path.realpath(__file__))
    frame = sys._getframe(1)
    while frame.f_back is not None and (
        os.path.dirname(os.path.realpath(frame.f_code.co_filename)) == here
    ):
        frame = frame.f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _signature_text(func: Callable[..., Any]) -> str:
    try:
        return str(inspect.signature(func))
    except (TypeError, ValueError):
        return "(unknown)"


def not_a_function(obj: object, decorator: str) -> TypeError:
    """``@decorator`` was applied to something other than a function."""
    if isinstance(obj, FunctionMiddleware):
        return TypeError(
            f"@{decorator} was applied to {obj!r}, which is already a middleware. "
            "A function gets one hook decorator; use compose() to combine middleware."
        )
    if inspect.isclass(obj):
        return TypeError(
            f"@{decorator} expects a function, got the class {obj.__qualname__} "
            f"(@{decorator} applied at {_applied_at()}). To write a class, subclass "
            "AgentMiddleware and override the hook method."
        )
    hint = f" Did you mean @{decorator}(name={obj!r})?" if isinstance(obj, str) else ""
    return TypeError(f"@{decorator} expects a function, got {obj!r} ({type(obj).__name__}).{hint}")


def bad_call(
    decorator: str, args: tuple[Any, ...], options: dict[str, Any], own: Sequence[str]
) -> TypeError:
    """The call ``@decorator(*args, **options)`` is wrong: an unknown option, options not in
    parentheses, or more than one function. ``own`` are the decorator's parameters."""
    at = sys._getframe(2)  # the user's code, which called the public decorator
    caller = f"{at.f_code.co_filename}:{at.f_lineno}"
    allowed = {o.name for o in options_for(decorator)}
    for key in options:
        if key not in allowed:
            return TypeError(unknown_option(decorator, key, caller, options[key]))
    if "func" not in own:  # hook_config: options only
        target = args[0]
        what = _label(target) if callable(target) else repr(target)
        listed = ", ".join(f"{o}=..." for o in own)
        return TypeError(
            f"@{decorator} needs its options in parentheses: write @{decorator}({listed}) "
            f"above {what}."
        )
    return TypeError(
        f"@{decorator} (at {caller}) takes one function, got {len(args)} "
        "positional arguments; pass options by keyword."
    )


def bad_signature(decorator: str, func: Callable[..., Any]) -> TypeError:
    """``func`` cannot be called the way ``@decorator``'s hook is."""
    if decorator == "dynamic_prompt":
        return TypeError(
            f"@dynamic_prompt cannot use {_label(func)}: it is called as f(request), "
            f"but its signature is {_signature_text(func)}. "
            f"Define it as `def {getattr(func, '__name__', 'prompt')}(request): ...`."
        )
    if decorator in ("wrap_model_call", "wrap_tool_call"):
        called, parameters = "f(request, handler)", "request, handler"
    else:
        called = (
            "f(state) or f(state, runtime) (and gets langgraph's config, writer, store, ... "
            "by name)"
        )
        parameters = "state, runtime"
    return TypeError(
        f"@{decorator} cannot use {_label(func)}: a {decorator} hook is called as "
        f"{called}, but its signature is {_signature_text(func)}. "
        f"Define it as `def {getattr(func, '__name__', 'hook')}({parameters}): ...`."
    )


def bad_core_option(
    context: Context, state_schema: object, name: object, internal: object
) -> TypeError:
    """The first of ``state_schema=``, ``name=`` and ``stream_internal_calls=`` that is wrong."""
    decorator, label = context.decorator, context.function
    if state_schema is not None and not (
        inspect.isclass(state_schema) and hasattr(state_schema, "__annotations__")
    ):
        return TypeError(
            f"@{decorator} got state_schema={state_schema!r} for {label}; "
            "it must be a TypedDict class deriving from AgentState."
        )
    if name is not None and (not isinstance(name, str) or not name):
        return TypeError(f"@{decorator} got name={name!r} for {label}; use a non-empty str.")
    return TypeError(f"{context.source} got stream_internal_calls={internal!r}; use True or False.")


def bad_jumps(
    value: object, func: Callable[..., Any], source: str, bad: list[object]
) -> ValueError:
    """``can_jump_to=value`` names targets that are no jump targets (``bad``)."""
    return ValueError(
        f"{source} got can_jump_to={value!r} for {_label(func)}: {bad!r} "
        f"is not a jump target. Allowed targets: {', '.join(JUMP_TARGETS)}."
    )


def jumps_on_a_wrap(func: Callable[..., Any], hook: str) -> TypeError:
    """``@hook_config(can_jump_to=...)`` sits on a function lifted into a wrap hook."""
    return TypeError(
        f"@hook_config(can_jump_to=...) on {_label(func)} has no effect on a {hook} hook; "
        "jumps apply to before_agent, before_model, after_model and after_agent hooks."
    )


def jumps_without_node_hooks(
    middleware: FunctionMiddleware[Any, Any], hooks: Sequence[str]
) -> TypeError:
    """``@hook_config(can_jump_to=...)`` above a generated middleware with no node hook."""
    return TypeError(
        f"@hook_config(can_jump_to=...) was applied to middleware {middleware.name!r} "
        f"({_label(middleware.__wrapped__)}), which defines only "
        f"{', '.join(hooks)}; jumps apply to before_agent, before_model, after_model "
        "and after_agent hooks."
    )


def hook_config_on_a_class(target: type, where: str) -> TypeError:
    """``@hook_config`` was applied to a class rather than its hook method."""
    return TypeError(
        f"@hook_config was applied to the class {target.__qualname__} "
        f"({where}); put it on the hook method instead: "
        "@hook_config(can_jump_to=[...]) above `def after_model(self, state, runtime)` "
        "inside the class."
    )


def bad_prompt(func: Callable[..., Any], value: object) -> TypeError:
    """A ``@dynamic_prompt`` function returned something other than a prompt."""
    return TypeError(
        f"@dynamic_prompt function {_label(func)} returned {returned(value, handler=False)}; "
        "it must return a str or a SystemMessage."
    )


def unknown_option(decorator: str, key: str, at: str, value: object = None) -> str:
    """Why ``@decorator`` refuses ``key=value`` (given at ``at``), and what it takes instead."""
    allowed = [o.name for o in options_for(decorator)]
    known = option(key)
    if known is not None:
        takers = sorted(d for d in known.decorators if d != "hook_config")
        why = f" {known.elsewhere}" if known.elsewhere else ""
        return (
            f"@{decorator} (at {at}) does not take {key}= (got {key}={value!r}): {key}= "
            f"applies to {' and '.join(takers)} hooks only.{why} Its options: "
            f"{', '.join(allowed) or 'none'}."
        )
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f" Did you mean {close[0]}=?" if close else ""
    return (
        f"@{decorator} (at {at}) got an unknown option {key}=.{hint} Its options: "
        f"{', '.join(allowed) or 'none'}."
    )
