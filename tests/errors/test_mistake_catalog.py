"""A catalog of mistakes users make, each one refused with a precise message.

Every entry does one mistake and asserts the exception type, that the message names the
middleware and hook (or, for a list mistake, the argument and position), cites the user's
``file:line`` where there is a function or class to cite, and says what to do instead.
None of them may pass silently.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.errors import GraphRecursionError
from langgraph.types import Command, interrupt
from support import NODE_DECORATORS

from funcware import (
    AgentMiddleware,
    AgentState,
    BrokenStackError,
    ExtendedModelResponse,
    InvalidJumpError,
    MissingCheckpointerError,
    ModelResponse,
    UnknownNodeError,
    UnknownStateKeyError,
    after_model,
    before_model,
    compose,
    create_agent,
    dynamic_prompt,
    explain,
    hook_config,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.errors import StateSchemaConflictWarning
from funcware.testing import ScriptedChatModel

NODE_HOOKS = ("before_agent", "before_model", "after_model", "after_agent")
ALL_DECORATORS: dict[str, Any] = {
    **NODE_DECORATORS,
    "wrap_model_call": wrap_model_call,
    "wrap_tool_call": wrap_tool_call,
    "dynamic_prompt": dynamic_prompt,
}
CLASS_HOOKS = (*NODE_HOOKS, "wrap_model_call", "wrap_tool_call")


@dataclass(frozen=True)
class Mistake:
    """One user mistake: doing it must raise ``error`` (warn it, for a warning class) with a
    message saying ``says``."""

    name: str
    make: Callable[[], object]
    error: type[BaseException]
    says: tuple[str, ...]
    at: object = None
    """The user's function or class whose ``file:line`` the message must cite."""


CATALOG: list[Mistake] = []


def mistake(name: str, error: type[BaseException], *says: str, at: object = None) -> Any:
    """Register the decorated function (which makes the mistake) in the catalog."""

    def register(make: Callable[[], object]) -> Callable[[], object]:
        CATALOG.append(Mistake(name, make, error, says, at))
        return make

    return register


def add(
    name: str, make: Callable[[], object], error: type[BaseException], *says: str, at: object = None
) -> None:
    CATALOG.append(Mistake(name, make, error, says, at))


def location(obj: object) -> str:
    """``file:line`` of a function or class, as funcware cites it."""
    target: Any = inspect.unwrap(obj) if callable(obj) else obj  # type: ignore[arg-type]
    code = getattr(target, "__code__", None)
    if code is not None:
        return f"{code.co_filename}:{code.co_firstlineno}"
    # a class: the class statement's line for middleware classes (recorded when the class
    # is made) and where Python records it (3.13+); else its first method's line (funcware
    # reads no source): either points into the class
    file = inspect.getsourcefile(target)
    if issubclass(target, AgentMiddleware):
        return f"{file}:{inspect.getsourcelines(target)[1]}"
    line = getattr(target, "__firstlineno__", None)
    if line is None:
        methods = [v for v in vars(target).values() if inspect.isfunction(v)]
        line = min(m.__code__.co_firstlineno for m in methods)
    return f"{file}:{line}"


def full_text(exc: BaseException) -> str:
    return "\n".join([str(exc), *getattr(exc, "__notes__", [])])


def model(*responses: Any) -> ScriptedChatModel:
    return ScriptedChatModel(responses=list(responses) or ["ok"])


def hi() -> dict[str, Any]:
    return {"messages": [HumanMessage("hi")]}


def _effects(error: type[BaseException]) -> Any:
    """An unknown state key is an error only with ``effects="strict"`` (else a warning)."""
    return "strict" if error is UnknownStateKeyError else "warn"


def run(agent: Any, mode: str = "sync", inputs: Any = None, config: Any = None) -> Any:
    inputs = hi() if inputs is None else inputs
    if mode == "async":
        return asyncio.run(agent.ainvoke(inputs, config))
    return agent.invoke(inputs, config)


