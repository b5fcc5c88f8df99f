"""The built-in features, registered on the core's seams as data: each a
:class:`~funcware.compose.seams.Plugin` (where it lives, what switches it on) with the hook
options it owns, checked by ``check_<option>`` in its package, imported on first use.
Registration order is the order a build consults them."""

from __future__ import annotations

from collections.abc import Collection
from importlib import import_module
from typing import Any

from funcware.compose.observing import register_watcher
from funcware.compose.seams import Plugin, claim_run_key, register
from funcware.hooks.adapters import Foreign, register_adapter
from funcware.hooks.options import ALL, NODES, Option, lazy, register_option

__all__: list[str] = []


def _option(feature: str, name: str, where: Collection[str], default: object, **more: Any) -> None:
    """Register ``feature``'s hook option ``name`` (``more``: ``help``, ``annotation``, ...)."""
    check = lazy(f"funcware.{feature}:check_{name}")
    register_option(Option(name, frozenset(where), default, owner=feature, check=check, **more))


# LangChain's middleware and state schemas, adapted where they are met.
register_adapter(Foreign("langchain", "funcware.interop:LangChainAdapter", modules=("langchain.",)))

# Run-level control, first (the checks see a run's stack): loaded by a build whose stack
# uses it, or by the first run whose config chooses middleware or is handed some.
_option(
    "runs",
    "per_run",
    ALL,
    None,
    annotation="Literal['on', 'off', 'required'] | None",
    help="'on' (runs may switch it off), 'off' (registered, on only in runs that add it) or "
    "'required' (no run may switch it off); default: on, and runs may switch it off.",
)
register(Plugin("runs", "funcware.runs:RunControl", frozenset({"per_run", "hook:wrap_agent_call"})))
claim_run_key("funcware", "funcware.runs:take")
claim_run_key("__funcware_inherited", "funcware.runs:take")

# Subagents inherit middleware declared subagents="inherit" (handed down through the run).
_option(
    "subagents",
    "subagents",
    ALL,
    None,
    annotation="Literal['inherit'] | None",
    help="'inherit': every agent started during its runs (a funcware agent used as a tool, "
    "deepagents' task subagents) runs with it too; default: only this agent.",
)
register(Plugin("subagents", "funcware.subagents:Subagents", frozenset({"subagents"})))

# Declared effects and ordering constraints: (type, help) of each option.
EFFECTS = {
    "reads": (
        "Collection[str] | None",
        "effect names it reads, e.g. 'messages.latest', 'request.messages' (default: undeclared).",
    ),
    "writes": (
        "Collection[str] | None",
        "effect names it writes, e.g. 'messages.answer', 'model.answer.rewrite' (default: "
        "undeclared).",
    ),
    "outside": (
        "Sequence[str | type] | None",
        "middleware (names or classes) it must sit outside of.",
    ),
    "inside": (
        "Sequence[str | type] | None",
        "middleware (names or classes) it must sit inside of.",
    ),
    "requires": (
        "Sequence[str | type] | None",
        "middleware (names or classes) that must be in the agent with it.",
    ),
    "position": ("Position | None", "'outermost' or 'innermost' (default: anywhere)."),
}
for _name, (_type, _help) in EFFECTS.items():
    _option(
        "effects",
        _name,
        ALL,
        None,
        annotation=_type,
        help=_help,
        complete=lazy("funcware.effects:complete_writes"),
    )
register(
    Plugin(
        "effects", "funcware.effects:Effects", frozenset({"order", "effects", "foreign", *EFFECTS})
    )
)

# Deadlines, failure policies, always-run cleanup.
_option(
    "policies",
    "timeout",
    ALL | {"hook_config"},
    None,
    annotation="float | None",
    help="seconds the hook (a wrap: its layer and all inside it) may take, else "
    "HookTimeoutError (default: no limit).",
    target="method",
)
_option(
    "policies",
    "on_error",
    ALL,
    "raise",
    annotation="OnError",
    help="'raise' (default) or 'continue' (log a failure, run on without it).",
)
_option(
    "policies",
    "always",
    {"after_agent", "hook_config"},
    False,
    annotation="bool",
    help="True runs the after_agent hook also when the run fails (default: False).",
    target="method",
    elsewhere="Cleanup belongs in after_agent: only after_agent hooks can always run.",
)
register(
    Plugin("policies", "funcware.policies:Policies", frozenset({"timeout", "on_error", "always"}))
)

# Structured output (also for a request a wrap layer gives a format at run time).
register(
    Plugin("structured", "funcware.structured:StructuredOutputs", frozenset({"response_format"}))
)

# Stream guards.
_option(
    "guards",
    "stream",
    {"after_model", "wrap_model_call"},
    "pass",
    annotation="StreamPolicy",
    help="'pass' (default), 'buffer' or SlidingWindow(chars=..., check=...): what the guard "
    "lets through to the stream.",
    elsewhere="stream= governs what a guard lets through to the stream: it applies to the hooks "
    "that see the model's answer.",
)
register(Plugin("guards", "funcware.guards:StreamGuards", frozenset({"stream"})))

# The tool-call pairing contract (on by default).
register(Plugin("pairing", "funcware.pairing:ToolCallPairing"))

# LangGraph's node policies.
_option(
    "nodes",
    "node_policy",
    NODES,
    None,
    annotation="Mapping[str, Any] | None",
    help="langgraph add_node policies for the hook's node: a dict of retry_policy, "
    "cache_policy, error_handler, timeout (default: none).",
    elsewhere="node_policy= applies to a hook's graph node: wrap hooks run inside the model "
    "and tools nodes (create_agent(node_policies={'model': ...})).",
)
register(
    Plugin("nodes", "funcware.nodes:NodePolicies", frozenset({"node_policies", "node_policy"}))
)

# Observation: the run record, OpenTelemetry, LangSmith runs.
register_watcher(lambda: import_module("funcware.observe.watch").WATCH)
