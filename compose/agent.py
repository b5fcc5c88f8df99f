"""``create_agent()``: any list of middleware run as a LangGraph agent loop.

The graph: ``before_agent`` nodes (in order), ``before_model`` nodes (in order), ``model``,
``after_model`` nodes (reverse), then ``tools`` for pending tool calls (one ``Send`` per
call) or the ``after_agent`` nodes (reverse) and END. Each node hook is its own node named
``"{middleware.name}.{hook}"``; hooks that declared ``can_jump_to`` get conditional edges.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import SystemMessage
from langchain_core.tools import BaseTool
from langgraph._internal._config import merge_configs
from langgraph._internal._runnable import RunnableCallable
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Checkpointer

from funcware.compose import seams
from funcware.compose.graph.arguments import check_choice, check_list, check_schema
from funcware.compose.graph.options import resolve_model
from funcware.compose.graph.places import Places
from funcware.compose.graph.plan import AgentPlan
from funcware.compose.graph.schema import input_output_schemas
from funcware.compose.steps.keys import StateKeys
from funcware.compose.steps.model_call import ModelCall
from funcware.compose.steps.model_node import ModelNode
from funcware.compose.steps.nodes import run_node, run_node_async
from funcware.compose.steps.runs import AgentGraph
from funcware.compose.steps.tracing import hook_trace_policy, resolve_trace_policy
from funcware.compose.stream.streaming import agent_metadata, agent_transformers
from funcware.hooks.middleware import NODE_HOOKS, AgentMiddleware, HookImpl, TransformerFactory

if TYPE_CHECKING:
    from funcware.compose.replacing import Replacement

__all__ = ["create_agent"]

RECURSION_LIMIT = 9_999
DEFAULTS = {"order": "check", "effects": "warn", "tool_pairing": "warn"}
"""The feature options' defaults: a build's features are told only what differs."""


# Every hook node has the same signature; computing it once keeps building cheap
# (langgraph reads each node's signature to decide what to inject).
def _without_hook(func: Callable[..., Any]) -> inspect.Signature:
    signature = inspect.signature(func)
    return signature.replace(parameters=list(signature.parameters.values())[1:])


_NODE_SIGNATURE = _without_hook(run_node)
_ANODE_SIGNATURE = _without_hook(run_node_async)


def _hook_node(
    impl: HookImpl, known: frozenset[str], nodes: frozenset[str], build: seams.Build
) -> RunnableCallable:
    # partials, not closures: langgraph inspects closures' code when compiling.
    node: Callable[..., Any] = partial(run_node, impl, known=known, nodes=nodes)
    anode: Callable[..., Any] = partial(run_node_async, impl, known=known, nodes=nodes)
    node.__signature__ = _NODE_SIGNATURE  # type: ignore[attr-defined]
    anode.__signature__ = _ANODE_SIGNATURE  # type: ignore[attr-defined]
    node, anode = seams.node(impl, (node, anode), build)
    return RunnableCallable(node, anode, name=impl.label, trace=False)


def _system_message(system_prompt: str | SystemMessage | None) -> SystemMessage | None:
    if system_prompt is None or isinstance(system_prompt, SystemMessage):
        return system_prompt
    if isinstance(system_prompt, str):
        return SystemMessage(content=system_prompt)
    from funcware.hooks.wording import a

    raise TypeError(
        f"create_agent(system_prompt=...) got {a(type(system_prompt).__name__)}; "
        "use a str or a SystemMessage."
    )


def create_agent(
    model: str | BaseChatModel,
    tools: Sequence[BaseTool | Callable[..., Any] | dict[str, Any]] | None = None,
    *,
    system_prompt: str | SystemMessage | None = None,
    middleware: Sequence[AgentMiddleware[Any, Any, Any] | Replacement] = (),
    response_format: Any = None,
    state_schema: type[Any] | None = None,
    context_schema: type[Any] | None = None,
    checkpointer: Checkpointer = None,
    store: Any = None,
    interrupt_before: list[str] | None = None,
    interrupt_after: list[str] | None = None,
    debug: bool = False,
    name: str | None = None,
    cache: Any = None,
    transformers: Sequence[TransformerFactory] | None = None,
    order: Literal["check", "auto"] = "check",
    effects: Literal["warn", "strict"] = "warn",
    tool_pairing: Literal["warn", "repair", "off"] = "warn",
    node_policies: Mapping[str, Mapping[str, Any]] | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Build the agent graph for ``model``, ``tools`` and ``middleware`` and compile it.

    The parameters are LangChain's ``create_agent``'s, in its order and with its defaults.
    ``model`` is a chat model or a ``"provider:model"`` string (resolved by LangChain's
    ``init_chat_model``: the ``langchain`` extra). ``tools`` takes BaseTools, plain
    functions and dict JSON schemas (a dict tool is bound to the model; a
    ``wrap_tool_call`` must serve its calls). Middleware may bring tools and state
    fields; ``state_schema`` wins every field clash. A broken stack (name clashes, schema
    conflicts, jumps to missing nodes) is refused with one ``ValueError`` listing every
    problem. ``funcware.replace(m)`` in ``middleware`` puts ``m`` in the place of the
    member of the same name (a default stack's summarizer, say) instead of clashing.

    ``response_format`` asks for structured output (``funcware.structured_output``): a
    schema (pydantic model, dataclass, TypedDict, JSON-schema dict), ``ToolStrategy``,
    ``ProviderStrategy`` or ``AutoStrategy``; the parsed answer is the result's
    ``structured_response``.

    ``order="check"`` (default) refuses a list that breaks a declared ordering constraint
    (``MiddlewareOrderError``, with an order that satisfies them); ``order="auto"`` sorts
    it. ``effects="warn"`` (default) warns of effects two declared middleware touch with
    no constraint ordering them, and of hazards (a hook hiding from another the message or
    the call it needs); ``effects="strict"`` makes those errors and watches,
    at run time, that every declared layer does only what it declared. A hook's write to
    a state key no schema declares is dropped, as in LangChain, with one
    ``UnknownStateKeyWarning`` per middleware, hook and key; ``effects="strict"`` raises
    ``UnknownStateKeyError`` instead.

    ``tool_pairing="warn"`` (default) checks that every tool call keeps exactly one
    ``ToolMessage`` answer right after it, where each hook's write is applied and before
    each model call, and names the middleware and hook whose write breaks it
    (``ToolCallPairingWarning``; ``ToolCallPairingError`` under ``effects="strict"``);
    ``"repair"`` also sends the model a repaired history; ``"off"`` checks nothing.

    ``node_policies`` gives nodes langgraph's own policies: ``{"model": {"retry_policy":
    RetryPolicy(...)}, "tools": {...}, "audit.before_model": {"cache_policy": ...},
    "*": {...}}`` maps a node (``"*"``: every node's defaults) to ``add_node``'s
    ``retry_policy``, ``cache_policy``, ``error_handler`` and ``timeout``.
    """
    arguments = dict(locals())  # every parameter, as given: how to build this agent again
    chat_model = resolve_model(model)
    check_schema(state_schema, "state_schema")
    check_schema(context_schema, "context_schema")
    check_choice(order, "order", ("check", "auto"), "create_agent()")
    check_choice(effects, "effects", ("warn", "strict"), "create_agent()")
    check_choice(tool_pairing, "tool_pairing", ("warn", "repair", "off"), "create_agent()")
    given = {
        "response_format": response_format,
        "order": order,
        "effects": effects,
        "tool_pairing": tool_pairing,
        "node_policies": node_policies,
    }
    options = {k: v for k, v in given.items() if v is not None and v != DEFAULTS.get(k)}
    build = seams.Build("create_agent", options, arguments=arguments)
    plan = AgentPlan.build(
        check_list(middleware, "create_agent", "middleware", "middleware"),
        None if tools is None else check_list(tools, "create_agent", "tools", "tools"),
        state_schema,
        build=build,
    )
    seams.plan(plan, build)
    call = seams.model_call(ModelCall(), build)
    hooks = plan.hooks
    keys = StateKeys(plan.state_keys, strict=effects == "strict")
    for member in plan.middleware:
        resolve_trace_policy(member)  # refuses a trace_policy that is no TracePolicy

    tool_node: ToolNode | None = None
    if plan.has_tool_node:
        from funcware.compose.steps.tool_node import ToolWrapper

        tool_names = [name for _, name in plan.tool_owners]
        wrapper = ToolWrapper(hooks["wrap_tool_call"], plan.schema_tool_names, tool_names, keys)
        tool_node = ToolNode(plan.tools, wrap_tool_call=wrapper, awrap_tool_call=wrapper.acall)
    executable = frozenset(tool_node.tools_by_name) if tool_node is not None else frozenset()
    default_tools: list[BaseTool | dict[str, Any]] = [
        *(tool_node.tools_by_name.values() if tool_node is not None else ()),
        *plan.schema_tools,
    ]
    model_node = ModelNode(
        model=chat_model,
        tools=default_tools,
        executable=executable,
        has_tool_wraps=bool(hooks["wrap_tool_call"]),
        system_message=_system_message(system_prompt),
        wraps=hooks["wrap_model_call"],
        reducer_keys=plan.reducer_keys,
        state_keys=keys,
        agent_name=name,
        call=call,
    )

    input_schema, output_schema = input_output_schemas(plan.state_schema)
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(
        plan.state_schema,
        context_schema=context_schema,
        input_schema=input_schema,
        output_schema=output_schema,
    )
    graph.add_node(
        "model",
        RunnableCallable(model_node, model_node.acall, trace=False),
        **seams.node_options("model", None, build),
    )
    if tool_node is not None:
        graph.add_node("tools", tool_node, **seams.node_options("tools", None, build))
    node_hooks = [impl for hook in NODE_HOOKS for impl in hooks[hook]]
    nodes = frozenset(["model", *(["tools"] if tool_node else []), *(i.label for i in node_hooks)])
    for impl in node_hooks:
        graph.add_node(
            impl.label,
            _hook_node(impl, keys, nodes, build),
            trace_policy=hook_trace_policy(impl.middleware),
            **seams.node_options(impl.label, impl, build),
        )
    defaults = seams.node_options("*", None, build)
    if defaults:
        graph.set_node_defaults(**defaults)

    _wire(graph, plan, tool_node, plan.answer_tools)
    compiled = graph.compile(
        checkpointer=checkpointer,
        store=store,
        interrupt_before=interrupt_before,
        interrupt_after=interrupt_after,
        debug=debug,
        name=name or "LangGraph",
        cache=cache,
        transformers=agent_transformers(plan.middleware, transformers),
    )
    # What with_config() does, minus copying and re-validating the graph just compiled.
    # langgraph's merge, as LangChain's create_agent uses: it merges the given configs only.
    # langchain-core's also copies the config of the run in progress, so an agent built
    # inside a hook would keep that run's thread, checkpoint namespace and internals.
    compiled.config = merge_configs(
        compiled.config, {"recursion_limit": RECURSION_LIMIT, "metadata": agent_metadata(name)}
    )
    agent = AgentGraph.adopt(compiled, plan, arguments)
    seams.compiled(agent, build)
    return agent


