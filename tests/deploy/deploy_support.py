"""The deploy example (``deploy/agent.py``), imported from its file as LangGraph Server does."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
MODULE_NAME = "funcware_deploy_example"


def load_deploy_agent() -> ModuleType:
    """``deploy/agent.py`` as a module (imported once; registered so its type hints resolve)."""
    if MODULE_NAME in sys.modules:
        return sys.modules[MODULE_NAME]
    spec = importlib.util.spec_from_file_location(MODULE_NAME, DEPLOY / "agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE_NAME] = module
    spec.loader.exec_module(module)
    return module


def hook_line(module: ModuleType, hook: str) -> int:
    """Where a decorated hook of the example is defined (the line funcware's notes name)."""
    line: int = getattr(module, hook).__wrapped__.__code__.co_firstlineno
    return line
