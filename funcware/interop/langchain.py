"""Interop with LangChain v1: run funcware middleware inside ``langchain.agents.create_agent``.

(The other direction needs nothing: ``funcware.create_agent`` and ``compose`` accept
LangChain ``AgentMiddleware`` instances as they are.) ``langchain`` is imported only
when :func:`to_langchain` is called.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any, Optional

from langchain_core.runnables import RunnableConfig
from typing_extensions import TypedDict, get_type_hints

from funcware.compose import ComposedMiddleware, compose
from funcware.compose.stream.hidden import runnable_config
from funcware.hooks.middleware import NODE_HOOKS, AgentMiddleware, HookImpl, hook_impls, origin
from funcware.hooks.types import AgentState
from funcware.interop.bridge import (
    from_lc_request,
    from_lc_result,
    lc_format,
    swap_omit_markers,
    to_lc_request,
    to_lc_result,
)
from funcware.policies.hooks import resolve

__all__ = ["to_langchain", "to_langchain_format"]


def _langchain_types() -> Any:
    try:
        return importlib.import_module("langchain.agents.middleware.types")
    except ImportError as exc:
        raise ImportError(
            "funcware.interop.to_langchain needs the `langchain` package: "
            "pip install -e '.[langchain]' from a funcware checkout, or pip install langchain."
        ) from exc


def _state_schema(schema: type, name: str, lc: Any) -> type:
    base = get_type_hints(AgentState, include_extras=True)
    fields = dict(get_type_hints(lc.AgentState, include_extras=True))
    for key, annotation in get_type_hints(schema, include_extras=True).items():
        if key not in base:
            fields[key] = swap_omit_markers(
                annotation, lambda m: lc.OmitFromSchema(input=m.input, output=m.output)
            )
    return TypedDict(f"{name}State", fields)  # type: ignore[operator, no-any-return]


def _node_methods(impl: HookImpl) -> dict[str, Any]:
    sync, async_ = impl.sync, impl.async_
    assert sync is not None and async_ is not None

    # Both take ``config`` (langgraph injects what the sync one declares into both), made
    # current on Python 3.10's async path so a composite finds the graph's reducers.
    def run(
        self: Any,
        state: Any,
        runtime: Any,
        config: Optional[RunnableConfig] = None,  # noqa: UP045 - langgraph injects by this spelling
    ) -> Any:
        with runnable_config(config):
            return sync(state, runtime)

    async def arun(
        self: Any,
        state: Any,
        runtime: Any,
        config: Optional[RunnableConfig] = None,  # noqa: UP045 - langgraph injects by this spelling
    ) -> Any:
        with runnable_config(config):
            return await async_(state, runtime)

    for method in (run, arun):
        setattr(method, "__can_jump_to__", list(impl.can_jump_to))  # noqa: B010
    return {impl.hook: run, "a" + impl.hook: arun}


def _model_methods(stack: ComposedMiddleware) -> dict[str, Any]:
    def wrap_model_call(self: Any, request: Any, handler: Any) -> Any:
        def inner(req: Any) -> Any:
            return from_lc_result(handler(to_lc_request(req)))

        return to_lc_result(stack.wrap_model_call(from_lc_request(request), inner))

    async def awrap_model_call(self: Any, request: Any, handler: Any) -> Any:
        async def inner(req: Any) -> Any:
            return from_lc_result(await handler(to_lc_request(req)))

        return to_lc_result(await stack.awrap_model_call(from_lc_request(request), inner))

    return {"wrap_model_call": wrap_model_call, "awrap_model_call": awrap_model_call}


def _tool_methods(stack: ComposedMiddleware) -> dict[str, Any]:
    def wrap_tool_call(self: Any, request: Any, handler: Any) -> Any:
        return stack.wrap_tool_call(request, handler)

    async def awrap_tool_call(self: Any, request: Any, handler: Any) -> Any:
        return await stack.awrap_tool_call(request, handler)

    return {"wrap_tool_call": wrap_tool_call, "awrap_tool_call": awrap_tool_call}


def _check_tools(stack: ComposedMiddleware) -> None:
    schemas = [tool for tool in stack.tools if isinstance(tool, dict)]
    if schemas:
        names = ", ".join(repr(s.get("function", s).get("name", "?")) for s in schemas)
        raise TypeError(
            f"to_langchain({stack.name!r}): the middleware brings dict-schema tools ({names}), "
            "but LangChain runs middleware tools in its ToolNode, which needs BaseTools. "
            "Give the dicts to langchain's create_agent(tools=[...]) instead; the "
            "middleware's wrap_tool_call still serves their calls."
        )


def _check_always(stack: ComposedMiddleware) -> None:
    for member in stack.members:
        impl = hook_impls(member).get("after_agent")
        if impl is not None and resolve(impl).options.get("always"):
            raise TypeError(
                f"to_langchain cannot convert {impl.describe()}: it is marked always=True, "
                "and LangChain's create_agent does not run after_agent hooks when a run "
                "fails. Run it with funcware.create_agent, or drop always=True."
            )


def _check_model_jumps(stack: ComposedMiddleware) -> None:
    """Refuse a composite whose later ``before_model`` member may jump to ``"model"``.

    In a funcware agent that jump goes back to the agent's first ``before_model`` hook.
    LangChain runs the composite as one node; when it is the agent's first ``before_model``
    node, the jump would have to loop back to that node itself, which LangChain's graph
    has no edge for (``KeyError`` at run time).
    """
    impls = [hook_impls(m).get("before_model") for m in stack.members]
    jumping = [i for i in impls if i is not None][1:]
    for impl in jumping:
        if "model" in impl.can_jump_to:
            raise ValueError(
                f"to_langchain({stack.name!r}) cannot convert {impl.describe()}: it may jump "
                "to 'model', which means running the before_model hooks again from the "
                "first, but in LangChain this composite is a single node, and where it is "
                "the agent's first before_model node LangChain cannot route a jump back to "
                "it (KeyError). Convert the members one by one "
                f"([to_langchain(m) for m in {stack.name!r}.members]), or run the stack with "
                "funcware.create_agent."
            )


def _warn_stream(stack: ComposedMiddleware) -> None:
    for member in stack.members:
        policy = getattr(member, "stream", "pass")
        internal = getattr(member, "stream_internal_calls", False)
        if policy != "pass" or internal:
            warnings.warn(
                f"to_langchain: middleware {member.name!r} ({origin(member)}) sets "
                f"stream={policy!r}"
                + (", stream_internal_calls=True" if internal else "")
                + ", which LangChain's create_agent does not apply: its stream shows the "
                "model's tokens before the guard runs. Its hooks still change the state. "
                "Run it with funcware.create_agent to have the guard govern the stream.",
                UserWarning,
                stacklevel=3,
            )


def to_langchain(middleware: AgentMiddleware[Any, Any, Any]) -> Any:
    """A LangChain ``AgentMiddleware`` running ``middleware`` (decorated, class or composite).

    It defines only the hooks ``middleware`` defines, sync and async (bridged), with its
    name, state schema (private fields kept private), tools and declared jumps. Jumps
    are still checked, and errors still name the funcware middleware. A LangChain
    middleware is returned as it is; dict-schema tools are refused (LangChain cannot run
    them as middleware tools), and so is an ``after_agent(always=True)`` hook (LangChain
    skips ``after_agent`` when a run fails), and a composite whose ``before_model`` member
    after the first may jump to ``"model"`` (LangChain cannot loop a node to itself).
    Deadlines, ``on_error`` and ``trace_policy`` still apply; a ``stream=`` policy does not
    (LangChain streams tokens before guards run), with a warning.
    """
    lc = _langchain_types()
    if isinstance(middleware, lc.AgentMiddleware):
        return middleware
    stack = middleware if isinstance(middleware, ComposedMiddleware) else compose(middleware)
    _check_tools(stack)
    _check_always(stack)
    _check_model_jumps(stack)
    _warn_stream(stack)
    name = middleware.name
    namespace: dict[str, Any] = {
        "__module__": __name__,
        "__doc__": f"LangChain middleware running funcware middleware {name!r}.",
        "name": property(lambda self: name),
        "state_schema": _state_schema(stack.state_schema, name, lc),
        "tools": list(stack.tools),
        "transformers": tuple(stack.transformers),
        "trace_policy": getattr(middleware, "trace_policy", None),
        "funcware_middleware": middleware,
    }
    hooks = hook_impls(stack)
    for hook in NODE_HOOKS:
        if hook in hooks:
            namespace.update(_node_methods(hooks[hook]))
    if "wrap_model_call" in hooks:
        namespace.update(_model_methods(stack))
    if "wrap_tool_call" in hooks:
        namespace.update(_tool_methods(stack))
    cls = type(f"LangChain_{type(middleware).__name__}", (lc.AgentMiddleware,), namespace)
    return cls()


def to_langchain_format(response_format: Any) -> Any:
    """``response_format`` for LangChain's ``create_agent``: a funcware ``ToolStrategy``,
    ``ProviderStrategy`` or ``AutoStrategy`` as LangChain's (same fields and tool names);
    a plain schema, LangChain's own strategy or ``None`` unchanged."""
    _langchain_types()
    importlib.import_module("langchain.agents.structured_output")
    return lc_format(response_format)
