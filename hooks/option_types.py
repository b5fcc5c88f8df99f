"""The hook decorators' options as ``TypedDict``s (and what a called decorator returns), for a
static type checker.

The decorators import them only while type checking; at run time the registry in
:mod:`funcware.hooks.options` checks the options and gives ``help()`` their types (a test
checks that both agree). A TypedDict cannot carry defaults: each field's docstring states
the one the decorator applies when the option is not given.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, Union

from typing_extensions import ParamSpec, TypedDict

from funcware.hooks.options import OnError, Position
from funcware.hooks.types import JumpTo

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from funcware.hooks.decorators import FunctionMiddleware

__all__ = [
    "AfterAgentOptions",
    "AfterModelOptions",
    "HookOptions",
    "Lifted",
    "NodeOptions",
    "StateOptions",
    "StreamPolicy",
    "StreamWindow",
    "WrapModelCallOptions",
    "WrapToolCallOptions",
]

P = ParamSpec("P")
R = TypeVar("R")


class Lifted(Protocol):
    """What a called decorator (``@before_model(...)``) returns; generic per function (a
    ``Callable`` alias would make mypy solve ``P``/``R`` at ``before_model(...)``, to ``Never``)."""

    def __call__(self, func: Callable[P, R], /) -> FunctionMiddleware[P, R]: ...


class StreamWindow(Protocol):
    """What ``stream=`` takes besides ``"pass"``/``"buffer"``: a sliding window
    (``funcware.guards.SlidingWindow``)."""

    @property
    def chars(self) -> int: ...

    @property
    def check(self) -> Callable[[str], str]: ...


StreamPolicy = Union[Literal["pass", "buffer"], StreamWindow]  # noqa: UP007 - a runtime alias
"""What ``stream=`` accepts: ``"pass"``, ``"buffer"`` or a sliding window."""


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
