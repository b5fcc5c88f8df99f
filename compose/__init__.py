"""funcware.compose — the core's half that puts middleware together: ``chain``
(``compose()``), ``agent`` (``create_agent()``), ``seams``, ``observing``; by job ``graph``,
``steps``, ``wraps``, ``stream``, ``threads``. Import its public names from ``funcware``;
this package's modules are private.
"""

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
