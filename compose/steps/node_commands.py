"""A node hook that returned a ``Command``: its jump, its update and its ``goto`` checked.
Loaded only when a node hook returns a ``Command``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.graph import END
from langgraph.types import Command, Send

from funcware.compose.steps.keys import check_keys, written_keys
from funcware.compose.steps.nodes import check_jump
from funcware.compose.wraps.updates import update_writes
from funcware.hooks.middleware import HookImpl

__all__ = ["check_command", "check_goto"]


def check_goto(command: Command[Any], nodes: frozenset[str] | None, owner: str) -> None:
    """Refuse a ``goto`` to a node not in ``nodes`` (langgraph would log and go on)."""
    if nodes is None or not command.goto or command.graph is not None:
        return
    gotos = command.goto if isinstance(command.goto, (list, tuple)) else [command.goto]
    for goto in gotos:
        name = goto.node if isinstance(goto, Send) else goto
        if name not in nodes and name != END:
            from funcware.compose.steps.node_errors import unknown_node

            raise unknown_node(name, nodes, owner)


def check_command(
    command: Command[Any],
    impl: HookImpl,
    known: frozenset[str] | None,
    nodes: frozenset[str] | None,
) -> Command[Any]:
    """``command`` if it is a valid node-hook result (see ``check_node_result``)."""
    if isinstance(command.update, Mapping):
        check_jump(command.update.get("jump_to"), impl)
    elif command.update is not None:
        update_writes(command.update, impl.describe())  # refuses what is no update
    if command.graph is None:  # a parent graph's keys are not this agent's to check
        check_keys(written_keys(command), known, impl.describe())
    check_goto(command, nodes, impl.describe())
    return command
