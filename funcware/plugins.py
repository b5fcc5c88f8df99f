"""The built-in features, registered on the core's seams as data.

Each feature is listed by where it lives and what switches it on (a
:class:`~funcware.compose.seams.Plugin`), with the hook options it owns (their checks
are :func:`~funcware.hooks.options.lazy`): importing funcware loads none of them, and a
build loads only the features its stack and options use. Registration order is the order
a build consults them. ``funcware/__init__.py`` imports this module once.
"""

from __future__ import annotations

from importlib import import_module

from funcware.compose.observing import register_watcher
from funcware.compose.seams import Plugin, claim_run_key, register
from funcware.hooks.adapters import Foreign, register_adapter
from funcware.hooks.options import ALL, NODES, Option, lazy, register_option

__all__: list[str] = []

# LangChain's middleware and state schemas, adapted where they are met.
register_adapter(Foreign("langchain", "funcware.interop:LangChainAdapter", modules=("langchain.",)))

# Run-level control: the per-run choice of middleware (every agent), wrap_agent_call.
register_option(
    Option(
        "per_run",
        ALL,
        None,
        "'on' (runs may switch it off), 'off' (registered, on only in runs that add it) or "
        "'required' (no run may switch it off); default: on, and runs may switch it off.",
        annotation="Literal['on', 'off', 'required'] | None",
        owner="runs",
        check=lazy("funcware.runs:check_per_run"),
    )
)
# first: the checks see a run's stack. A run whose config chooses its middleware, or is
# handed some by the run it started in, loads it then (on an agent built without it).
register(
    Plugin("runs", "funcware.runs:RunControl", on=frozenset({"per_run", "hook:wrap_agent_call"}))
)
claim_run_key("funcware", "funcware.runs:take")
claim_run_key("__funcware_inherited", "funcware.runs:take")

# Subagents inherit middleware declared subagents="inherit" (handed down through the run).
register_option(
    Option(
        "subagents",
        ALL,
        None,
        "'inherit': every agent started during its runs (a funcware agent used as a tool, "
        "deepagents' task subagents) runs with it too; default: only this agent.",
        annotation="Literal['inherit'] | None",
        owner="subagents",
        check=lazy("funcware.subagents:check_subagents"),
    )
)
register(Plugin("subagents", "funcware.subagents:Subagents", on=frozenset({"subagents"})))

# Declared effects and ordering constraints.
EFFECTS_HELP = {
    "reads": "effect names it reads, e.g. 'messages.latest', 'request.messages' (default: "
    "undeclared).",
    "writes": "effect names it writes, e.g. 'messages.answer', 'model.answer.rewrite' "
    "(default: undeclared).",
    "outside": "middleware (names or classes) it must sit outside of.",
    "inside": "middleware (names or classes) it must sit inside of.",
    "requires": "middleware (names or classes) that must be in the agent with it.",
    "position": "'outermost' or 'innermost' (default: anywhere).",
}
EFFECTS_TYPES = {
    **dict.fromkeys(("reads", "writes"), "Collection[str] | None"),
    **dict.fromkeys(("outside", "inside", "requires"), "Sequence[str | type] | None"),
    "position": "Position | None",
}
for _key, _help in EFFECTS_HELP.items():
    register_option(
        Option(
            _key,
            ALL,
            None,
            _help,
            annotation=EFFECTS_TYPES[_key],
            owner="effects",
            check=lazy(f"funcware.effects:check_{_key}"),
            complete=lazy("funcware.effects:complete_writes"),
        )
    )
register(
    Plugin(
        "effects",
        "funcware.effects:Effects",
        on=frozenset({"order", "effects", "foreign", *EFFECTS_HELP}),
    )
)

# Deadlines, failure policies, always-run cleanup.
register_option(
    Option(
        "timeout",
        ALL | {"hook_config"},
        None,
        "seconds the hook (a wrap: its layer and all inside it) may take, else "
        "HookTimeoutError (default: no limit).",
        annotation="float | None",
        owner="policies",
        check=lazy("funcware.policies:check_timeout"),
        target="method",
    )
)
register_option(
    Option(
        "on_error",
        ALL,
        "raise",
        "'raise' (default) or 'continue' (log a failure, run on without it).",
        annotation="OnError",
        owner="policies",
        check=lazy("funcware.policies:check_on_error"),
    )
)
register_option(
    Option(
        "always",
        frozenset({"after_agent", "hook_config"}),
        False,
        "True runs the after_agent hook also when the run fails (default: False).",
        annotation="bool",
        owner="policies",
        check=lazy("funcware.policies:check_always"),
        target="method",
        elsewhere="Cleanup belongs in after_agent: only after_agent hooks can always run.",
    )
)
register(
    Plugin(
        "policies", "funcware.policies:Policies", on=frozenset({"timeout", "on_error", "always"})
    )
)

# Structured output (also for a request a wrap layer gives a format at run time).
register(
    Plugin("structured", "funcware.structured:StructuredOutputs", on=frozenset({"response_format"}))
)

# Stream guards.
register_option(
    Option(
        "stream",
        frozenset({"after_model", "wrap_model_call"}),
        "pass",
        "'pass' (default), 'buffer' or SlidingWindow(chars=..., check=...): what the guard "
        "lets through to the stream.",
        annotation="StreamPolicy",
        owner="guards",
        check=lazy("funcware.guards:check_stream"),
        elsewhere="stream= governs what a guard lets through to the stream: it applies to the "
        "hooks that see the model's answer.",
    )
)
register(Plugin("guards", "funcware.guards:StreamGuards", on=frozenset({"stream"})))

# The tool-call pairing contract (on by default).
register(Plugin("pairing", "funcware.pairing:ToolCallPairing"))

# LangGraph's node policies.
register_option(
    Option(
        "node_policy",
        NODES,
        None,
        "langgraph add_node policies for the hook's node: a dict of retry_policy, "
        "cache_policy, error_handler, timeout (default: none).",
        annotation="Mapping[str, Any] | None",
        owner="nodes",
        check=lazy("funcware.nodes:check_node_policy"),
        elsewhere="node_policy= applies to a hook's graph node: wrap hooks run inside the "
        "model and tools nodes (create_agent(node_policies={'model': ...})).",
    )
)
register(
    Plugin("nodes", "funcware.nodes:NodePolicies", on=frozenset({"node_policies", "node_policy"}))
)

# Observation: the run record, OpenTelemetry, LangSmith runs.
register_watcher(lambda: import_module("funcware.observe.watch").WATCH)
