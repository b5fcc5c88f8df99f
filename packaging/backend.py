"""The build backend: setuptools', with editable installs that type checkers can follow.

``pip install -e .`` asks for an editable wheel; setuptools' default mode hooks funcware in
through an import finder that mypy and pyright cannot see, so ``mypy --strict`` on a user's
file would not find funcware. This backend makes the editable mode ``strict`` (a link tree
under ``build/`` put on ``sys.path`` by a plain ``.pth`` file) unless the caller chose one
with ``--config-settings editable_mode=...``. Add a module, and run ``pip install -e .``
again so the link tree has it. Everything else is setuptools' own.
"""

from __future__ import annotations

from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 - the other PEP 517/660 hooks, unchanged


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """setuptools' ``build_editable`` with ``editable_mode=strict`` by default."""
    settings = dict(config_settings or {})
    settings.setdefault("editable_mode", "strict")
    return _setuptools.build_editable(wheel_directory, settings, metadata_directory)
