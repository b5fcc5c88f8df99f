"""funcware agents as Temporal workflows, through Temporal's own LangGraph plugin.

Build the agent with ``create_agent`` as usual, then on every worker (the client from
``Client.connect(..., data_converter=data_converter)``)::

    worker = Worker(
        client,
        task_queue="agents",
        workflows=[AgentWorkflow],
        plugins=[plugin({"support": agent})],
        workflow_runner=sandbox(),
    )

The model call and each tool call run as activities (their wrap layers inside them); a
node hook runs in the workflow when its middleware declares its effects, else as an
activity (:func:`placement` says where each step runs, and why). Clients start
``AgentWorkflow.run`` with the graph name and the input, and answer an interrupt with the
update ``AgentWorkflow.resume``. Needs the ``temporal`` extra (``temporalio-langgraph``),
except :func:`placement`, which only reads the agent.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from funcware.temporal.placement import NondeterministicHookError, Placement, Step, placement

if TYPE_CHECKING:
    from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

    from funcware.temporal.converter import LangChainPayloadConverter, data_converter
    from funcware.temporal.graph import DEFAULT_ACTIVITY_OPTIONS, agent_for, plugin, temporal_graph
    from funcware.temporal.workflow import AgentWorkflow

__all__ = [
    "DEFAULT_ACTIVITY_OPTIONS",
    "AgentWorkflow",
    "LangChainPayloadConverter",
    "NondeterministicHookError",
    "Placement",
    "Step",
    "agent_for",
    "data_converter",
    "placement",
    "plugin",
    "sandbox",
    "temporal_graph",
]

_LAZY = {
    "AgentWorkflow": "funcware.temporal.workflow",
    "LangChainPayloadConverter": "funcware.temporal.converter",
    "data_converter": "funcware.temporal.converter",
    "DEFAULT_ACTIVITY_OPTIONS": "funcware.temporal.graph",
    "agent_for": "funcware.temporal.graph",
    "plugin": "funcware.temporal.graph",
    "temporal_graph": "funcware.temporal.graph",
}


def sandbox(*modules: str) -> SandboxedWorkflowRunner:
    """Temporal's workflow sandbox, passing ``funcware`` and ``modules`` through.

    The agents' code is imported once per worker, outside the sandbox; name here the
    modules that define your agents, middleware and tools.
    """
    from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

    restrictions = SandboxRestrictions.default.with_passthrough_modules("funcware", *modules)
    return SandboxedWorkflowRunner(restrictions=restrictions)


def __getattr__(name: str) -> Any:
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module 'funcware.temporal' has no attribute {name!r}")
    try:
        module = import_module(home)
    except ImportError as exc:
        raise ImportError(
            f"funcware.temporal.{name} needs Temporal's LangGraph plugin: "
            f"pip install -e '.[temporal]' ({exc})"
        ) from exc
    return getattr(module, name)
