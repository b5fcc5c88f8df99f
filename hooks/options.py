"""The hook decorators' keyword options: one registry of :class:`Option`, which drives the
decorators' checks, their refusals, ``help()`` and the docs (see ``docs/architecture.md``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection
from dataclasses import dataclass
from importlib import import_module
from typing import Any, Literal

__all__ = [
    "DECORATORS",
    "Context",
    "OnError",
    "Option",
    "Position",
    "describe",
    "feature_options",
    "lazy",
    "option",
    "options_for",
    "register_option",
]

OnError = Literal["raise", "continue"]
"""``on_error=``: ``"raise"`` (the run fails) or ``"continue"`` (logged, the run goes on)."""
Position = Literal["outermost", "innermost"]
"""``position=``: where a middleware must sit in the list."""

DECORATORS: dict[str, str] = {
    "before_agent": "before_agent",
    "before_model": "before_model",
    "after_model": "after_model",
    "after_agent": "after_agent",
    "wrap_model_call": "wrap_model_call",
    "wrap_tool_call": "wrap_tool_call",
    "dynamic_prompt": "wrap_model_call",
    "hook_config": "",
}
"""Every decorator that takes options, and the hook it lifts a function into."""

ALL = frozenset(d for d in DECORATORS if d != "hook_config")
NODES = frozenset({"before_agent", "before_model", "after_model", "after_agent"})


@dataclass(frozen=True)
class Context:
    """Where an option was given: the decorator, the hook it makes, and the function."""

    decorator: str
    hook: str
    function: str
    """``qualname (defined at file:line)`` of the user's function."""

    @property
    def source(self) -> str:
        """``@before_model for f (defined at file:line)``, to start an error message."""
        return f"@{self.decorator} for {self.function}"


@dataclass(frozen=True)
class Option:
    """One keyword option of the hook decorators."""

    name: str
    decorators: frozenset[str]
    """The decorators that take it (``hook_config`` included where it does)."""
    default: object
    help: str
    """One line: what it does and its default (errors, ``help()``, the docs)."""
    owner: str = "core"
    """``"core"`` or the feature that registered it."""
    check: Callable[[object, Context], object] | None = None
    """Checks a given value and returns what to keep; ``None``: the decorator checks it."""
    target: Literal["class", "method"] = "class"
    """Where the kept value lands: a class attribute, or the method's mark (:attr:`mark`)."""
    elsewhere: str = ""
    """Why a decorator that does not take it does not (added to the refusal)."""
    complete: Callable[[dict[str, Any], Context], None] | None = None
    """Called once per decoration that gave it, with the class attributes gathered."""
    annotation: str = "object"
    """Its type, as ``help()`` shows it (the same as in :mod:`.option_types`)."""

    @property
    def mark(self) -> str:
        """The attribute a ``method`` option is kept in."""
        return f"__funcware_{self.name}__"


_OPTIONS: dict[str, Option] = {}
_DOCS: dict[str, tuple[Callable[..., Any], str, bool]] = {}


def register_option(new: Option) -> Option:
    """Add ``new`` (replacing an option of the same name) and rewrite the decorators' docs."""
    _OPTIONS[new.name] = new
    for decorator in _DOCS:
        _document(decorator)
    return new


def document(decorator: str, func: Callable[..., Any], *, signed: bool = True) -> None:
    """End ``func``'s docstring with ``decorator``'s options (and, ``signed``, its signature)."""
    _DOCS[decorator] = (func, func.__doc__ or "", signed)
    _document(decorator)


def _document(decorator: str) -> None:
    func, doc, signed = _DOCS[decorator]
    func.__doc__ = doc + describe(decorator)
    if signed:
        keyword = inspect.Parameter.KEYWORD_ONLY
        func.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [
                inspect.Parameter("func", inspect.Parameter.POSITIONAL_ONLY, default=None),
                *(
                    inspect.Parameter(o.name, keyword, default=o.default, annotation=o.annotation)
                    for o in options_for(decorator)
                ),
            ]
        )


def feature_options() -> list[Option]:
    """The options features registered (a build loads a feature when one is used)."""
    return [o for o in _OPTIONS.values() if o.owner != "core"]


def lazy(target: str) -> Callable[..., Any]:
    """A function that imports ``"module:function"`` on its first call and calls it."""
    module, _, name = target.partition(":")

    def call(*args: Any) -> Any:
        return getattr(import_module(module), name)(*args)

    call.__qualname__ = call.__name__ = name
    return call


def option(name: str) -> Option | None:
    """The registered option ``name``, if any."""
    return _OPTIONS.get(name)


def options_for(decorator: str) -> list[Option]:
    """The options ``decorator`` takes, in registration order."""
    return [o for o in _OPTIONS.values() if decorator in o.decorators]


def describe(decorator: str) -> str:
    """The ``Options:`` section of a decorator's docstring."""
    lines = [f"        {o.name}: {o.help}" for o in options_for(decorator)]
    return "\n\n    Options:\n" + "\n".join(lines) + "\n" if lines else ""


def _core(name: str, decorators: Collection[str], default: object, help: str, **kw: Any) -> None:
    register_option(Option(name, frozenset(decorators), default, help, **kw))


_core(
    "name", ALL, None, "the middleware's name (default: the function's).", annotation="str | None"
)
_core(
    "can_jump_to",
    NODES | {"hook_config"},
    None,
    "targets the hook may return as {'jump_to': ...}: 'model', 'tools', 'end' (default: none).",
    annotation="Sequence[JumpTo] | None",
    elsewhere="From a wrap, return a response without calling the handler to skip the model "
    "(or tool); to end the run, use an after_model hook with can_jump_to=['end'].",
)
_core(
    "state_schema",
    ALL - {"dynamic_prompt"},
    None,
    "a TypedDict deriving from AgentState, for the state keys it adds.",
    annotation="type[Any] | None",
)
_core(
    "tools",
    ALL - {"dynamic_prompt"},
    None,
    "tools it brings to the agent; a dict schema it serves itself.",
    annotation="Sequence[BaseTool | dict[str, Any]] | None",
)
_core(
    "stream_internal_calls",
    ALL - {"dynamic_prompt"},
    False,
    "True shows model calls the hook makes itself in the message stream (default: hidden).",
    annotation="bool",
)
