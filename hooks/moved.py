"""Public names that moved: their old import paths keep working, with a deprecation warning.

A package answers unknown attributes with :func:`moved` and its ``MOVED`` table (name -> new
home), which the front door fills: the core never names the feature packages.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Mapping
from typing import Any, cast

from funcware.errors import FuncwareDeprecationWarning

__all__ = ["moved"]


def moved(package: str, name: str, table: Mapping[str, str] | str) -> Any:
    """``name`` from its new home in ``table`` (or the table ``"module:attribute"`` names),
    with a ``FuncwareDeprecationWarning``; an ``AttributeError`` if ``package`` never had it."""
    if isinstance(table, str):
        module, _, attribute = table.partition(":")
        table = cast("Mapping[str, str]", getattr(importlib.import_module(module), attribute))
    home = table.get(name)
    if home is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    warnings.warn(
        f"{package}.{name} is deprecated since funcware 0.2 and will be removed in 0.3; "
        f"import it from {home} instead.",
        FuncwareDeprecationWarning,
        stacklevel=3,
    )
    return getattr(importlib.import_module(home), name)
