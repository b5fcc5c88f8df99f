"""The hook decorators' keyword options: one registry, and the ``TypedDict``s for typing.

Each option is an :class:`Option`: which decorators take it, its default, a line of help,
how its value is checked and where it lands (an attribute of the generated middleware
class, or a mark on the hook method). The registry drives the decorators' validation,
their "did you mean" and misplaced-option messages, ``help()`` (each decorator's
docstring ends with its options, written from here) and the docs. The core registers the
options of the card (``name``, ``can_jump_to``, ``state_schema``, ``tools``,
``stream_internal_calls``); each feature registers its own (``funcware.policies``:
``timeout``, ``on_error``, ``always``; ``funcware.guards``: ``stream``; ``funcware.nodes``:
``node_policy``;
``funcware.effects``: ``reads``, ``writes``, ``outside``, ``inside``, ``requires``,
``position``).

The ``TypedDict``s below type the same options for a static checker (a typed
``**options`` cannot come from a registry); a test checks that both list the same options
for every decorator.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, Union

from typing_extensions import TypedDict

from funcware.hooks.types import JumpTo

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

__all__ = [
    "DECORATORS",
    "AfterAgentOptions",
    "AfterModelOptions",
    "Context",
    "HookOptions",
    "NodeOptions",
    "OnError",
    "Option",
    "Position",
    "StateOptions",
    "StreamPolicy",
    "StreamWindow",
    "WrapModelCallOptions",
    "WrapToolCallOptions",
    "describe",
    "option",
    "options_for",
    "register_option",
    "unknown_option",
]

OnError = Literal["raise", "continue"]
"""``on_error=``: ``"raise"`` (the run fails) or ``"continue"`` (logged, the run goes on)."""
Position = Literal["outermost", "innermost"]
"""``position=``: where a middleware must sit in the list."""


class StreamWindow(Protocol):
    """What ``stream=`` takes besides ``"pass"``/``"buffer"``: a sliding window
    (``funcware.guards.SlidingWindow``)."""

    @property
    def chars(self) -> int: ...

    @property
    def check(self) -> Callable[[str], str]: ...


StreamPolicy = Union[Literal["pass", "buffer"], StreamWindow]  # noqa: UP007 - a runtime alias
"""What ``stream=`` accepts: ``"pass"``, ``"buffer"`` or a sliding window."""

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
    """One line: what it does and its default, for errors, ``help()`` and the docs."""
    owner: str = "core"
    """``"core"`` or the feature that registered it."""
    check: Callable[[object, Context], object] | None = None
    """Checks a given value (a clear error naming ``Context.source``) and returns what to
    keep; ``None``: the decorator handles it itself (the core's options)."""
    target: Literal["class", "method"] = "class"
    """Where a checked value lands: a class attribute of the generated middleware named
    after the option, or a mark ``__funcware_<name>__`` on the hook method."""
    elsewhere: str = ""
    """Why a decorator that does not take it does not (added to the refusal)."""
    complete: Callable[[dict[str, Any], Context], None] | None = None
    """Called once per decoration in which it was given, after every option was checked,
    with the class attributes gathered so far (to add what the options imply together)."""

    @property
    def mark(self) -> str:
        """The attribute a ``method`` option is kept in."""
        return f"__funcware_{self.name}__"


_OPTIONS: dict[str, Option] = {}
_DOCS: dict[str, tuple[Callable[..., Any], str]] = {}


def register_option(new: Option) -> Option:
    """Add ``new`` (replacing an option of the same name) and rewrite the decorators' docs."""
    _OPTIONS[new.name] = new
    for decorator, (func, doc) in _DOCS.items():
        func.__doc__ = doc + describe(decorator)
    return new


def document(decorator: str, func: Callable[..., Any]) -> None:
    """Let ``func``'s docstring end with ``decorator``'s options, now and as they change."""
    _DOCS[decorator] = (func, func.__doc__ or "")
    func.__doc__ = (func.__doc__ or "") + describe(decorator)


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


def unknown_option(decorator: str, key: str, at: str, value: object = None) -> str:
    """Why ``@decorator`` refuses ``key=value`` (given at ``at``), and what it takes instead."""
    allowed = [o.name for o in options_for(decorator)]
    known = _OPTIONS.get(key)
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


def _core(name: str, decorators: Collection[str], default: object, help: str, **kw: Any) -> None:
    register_option(Option(name, frozenset(decorators), default, help, **kw))


_core("name", ALL, None, "the middleware's name (default: the function's).")
_core(
    "can_jump_to",
    NODES | {"hook_config"},
    None,
    "targets the hook may return as {'jump_to': ...}: 'model', 'tools', 'end' (default: none).",
    elsewhere="From a wrap, return a response without calling the handler to skip the model "
    "(or tool); to end the run, use an after_model hook with can_jump_to=['end'].",
)
_core(
    "state_schema",
    ALL - {"dynamic_prompt"},
    None,
    "a TypedDict deriving from AgentState, for the state keys it adds.",
)
_core(
    "tools",
    ALL - {"dynamic_prompt"},
    None,
    "tools it brings to the agent; a dict schema it serves itself.",
)
_core(
    "stream_internal_calls",
    ALL - {"dynamic_prompt"},
    False,
    "True shows model calls the hook makes itself in the message stream (default: hidden).",
)


# -- typing -------------------------------------------------------------------------
# A TypedDict cannot carry defaults: each field's docstring states the one the decorator
# applies when the option is not given; the registry above checks the values at runtime.


class HookOptions(TypedDict, total=False):
    """What every hook decorator takes (``@dynamic_prompt`` takes only these)."""

    name: str | None
    """The middleware's name. Default: the function's name."""
    timeout: float | None
    """Seconds the hook may take before ``HookTimeoutError``. Default: ``None`` (no limit)."""
    on_error: OnError
    """``"raise"`` (default) or ``"continue"``."""
    reads: Collection[str] | None
    """Effect names the hook reads. Default: ``None`` (undeclared)."""
    writes: Collection[str] | None
    """Effect names the hook writes. Default: ``None`` (undeclared)."""
    outside: Sequence[str | type] | None
    """Middleware (names or classes) it must sit outside of. Default: ``None``."""
    inside: Sequence[str | type] | None
    """Middleware (names or classes) it must sit inside of. Default: ``None``."""
    requires: Sequence[str | type] | None
    """Middleware (names or classes) that must be present. Default: ``None``."""
    position: Position | None
    """``"outermost"`` or ``"innermost"``. Default: ``None`` (anywhere)."""
    per_run: Literal["on", "off", "required"] | None
    """Whether runs may switch it off (``"on"``), only switch it on (``"off"``) or never
    switch it off (``"required"``). Default: ``None`` (on; runs may switch it off)."""
    subagents: Literal["inherit"] | None
    """``"inherit"``: agents started during its runs run with it too. Default: ``None``."""


class StateOptions(HookOptions, total=False):
    """Every hook but ``@dynamic_prompt``."""

    state_schema: type[Any] | None
    """A TypedDict deriving from ``AgentState``. Default: ``None`` (``AgentState``)."""
    tools: Sequence[BaseTool | dict[str, Any]] | None
    """Tools the middleware brings to the agent. Default: ``None`` (none)."""
    stream_internal_calls: bool
    """Show the hook's own model calls in the message stream. Default: ``False``."""


class _Guard(TypedDict, total=False):
    stream: StreamPolicy
    """What a guard lets through to the stream. Default: ``"pass"``."""


class WrapModelCallOptions(StateOptions, _Guard, total=False):
    """``@wrap_model_call``'s options."""


class WrapToolCallOptions(StateOptions, total=False):
    """``@wrap_tool_call``'s options."""


class NodeOptions(StateOptions, total=False):
    """``@before_agent``'s and ``@before_model``'s options."""

    can_jump_to: Sequence[JumpTo] | None
    """Targets the hook may return as ``{"jump_to": ...}``. Default: ``None`` (none)."""
    node_policy: Mapping[str, Any] | None
    """langgraph ``add_node`` policies for the hook's node (``retry_policy``,
    ``cache_policy``, ``error_handler``, ``timeout``). Default: ``None`` (none)."""


class AfterModelOptions(NodeOptions, _Guard, total=False):
    """``@after_model``'s options: a node hook that can also guard the stream."""


class AfterAgentOptions(NodeOptions, total=False):
    """``@after_agent``'s options: a node hook that can also always run."""

    always: bool
    """Run also when the run fails. Default: ``False``."""