@tool
def add_numbers(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def calls_add() -> AIMessage:
    return AIMessage("", tool_calls=[{"name": "add_numbers", "args": {"a": 1, "b": 2}, "id": "c1"}])


# -- user functions the mistakes are made with ---------------------------------------------


def takes_nothing() -> None:
    """A hook that forgot its parameters."""


def takes_three(a: Any, b: Any, c: Any) -> None:
    """A hook with one parameter too many."""


def method_takes_nothing(self: Any) -> None:
    """A hook method that forgot its parameters."""


async def async_method_takes_nothing(self: Any) -> None:
    """An async hook method that forgot its parameters."""


def sync_method(self: Any, state: Any, runtime: Any) -> None:
    """A plain ``def`` hook method."""


async def async_method(self: Any, state: Any, runtime: Any) -> None:
    """An ``async def`` hook method."""


def sync_wrap_method(self: Any, request: Any, handler: Any) -> Any:
    return handler(request)


async def async_wrap_method(self: Any, request: Any, handler: Any) -> Any:
    return await handler(request)


async def some_async_call() -> dict[str, Any]:
    return {}


def returning(value: Callable[[], Any]) -> Callable[..., Any]:
    """A node hook function that returns ``value()``."""

    def hook(state: Any) -> Any:
        return value()

    return hook


def wrap_returning(value: Callable[[Any], Any]) -> Callable[..., Any]:
    """A wrap hook function that calls the handler, then returns ``value(response)``."""

    def wrap(request: Any, handler: Any) -> Any:
        return value(handler(request))

    return wrap


# -- 1. every decorator x wrong signature -------------------------------------------------

for _name, _decorator in ALL_DECORATORS.items():
    for _func in (takes_nothing, takes_three):
        add(
            f"@{_name} on {_func.__name__}",
            lambda d=_decorator, f=_func: d(f),
            TypeError,
            f"@{_name}",
            _func.__name__,
            "Define it as",
            at=_func,
        )

# -- 2. every class hook x wrong signature and wrong flavour ------------------------------

for _hook in CLASS_HOOKS:
    for _method_name, _method in (
        (_hook, method_takes_nothing),
        ("a" + _hook, async_method_takes_nothing),
    ):
        add(
            f"class {_method_name}(self)",
            lambda n=_method_name, m=_method: create_agent(
                model(), middleware=[type("Arity", (AgentMiddleware,), {n: m})()]
            ),
            TypeError,
            f"Arity.{_method_name}",
            "Define it as",
            at=_method,
        )
    _wrap = _hook.startswith("wrap_")
    add(
        f"class plain def a{_hook}",
        lambda h=_hook, w=_wrap: create_agent(
            model(),
            middleware=[
                type(
                    "Flavour", (AgentMiddleware,), {"a" + h: sync_wrap_method if w else sync_method}
                )()
            ],
        ),
        TypeError,
        f"Flavour.a{_hook}",
        "is a plain `def`",
        f"Write `async def a{_hook}",
        at=sync_wrap_method if _wrap else sync_method,
    )
    add(
        f"class async def {_hook}",
        lambda h=_hook, w=_wrap: create_agent(
            model(),
            middleware=[
                type("Flavour", (AgentMiddleware,), {h: async_wrap_method if w else async_method})()
            ],
        ),
        TypeError,
        f"Flavour.{_hook}",
        "is `async def`",
        f"Rename it to a{_hook}",
        at=async_wrap_method if _wrap else async_method,
    )

# -- 3. misspelled hook methods, and @hook_config on a method that is no hook ---------------


def before_modle(self: Any, state: Any, runtime: Any) -> None:
    """A typo: before_model."""


def wrap_model_cal(self: Any, request: Any, handler: Any) -> Any:
    """A typo: wrap_model_call."""
    return handler(request)


async def aafter_modle(self: Any, state: Any, runtime: Any) -> None:
    """A typo: aafter_model."""


def before_agnet(self: Any, state: Any, runtime: Any) -> None:
    """A typo: before_agent."""


@hook_config(can_jump_to=["end"])
def check_length(self: Any, state: Any, runtime: Any) -> None:
    """Carries @hook_config but is named like no hook."""


for _typo, _meant in (
    (before_modle, "before_model"),
    (wrap_model_cal, "wrap_model_call"),
    (aafter_modle, "aafter_model"),
    (before_agnet, "before_agent"),
):
    add(
        f"misspelled {_typo.__name__}",
        lambda t=_typo: create_agent(
            model(), middleware=[type("Typo", (AgentMiddleware,), {t.__name__: t})()]
        ),
        TypeError,
        f"Typo.{_typo.__name__}",
        f"looks like {_meant}",
        f"Rename it to {_meant}",
        at=_typo,
    )
add(
    "@hook_config on a method that is no hook",
    lambda: create_agent(
        model(), middleware=[type("Helper", (AgentMiddleware,), {"check_length": check_length})()]
    ),
    TypeError,
    "Helper.check_length",
    "carries @hook_config",
    "Name it after the hook it implements",
    at=check_length,
)

# -- 4. node hooks x what they return, in both flavours ------------------------------------

_NODE_RETURNS: list[tuple[str, Callable[[], Any], type[BaseException], tuple[str, ...]]] = [
    ("a str", lambda: "done", TypeError, ("returned a str", "must return a dict of state updates")),
    ("a list", lambda: [HumanMessage("x")], TypeError, ("returned a list", "must return a dict")),
    (
        "an un-awaited coroutine",
        some_async_call,
        TypeError,
        ("a coroutine", "without awaiting it", "`async def`"),
    ),
    (
        "Command(goto=unknown)",
        lambda: Command(goto="modle"),
        UnknownNodeError,
        ("Command(goto='modle')", "Did you mean 'model'?", "jump_to"),
    ),
    (
        "an undeclared jump",
        lambda: {"jump_to": "end"},
        InvalidJumpError,
        ("jump_to='end'", "which it did not declare", "can_jump_to=['end']"),
    ),
    (
        "an unknown jump target",
        lambda: {"jump_to": "moon"},
        InvalidJumpError,
        ("jump_to='moon'", "use 'model', 'tools' or 'end'"),
    ),
    (
        "an unknown state key (effects='strict'; else a warning)",
        lambda: {"mesages": [HumanMessage("x")]},
        UnknownStateKeyError,
        ("'mesages'", "Did you mean 'messages'?", "Declare it in a state_schema"),
    ),
    (
        "a Command whose update is a str",
        lambda: Command(update="done"),  # type: ignore[arg-type]
        TypeError,
        ("Command whose update is str", "use a dict of state keys"),
    ),
]

for _hook, _decorator in NODE_DECORATORS.items():
    for _what, _value, _error, _says in _NODE_RETURNS:
        for _mode in ("sync", "async"):
            _func = returning(_value)
            _mw = _decorator(name=f"bad_{_hook}")(_func)
            add(
                f"{_hook} returns {_what} [{_mode}]",
                lambda m=_mw, mode=_mode, err=_error: run(
                    create_agent(model(), middleware=[m], effects=_effects(err)), mode
                ),
                _error,
                f"middleware 'bad_{_hook}', hook {_hook}",
                *_says,
                at=_func,
            )

# -- 5. wrap_model_call x what it returns ---------------------------------------------------

_MODEL_RETURNS: list[tuple[str, Callable[[Any], Any], type[BaseException], tuple[str, ...]]] = [
    ("None", lambda r: None, TypeError, ("returned None", "return handler(request)")),
    ("a str", lambda r: "text", TypeError, ("returned a str", "must return a ModelResponse")),
    (
        "a dict",
        lambda r: {"messages": []},
        TypeError,
        ("returned a dict", "an ExtendedModelResponse"),
    ),
    (
        "ModelResponse(result=str)",
        lambda r: ModelResponse(result="text"),  # type: ignore[arg-type]
        TypeError,
        ("result is a str", "every character", "ModelResponse(result=[AIMessage(content=...)])"),
    ),
    (
        "ModelResponse(result=AIMessage)",
        lambda r: ModelResponse(result=AIMessage("x")),  # type: ignore[arg-type]
        TypeError,
        ("result is an AIMessage, not a list", "ModelResponse(result=[message])"),
    ),
    (
        "ModelResponse(result=[int])",
        lambda r: ModelResponse(result=[1]),  # type: ignore[list-item]
        TypeError,
        ("has an int at position 0", "ModelResponse(result=[AIMessage"),
    ),
    (
        "ExtendedModelResponse(model_response=str)",
        lambda r: ExtendedModelResponse(model_response="x"),  # type: ignore[arg-type]
        TypeError,
        ("model_response is a str", "ExtendedModelResponse(model_response=handler(request)"),
    ),
    (
        "ExtendedModelResponse(result=str inside)",
        lambda r: ExtendedModelResponse(ModelResponse(result="x")),  # type: ignore[arg-type]
        TypeError,
        ("result is a str", "ModelResponse(result=[AIMessage"),
    ),
    (
        "ExtendedModelResponse(command=dict)",
        lambda r: ExtendedModelResponse(r, {"owner": "me"}),  # type: ignore[arg-type]
        TypeError,
        ("command is a dict", "Command(update={...})"),
    ),
    (
        "ExtendedModelResponse(Command(goto=...))",
        lambda r: ExtendedModelResponse(r, Command(goto="model")),
        NotImplementedError,
        ("goto='model'", "only `update` is supported", "jump_to"),
    ),
    (
        "ExtendedModelResponse(Command(update=unknown key)) (effects='strict')",
        lambda r: ExtendedModelResponse(r, Command(update={"ownr": "me"})),
        UnknownStateKeyError,
        ("'ownr'", "Declare it in a state_schema"),
    ),
]

for _what, _value, _error, _says in _MODEL_RETURNS:
    for _mode in ("sync", "async"):
        _func = wrap_returning(_value)
        _mw = wrap_model_call(name="bad_wrap")(_func)
        add(
            f"wrap_model_call returns {_what} [{_mode}]",
            lambda m=_mw, mode=_mode, err=_error: run(
                create_agent(model(), middleware=[m], effects=_effects(err)), mode
            ),
            _error,
            "middleware 'bad_wrap', hook wrap_model_call",
            *_says,
            at=_func,
        )


def sync_wrap_awaits_nothing(request: Any, handler: Any) -> Any:
    return some_async_call()


add(
    "sync wrap_model_call returns an un-awaited coroutine",
    lambda: run(create_agent(model(), middleware=[wrap_model_call(sync_wrap_awaits_nothing)])),
    TypeError,
    "hook wrap_model_call",
    "without awaiting it",
    "`async def`",
    at=sync_wrap_awaits_nothing,
)

# -- 6. wrap_tool_call x what it returns -----------------------------------------------------

_TOOL_RETURNS: list[tuple[str, Callable[[Any], Any], type[BaseException], tuple[str, ...]]] = [
    ("None", lambda r: None, TypeError, ("returned None", "return handler(request)")),
    ("a str", lambda r: "3", TypeError, ("returned a str", "a ToolMessage or a langgraph Command")),
    ("a dict", lambda r: {"messages": []}, TypeError, ("returned a dict", "a ToolMessage")),
    (
        "a ToolMessage for another call",
        lambda r: ToolMessage("3", tool_call_id="other"),
        ValueError,
        ("tool_call_id='other'", "stay unanswered", "tool_call_id=request.tool_call['id']"),
    ),
    (
        "a Command writing an unknown key (effects='strict')",
        lambda r: Command(update={"resutl": 3}),
        UnknownStateKeyError,
        ("'resutl'", "Declare it in a state_schema"),
    ),
]

for _what, _value, _error, _says in _TOOL_RETURNS:
    for _mode in ("sync", "async"):
        _func = wrap_returning(_value)
        _mw = wrap_tool_call(name="bad_tool_wrap")(_func)
        add(
            f"wrap_tool_call returns {_what} [{_mode}]",
            lambda m=_mw, mode=_mode, err=_error: run(
                create_agent(
                    model(calls_add(), "done"), [add_numbers], middleware=[m], effects=_effects(err)
                ),
                mode,
            ),
            _error,
            "middleware 'bad_tool_wrap', hook wrap_tool_call",
            *_says,
            at=_func,
        )

# -- 7. dynamic_prompt x what it returns -----------------------------------------------------


def prompt_none(request: Any) -> Any:
    return None


def prompt_number(request: Any) -> Any:
    return 42


def prompt_unawaited(request: Any) -> Any:
    return some_async_call()


for _func, _says in (
    (prompt_none, "returned None"),
    (prompt_number, "returned an int"),
    (prompt_unawaited, "without awaiting it"),
):
    add(
        f"dynamic_prompt {_func.__name__}",
        lambda f=_func: run(create_agent(model(), middleware=[dynamic_prompt(f)])),
        TypeError,
        "@dynamic_prompt",
        _says,
        "it must return a str or a SystemMessage",
        at=_func,
    )

# -- 8. decorator misuse ---------------------------------------------------------------------


def plain_hook(state: Any) -> None:
    return None


def plain_wrap(request: Any, handler: Any) -> Any:
    return handler(request)


add(
    "@hook_config without parentheses",
    lambda: hook_config(plain_hook),  # type: ignore[arg-type]
    TypeError,
    "@hook_config needs its options in parentheses",
    "@hook_config(can_jump_to=...",
    at=plain_hook,
)
add(
    "@hook_config on a class",
    lambda: hook_config(can_jump_to=["end"])(type("Cls", (AgentMiddleware,), {})),
    TypeError,
    "@hook_config was applied to the class Cls",
    "put it on the hook method",
)
add(
    "@hook_config on a wrap hook function",
    lambda: wrap_model_call(hook_config(can_jump_to=["end"])(plain_wrap)),
    TypeError,
    "@hook_config(can_jump_to=...)",
    "has no effect on a wrap_model_call hook",
    at=plain_wrap,
)
add(
    "@hook_config(can_jump_to=[bad]) ",
    lambda: hook_config(can_jump_to=["End"])(plain_hook),  # type: ignore[list-item]
    ValueError,
    "'End'",
    "Allowed targets: model, tools, end",
    at=plain_hook,
)
for _name, _decorator in ALL_DECORATORS.items():
    add(
        f"@{_name}(nmae=...)",
        lambda d=_decorator: d(nmae="x"),
        TypeError,
        f"@{_name}",
        "unknown option nmae=",
        "Did you mean name=?",
        at=None,
    )
for _name in ("wrap_model_call", "wrap_tool_call", "dynamic_prompt"):
    add(
        f"@{_name}(can_jump_to=...)",
        lambda d=ALL_DECORATORS[_name]: d(can_jump_to=["end"]),
        TypeError,
        f"@{_name}",
        "does not take can_jump_to",
        "after_model hook with can_jump_to=['end']",
    )
for _name, _decorator in NODE_DECORATORS.items():
    add(
        f"@{_name}(can_jump=...)",
        lambda d=_decorator: d(can_jump=["end"]),
        TypeError,
        f"@{_name}",
        "unknown option can_jump=",
        "Did you mean can_jump_to=?",
    )
    add(
        f"@{_name}(can_jump_to=[bad])",
        lambda d=_decorator: d(can_jump_to=["finish"])(plain_hook),
        ValueError,
        f"@{_name}",
        "'finish'",
        "Allowed targets: model, tools, end",
        at=plain_hook,
    )
add(
    "@before_model(name='')",
    lambda: before_model(name="")(plain_hook),
    TypeError,
    "@before_model got name=''",
    "use a non-empty str",
    at=plain_hook,
)
add(
    "@before_model(state_schema=instance)",
    lambda: before_model(state_schema={"a": 1})(plain_hook),
    TypeError,
    "@before_model got state_schema",
    "must be a TypedDict class deriving from AgentState",
    at=plain_hook,
)
add(
    "@before_model on a middleware",
    lambda: before_model(before_model(plain_hook)),
    TypeError,
    "which is already a middleware",
    "use compose()",
)
add(
    "@before_model on a class",
    lambda: before_model(type("NotAFunction", (), {})),
    TypeError,
    "@before_model expects a function",
    "subclass AgentMiddleware",
)
add(
    "@before_model('name')",
    lambda: before_model("limit"),
    TypeError,
    "@before_model expects a function",
    "Did you mean @before_model(name='limit')?",
)
add(
    "two functions to one decorator",
    lambda: before_model(plain_hook, plain_hook),
    TypeError,
    "@before_model",
    "takes one function",
    "pass options by keyword",
)

# -- 9. list mistakes ------------------------------------------------------------------------

_g = before_model(plain_hook)


class UserMiddleware(AgentMiddleware):
    def before_model(self, state: Any, runtime: Any) -> None:
        return None


class NotMiddleware:
    """Some class that is no middleware, though it has a hook's name."""

    def before_model(self, state: Any) -> None:
        return None


def lookup(query: str) -> str:
    """Look something up."""
    return query


add(
    "middleware=[g, None]",
    lambda: create_agent(model(), middleware=[_g, None]),  # type: ignore[list-item]
    TypeError,
    "create_agent(middleware=[...])'s middleware[1] is None",
    "Remove it",
)
add(
    "middleware=[Class]",
    lambda: create_agent(model(), middleware=[UserMiddleware]),  # type: ignore[list-item]
    TypeError,
    "middleware[0] is the class UserMiddleware",
    "Pass UserMiddleware()",
    at=UserMiddleware,
)
add(
    "middleware=[a class that is no middleware]",
    lambda: create_agent(model(), middleware=[NotMiddleware]),  # type: ignore[list-item]
    TypeError,
    "middleware[0] is the class NotMiddleware",
    "Subclass AgentMiddleware",
    at=NotMiddleware,
)
add(
    "middleware=g (not a list)",
    lambda: create_agent(model(), middleware=_g),  # type: ignore[arg-type]
    TypeError,
    "create_agent(middleware=...) takes a list of middleware",
    "the middleware 'plain_hook'",
    "Pass middleware=[plain_hook]",
    at=plain_hook,
)
for _decorator_name in ("before_model", "wrap_model_call", "hook_config"):
    add(
        f"middleware=[{_decorator_name}] (the decorator)",
        lambda n=_decorator_name: create_agent(
            model(), middleware=[{**ALL_DECORATORS, "hook_config": hook_config}[n]]
        ),
        TypeError,
        f"middleware[0] is the decorator @{_decorator_name} itself",
        "Decorate a function with it",
    )
add(
    "middleware=[plain node function]",
    lambda: create_agent(model(), middleware=[plain_hook]),  # type: ignore[list-item]
    TypeError,
    "middleware[0] is the function plain_hook",
    "Decorate it with @before_model",
    at=plain_hook,
)
add(
    "middleware=[plain wrap function]",
    lambda: create_agent(model(), middleware=[plain_wrap]),  # type: ignore[list-item]
    TypeError,
    "middleware[0] is the function plain_wrap",
    "Decorate it with @wrap_model_call",
    at=plain_wrap,
)
add(
    "middleware=[a tool]",
    lambda: create_agent(model(), middleware=[add_numbers]),  # type: ignore[list-item]
    TypeError,
    "middleware[0] is the tool 'add_numbers'",
    "create_agent(tools=[...])",
)
add(
    "middleware=[[a, b]]",
    lambda: create_agent(model(), middleware=[[_g]]),  # type: ignore[list-item]
    TypeError,
    "middleware[0] is a list of 1 items",
    "compose(*group)",
)
add(
    "tools=function (not a list)",
    lambda: create_agent(model(), tools=lookup),  # type: ignore[arg-type]
    TypeError,
    "create_agent(tools=...) takes a list of tools",
    "the function lookup",
    "Pass tools=[lookup]",
    at=lookup,
)
add(
    "tools=[middleware]",
    lambda: create_agent(model(), tools=[_g]),
    TypeError,
    "tools[0] is the middleware 'plain_hook'",
    "create_agent(middleware=[...])",
    at=plain_hook,
)
add(
    "tools=[f, None]",
    lambda: create_agent(model(), tools=[lookup, None]),  # type: ignore[list-item]
    TypeError,
    "tools[1] is None",
    "a tool is a BaseTool, a function, or a dict JSON schema",
)
add(
    "tools=[a BaseTool class]",
    lambda: create_agent(model(), tools=[type(add_numbers)]),  # type: ignore[list-item]
    TypeError,
    "tools[0] is the class",
    "not an instance",
)
add(
    "middleware with a bad tool",
    lambda: create_agent(model(), middleware=[before_model(tools=[42])(plain_hook)]),  # type: ignore[list-item]
    TypeError,
    "tools[0] of middleware 'plain_hook'",
    "a tool is a BaseTool, a function, or a dict JSON schema",
    at=plain_hook,
)
add(
    "compose(42)",
    lambda: compose(42),  # type: ignore[arg-type]
    TypeError,
    "compose()'s argument #0 is 42",
    "Pass middleware instances",
)
add(
    "compose(None)",
    lambda: compose(_g, None),  # type: ignore[arg-type]
    TypeError,
    "compose()'s argument #1 is None",
    "Remove it",
)
add(
    "compose([a, b])",
    lambda: compose([_g]),  # type: ignore[arg-type]
    TypeError,
    "compose() takes middleware as separate arguments",
    "compose(*middleware)",
)
add(
    "compose(Class)",
    lambda: compose(UserMiddleware),  # type: ignore[arg-type]
    TypeError,
    "argument #0 is the class UserMiddleware",
    "Pass UserMiddleware()",
    at=UserMiddleware,
)
add(
    "the same middleware twice",
    lambda: create_agent(model(), middleware=[_g, _g]),
    BrokenStackError,
    "middleware 'plain_hook'",
    "is listed twice (positions 0 and 1)",
    "Remove one of them",
    at=plain_hook,
)
add(
    "two middleware with one name",
    lambda: create_agent(model(), middleware=[_g, before_model(name="plain_hook")(lookup)]),
    BrokenStackError,
    "two middleware are named 'plain_hook'",
    "pass name='...'",
    at=lookup,
)
add(
    "explain(42)",
    lambda: explain(42),
    TypeError,
    "explain()",
    "42",
    "a list of middleware",
)

# -- 10. schema, context, model and prompt mistakes -----------------------------------------


class UserContext:
    def __init__(self, user_id: str) -> None:
        self.user_id = user_id


class CountState(AgentState):
    count: int


class OtherCountState(AgentState):
    count: str


add(
    "context_schema=instance",
    lambda: create_agent(model(), context_schema=UserContext("u1")),  # type: ignore[arg-type]
    TypeError,
    "create_agent(context_schema=...)",
    "not a class",
    "context_schema=UserContext",
    "invoke(context=...)",
)
add(
    "context_schema=str",
    lambda: create_agent(model(), context_schema="UserContext"),  # type: ignore[arg-type]
    TypeError,
    "create_agent(context_schema=...) got 'UserContext' (str)",
    "Pass the class itself",
)
add(
    "state_schema=instance",
    lambda: create_agent(model(), state_schema={"count": 1}),  # type: ignore[arg-type]
    TypeError,
    "create_agent(state_schema=...)",
    "a TypedDict class deriving from AgentState",
)
add(
    "model=42",
    lambda: create_agent(42),  # type: ignore[arg-type]
    TypeError,
    "create_agent(model=...) got 42",
    "BaseChatModel",
)
add(
    "system_prompt=42",
    lambda: create_agent(model(), system_prompt=42),  # type: ignore[arg-type]
    TypeError,
    "create_agent(system_prompt=...) got an int",
    "use a str or a SystemMessage",
)
add(
    "two middleware declare one field differently",
    lambda: create_agent(
        model(),
        middleware=[
            before_model(state_schema=CountState, name="one")(plain_hook),
            before_model(state_schema=OtherCountState, name="two")(plain_hook),
        ],
    ),
    StateSchemaConflictWarning,  # built as LangChain builds it, with a warning
    "'one'",
    "'two'",
    "count",
)
add(
    "a jump to tools in an agent without tools",
    lambda: create_agent(model(), middleware=[before_model(can_jump_to=["tools"])(plain_hook)]),
    BrokenStackError,
    "middleware 'plain_hook', hook before_model",
    "drop 'tools' from can_jump_to",
    at=plain_hook,
)

# -- 11. interrupts in an agent without a checkpointer -------------------------------------


def asks(state: Any) -> Any:
    return {"messages": [HumanMessage(str(interrupt("ok?")))]}


def asks_around_model(request: Any, handler: Any) -> Any:
    interrupt("ok?")
    return handler(request)


def asks_around_tool(request: Any, handler: Any) -> Any:
    interrupt("ok?")
    return handler(request)


@tool
def asks_in_tool(a: int) -> int:
    """A tool that asks a person first."""
    interrupt("ok?")
    return a


for _hook, _decorator in NODE_DECORATORS.items():
    for _mode in ("sync", "async"):
        add(
            f"interrupt() in {_hook} without a checkpointer [{_mode}]",
            lambda d=_decorator, mode=_mode, h=_hook: run(
                create_agent(model(), middleware=[d(name=f"ask_{h}")(asks)]), mode
            ),
            MissingCheckpointerError,
            f"middleware 'ask_{_hook}', hook {_hook}",
            "no checkpointer",
            "checkpointer=InMemorySaver()",
            at=asks,
        )
for _mode in ("sync", "async"):
    add(
        f"interrupt() in wrap_model_call without a checkpointer [{_mode}]",
        lambda mode=_mode: run(
            create_agent(model(), middleware=[wrap_model_call(asks_around_model)]), mode
        ),
        MissingCheckpointerError,
        "middleware 'asks_around_model', hook wrap_model_call",
        "checkpointer=InMemorySaver()",
        at=asks_around_model,
    )
    add(
        f"interrupt() in wrap_tool_call without a checkpointer [{_mode}]",
        lambda mode=_mode: run(
            create_agent(
                model(calls_add(), "done"),
                [add_numbers],
                middleware=[wrap_tool_call(asks_around_tool)],
            ),
            mode,
        ),
        MissingCheckpointerError,
        "middleware 'asks_around_tool', hook wrap_tool_call",
        "checkpointer=InMemorySaver()",
        at=asks_around_tool,
    )
    add(
        f"interrupt() in a tool without a checkpointer [{_mode}]",
        lambda mode=_mode: run(
            create_agent(
                model(
                    AIMessage(
                        "", tool_calls=[{"name": "asks_in_tool", "args": {"a": 1}, "id": "c1"}]
                    ),
                    "done",
                ),
                [asks_in_tool],
            ),
            mode,
        ),
        MissingCheckpointerError,
        "the tool 'asks_in_tool'",
        "checkpointer=InMemorySaver()",
    )

# -- 12. resumes and loops -------------------------------------------------------------------

for _mode in ("sync", "async"):
    add(
        f"Command(resume=...) without a checkpointer [{_mode}]",
        lambda mode=_mode: run(create_agent(model()), mode, inputs=Command(resume="yes")),
        RuntimeError,
        "Cannot use Command(resume=...) without checkpointer",
        "checkpointer=InMemorySaver()",
        "thread_id",
    )


def always_again(state: Any) -> Any:
    return {"jump_to": "model"}


for _mode in ("sync", "async"):
    add(
        f"an endless jump loop [{_mode}]",
        lambda mode=_mode: run(
            create_agent(
                model(*["again"] * 30),
                middleware=[after_model(can_jump_to=["model"], name="loop")(always_again)],
            ),
            mode,
            config={"recursion_limit": 20},
        ),
        GraphRecursionError,
        "Recursion limit of 20 reached",
        "middleware 'loop', hook after_model",
        "jumped to 'model'",
        "stop jumping",
        at=always_again,
    )


# -- the tests -------------------------------------------------------------------------------


def test_the_catalog_holds_at_least_a_hundred_mistakes() -> None:
    assert len(CATALOG) >= 100
    assert len({m.name for m in CATALOG}) == len(CATALOG)


@pytest.mark.parametrize("case", CATALOG, ids=[m.name for m in CATALOG])
def test_each_mistake_gets_a_precise_error(case: Mistake) -> None:
    if issubclass(case.error, Warning):
        with pytest.warns(case.error) as warned:
            case.make()
        text = "\n".join(str(w.message) for w in warned if issubclass(w.category, case.error))
    else:
        with pytest.raises(case.error) as caught:
            case.make()
        text = full_text(caught.value)
    missing = [part for part in case.says if part not in text]
    assert not missing, f"{missing} not in:\n{text}"
    if case.at is not None:
        assert location(case.at) in text, f"{location(case.at)} not in:\n{text}"
