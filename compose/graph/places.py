"""The nodes a jump or a loop lands on, worked out once per agent."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Places"]


@dataclass(frozen=True)
class Places:
    """The nodes a jump or a loop can land on."""

    loop_entry: str
    """The first ``before_model`` node, or ``"model"``: where ``jump_to="model"`` goes."""
    exit: str
    """The first ``after_agent`` node to run, or END: where ``jump_to="end"`` goes."""

    def resolve(self, target: object) -> str | None:
        """The node for a ``jump_to`` value, or ``None`` when there is no jump."""
        if target == "model":
            return self.loop_entry
        if target == "end":
            return self.exit
        if target == "tools":
            return "tools"
        return None
