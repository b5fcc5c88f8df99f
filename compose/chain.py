"""``compose()``: many middleware as one. Composites flatten (``compose(compose(a, b), c)`` is
``compose(a, b, c)``, as in ``create_agent``); their own hooks run in :mod:`.composite`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import Command

from funcware.compose.graph.schema import merge_schemas
from funcware.compose.seams import Build, activate, arrange
from funcware.compose.stream.streaming import member_transformers
from funcware.hooks.middleware import AgentMiddleware, HookImpl, HookName, is_middleware
from funcware.hooks.types import ModelCallResult, ModelRequest, ModelResponse, ToolCallRequest

if TYPE_CHECKING:
    from funcware.compose.composite import CompositeCalls
    from funcware.compose.replacing import Replacement

__all__ = ["ComposedMiddleware", "arranged", "compose", "flatten"]


def flatten(
    middleware: Sequence[object], place: str = "compose()'s argument #{}"
) -> list[AgentMiddleware[Any, Any, Any]]:
    """``middleware`` with every composite replaced by its members (checked), and every
    ``replace()`` in the place of the member it names; ``place`` names an item (``{}``: index)."""
    flat: list[AgentMiddleware[Any, Any, Any]] = []
    replacements: list[tuple[int, Replacement]] = []
    for index, member in enumerate(middleware):
        if isinstance(member, ComposedMiddleware):
            flat.extend(member.members)
        elif is_middleware(member):
            flat.append(member)  # type: ignore[arg-type]
        else:  # a replace(), or a mistake
            from funcware.compose.replacing import Replacement

            if not isinstance(member, Replacement):
                from funcware.compose.graph.argument_errors import member_problem

                raise TypeError(member_problem(member, place.format(index)))
            from funcware.compose.replaced import check_replacement

            check_replacement(member, place.format(index))
            replacements.append((index, member))
    if replacements:
        from funcware.compose.replaced import apply_replacements

        return apply_replacements(flat, replacements, place)
    return flat


def arranged(members: list[Any], build: Build) -> list[Any]:
    """``members`` as the features the build needs arrange them."""
    activate(members, build)
    return arrange(members, build)


class ComposedMiddleware(AgentMiddleware[Any, Any, Any]):
    """Several middleware acting as one. Build it with :func:`compose`.

    Its hooks (LangChain's names, each with its async twin) run its members': node hooks in
    order (``after_*`` in reverse), wraps nested with the first outermost, commands merged.
    """

    def __init__(
        self, members: Sequence[object], name: str | None = None, order: str = "check"
    ) -> None:
        if len(members) == 1 and isinstance(members[0], (list, tuple)):
            raise TypeError(
                f"compose() takes middleware as separate arguments, but got one "
                f"{type(members[0]).__name__}. Unpack it: compose(*middleware)."
            )
        if name is not None and (not isinstance(name, str) or not name):
            raise TypeError(f"compose(name={name!r}) must be a non-empty str.")
        given = flatten(members)
        self.order = order
        """The ``order=`` it was given (``"check"`` or ``"auto"``), for the features."""
        self.members: tuple[AgentMiddleware[Any, Any, Any], ...] = tuple(
            arranged(given, Build("compose()", {"order": order}, report=False))
            if order != "check"
            else given
        )
        self.name = name or "+".join(m.name for m in self.members) or "compose()"
        self.state_schema = merge_schemas(
            [(f"middleware {m.name!r}", m.state_schema) for m in self.members],
            name=f"ComposedState_{len(self.members)}",
        )
        self.tools = [tool for m in self.members for tool in getattr(m, "tools", ())]
        self.transformers = member_transformers(self.members)
        self._built: CompositeCalls | None = None

    def _calls(self) -> CompositeCalls:
        """The members' hooks and onions, checked and built on the first own call."""
        if self._built is None:
            from funcware.compose.composite import CompositeCalls

            self._built = CompositeCalls(self)
        return self._built

    def __funcware_hooks__(self) -> dict[HookName, HookImpl]:
        from funcware.compose.graph.composite_hooks import composite_hooks

        return composite_hooks(self)

    def __repr__(self) -> str:
        return f"compose({', '.join(repr(m) for m in self.members)})"

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any] | AIMessage],
    ) -> ModelCallResult[Any]:
        return self._calls().wrap_model_call(request, handler)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any] | AIMessage]],
    ) -> ModelCallResult[Any]:
        return await self._calls().awrap_model_call(request, handler)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        return self._calls().wrap_tool_call(request, handler)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        return await self._calls().awrap_tool_call(request, handler)

    def before_agent(self, state: Any, runtime: Any) -> Any:
        return self._calls().run("before_agent", state, runtime)

    async def abefore_agent(self, state: Any, runtime: Any) -> Any:
        return await self._calls().arun("before_agent", state, runtime)

    def before_model(self, state: Any, runtime: Any) -> Any:
        return self._calls().run("before_model", state, runtime)

    async def abefore_model(self, state: Any, runtime: Any) -> Any:
        return await self._calls().arun("before_model", state, runtime)

    def after_model(self, state: Any, runtime: Any) -> Any:
        return self._calls().run("after_model", state, runtime)

    async def aafter_model(self, state: Any, runtime: Any) -> Any:
        return await self._calls().arun("after_model", state, runtime)

    def after_agent(self, state: Any, runtime: Any) -> Any:
        return self._calls().run("after_agent", state, runtime)

    async def aafter_agent(self, state: Any, runtime: Any) -> Any:
        return await self._calls().arun("after_agent", state, runtime)


def compose(
    *middleware: AgentMiddleware[Any, Any, Any] | Replacement,
    name: str | None = None,
    order: Literal["check", "auto"] = "check",
) -> ComposedMiddleware:
    """Many middleware as one; the first is the outermost layer.

    The result is a middleware: use it in ``create_agent``, nest it in another ``compose``, or
    call its hooks with a stub handler to unit-test an onion. ``replace(m)`` among them puts
    ``m`` in the place of the member of its name (``replace(m, name=...)``: of that name).
    ``create_agent`` checks the whole flattened list (declared constraints, hazards); a
    composite called alone, on its first call. ``order="auto"`` sorts the members to satisfy
    their declared constraints.
    """
    return ComposedMiddleware(middleware, name=name, order=order)
