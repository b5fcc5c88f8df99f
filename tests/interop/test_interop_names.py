"""Code written for langchain.agents.middleware moves over by changing one import."""

from __future__ import annotations

from support import require_langchain

import funcware

lc_middleware = require_langchain("langchain.agents.middleware")

# LangChain names that are not the middleware API itself: its built-in catalog (use
# those classes directly; they run in funcware agents).
NOT_API = {
    "ClearToolUsesEdit",
    "CodexSandboxExecutionPolicy",
    "DockerExecutionPolicy",
    "HostExecutionPolicy",
    "InterruptOnConfig",
    "LLMToolEmulator",
    "ModelChoice",
    "PIIDetectionError",
    "PIIMatch",
    "RedactionRule",
    "TriggerClause",
}


def test_every_middleware_api_name_is_importable_from_funcware() -> None:
    api = {
        name
        for name in lc_middleware.__all__
        if name not in NOT_API and (name == "AgentMiddleware" or not name.endswith("Middleware"))
    }
    missing = sorted(name for name in api if not hasattr(funcware, name))
    assert missing == []
