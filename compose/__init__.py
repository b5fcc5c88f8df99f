"""funcware.compose — the core's half that puts middleware together.

``chain`` (``compose()``), ``agent`` (``create_agent()``), ``seams`` (where features plug
in), ``observing`` (who observes a run); by job: ``graph`` (the plan, schemas, reducers,
edges), ``steps`` (running node hooks and the model and tool nodes), ``wraps`` (the
onion), ``stream`` (what an agent streams), ``threads`` (the sync/async bridge).

Its public names have one home, ``funcware``: there ``funcware.compose`` is the
``compose()`` function, so import from ``funcware`` (``from funcware import compose,
create_agent``); this package's modules are private.
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
