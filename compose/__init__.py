"""funcware.compose — the core's half that puts middleware together: ``compose()``,
``create_agent()``, the seams; its modules are private (import from ``funcware``)."""

from typing import Any

from funcware.compose.agent import create_agent
from funcware.compose.chain import ComposedMiddleware, compose

__all__ = ["ComposedMiddleware", "compose", "create_agent"]

MOVED: dict[str, str] | str = {}
"""Names that moved out of ``funcware.compose`` and their new homes, or where that table is
(``"module:attribute"``, set by ``funcware``)."""


def __getattr__(name: str) -> Any:
    from funcware.hooks.moved import moved

    return moved(__name__, name, MOVED)
