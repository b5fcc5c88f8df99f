"""Test helpers: ``ScriptedChatModel`` (a model that replays a script offline) and the hook
test kit (``run_hook``: one middleware's hook, run without an agent)."""

from .kit import HookResult, arun_hook, run_hook
from .scripted import RecordedCall, ScriptedChatModel, ScriptExhaustedError, StructuredAnswer

__all__ = [
    "HookResult",
    "RecordedCall",
    "ScriptExhaustedError",
    "ScriptedChatModel",
    "StructuredAnswer",
    "arun_hook",
    "run_hook",
]