def _wire(
    graph: StateGraph[Any, Any, Any, Any],
    plan: AgentPlan,
    tool_node: ToolNode | None,
    structured: frozenset[str],
) -> None:
    hooks = plan.hooks
    before_agent = [i.label for i in hooks["before_agent"]]
    before_model = [i.label for i in hooks["before_model"]]
    after_model = [i.label for i in reversed(hooks["after_model"])]
    after_agent = [i.label for i in reversed(hooks["after_agent"])]
    places = Places(
        loop_entry=before_model[0] if before_model else "model",
        exit=after_agent[0] if after_agent else END,
    )
    jumps = {i.label: i.can_jump_to for h in hooks.values() for i in h}

    def link(node: str, default: str) -> None:
        targets = jumps.get(node, ())
        if not targets:
            graph.add_edge(node, default)
            return
        from funcware.compose.graph.routing import edge, jump_route

        ends = {default, *(t for t in map(places.resolve, targets) if t is not None)}
        graph.add_conditional_edges(node, edge(jump_route(places, default)), sorted(ends))

    graph.add_edge(START, (before_agent + before_model + ["model"])[0])
    for chain, last_default in (
        (before_agent, places.loop_entry),
        (before_model, "model"),
        (after_agent, END),
    ):
        for node, nxt in pairwise([*chain, last_default]):
            link(node, nxt)
    if after_model:
        graph.add_edge("model", after_model[0])
        for node, nxt in pairwise(after_model):
            link(node, nxt)
    loop_exit = after_model[-1] if after_model else "model"

    if tool_node is None and not structured:
        if loop_exit == "model":
            graph.add_edge("model", places.exit)
        else:
            link(loop_exit, places.exit)
        return
    from funcware.compose.graph.routing import wire_loop

    wire_loop(graph, places, loop_exit, tool_node, structured, bool(hooks["wrap_model_call"]))
