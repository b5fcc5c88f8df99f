"""Test helpers: ``ScriptedChatModel`` (a model that replays a script offline; the
``StreamingScriptedChatModel`` variant streams it in chunks) and the hook test kit
(``run_hook``: one middleware's hook, run without an agent); ``Cassette`` records a real
model's calls once and replays them offline."""

from funcware.testing.cassette import (
    Cassette,
    CassetteError,
    CassetteMismatchError,
    CassetteVersionError,
    redact_text,
)
from funcware.testing.kit import HookResult, arun_hook, run_hook
from funcware.testing.scripted import (
    RecordedCall,
    ScriptedChatModel,
    ScriptExhaustedError,
    StructuredAnswer,
)
from funcware.testing.streaming import StreamingScriptedChatModel

__all__ = [
    "Cassette",
    "CassetteError",
    "CassetteMismatchError",
    "CassetteVersionError",
    "HookResult",
    "RecordedCall",
    "ScriptExhaustedError",
    "ScriptedChatModel",
    "StreamingScriptedChatModel",
    "StructuredAnswer",
    "arun_hook",
    "redact_text",
    "run_hook",
]
