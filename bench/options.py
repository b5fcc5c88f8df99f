"""Opt-in options must cost nothing per call when unused: one scenario per variant.

Every variant builds the same 10 mixed no-op middleware (``before_model``, ``after_model``,
``wrap_model_call``, cycled) and runs one model call. ``decorated`` and ``class`` are the
baselines (no options at all); every other variant is compared with ``decorated``.

To add a variant for a new option, add one entry to :data:`VARIANTS`: a title and the
decorator keywords funcware's middleware get (LangChain, which lacks the option, runs the
plain decorated middleware, so its column stays the reference).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from impls import FUNCWARE, LIBRARIES, Api
from scenarios import Prepared, Scenario, _agent, mixed, mixed_classes

__all__ = ["BASELINE", "OPTIONS", "VARIANTS", "Variant"]

COUNT = 10


@dataclass(frozen=True)
class Variant:
    """How the 10 middleware of one options scenario are written."""

    title: str
    options: dict[str, Any] = field(default_factory=dict)
    """Keywords for funcware's hook decorators (the option under test)."""
    classes: bool = False
    """Write them as ``AgentMiddleware`` subclasses instead of decorated functions."""


VARIANTS: dict[str, Variant] = {
    "decorated": Variant("10 decorated middleware, no options"),
    "class": Variant("10 class middleware, no options", classes=True),
    "defaults": Variant(
        "10 decorated, options given at their defaults (timeout=None, on_error='raise')",
        options={"timeout": None, "on_error": "raise"},
    ),
    # issue 16: declarations are checked at build time; effects="warn" (the default)
    # watches nothing per call, so this row should match "decorated".
    "declared": Variant(
        "10 decorated, each declaring the effects it reads (effects='warn')",
        options={"reads": ["state.messages"]},
    ),
}
BASELINE = "decorated"


def _prepare(variant: Variant) -> Callable[[str], Prepared]:
    def middleware(api: Api) -> list[Any]:
        if variant.classes:
            return mixed_classes(api, COUNT)
        options = variant.options if api.name == FUNCWARE else {}
        return mixed(api, COUNT, **options)

    def prepare(impl: str) -> Prepared:
        return Prepared(_agent(impl, middleware), hits=COUNT)

    return prepare


OPTIONS: list[Scenario] = [
    Scenario(f"opt_{name}", v.title, "invoke", LIBRARIES, _prepare(v), group="options")
    for name, v in VARIANTS.items()
]
