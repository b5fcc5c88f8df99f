"""The effects and ordering constraints of LangChain's built-in middleware (langchain 1.5).

Keyed by the class's module and name, so nothing here imports ``langchain``: a LangChain
middleware (or a subclass of one) declares what its class's entry says. Read from
langchain 1.5.2's ``langchain/agents/middleware`` sources; references between entries
are class names, so they match LangChain middleware by their default names.
"""

from __future__ import annotations

from typing import Any

from .effects import Declaration, declare

__all__ = ["BUILTINS", "builtin_declaration"]

_PKG = "langchain.agents.middleware"

_HITL_EDIT = (
    "AutoModeMiddleware must sit inside HumanInTheLoopMiddleware: a reviewer's edit, "
    "applied by HumanInTheLoopMiddleware's wrap_tool_call, replaces the tool call after "
    "an outer AutoModeMiddleware classified it, so the edited call would run without "
    "being classified (langchain#40694)"
)
_ROUTED_FALLBACK = (
    "ModelFallbackMiddleware must sit inside ModelRouterMiddleware: both write "
    "request.model, and a router inside the fallback would put the routed model back "
    "on every fallback attempt, so the fallback models would never be called "
    "(langchain#40700)"
)
_REFUSAL = (
    "ModelRefusalMiddleware must sit inside ModelFallbackMiddleware, so that the "
    "fallback can catch the refusal error it raises (LangChain's documentation)"
)

BUILTINS: dict[str, dict[str, Any]] = {
    f"{_PKG}.auto_mode.AutoModeMiddleware": {
        "reads": ["tool.args", "state.messages"],
        "writes": ["handler.skip"],
        "inside": ["HumanInTheLoopMiddleware"],
        "why": _HITL_EDIT,
    },
    f"{_PKG}.context_editing.ContextEditingMiddleware": {
        "reads": ["request.messages"],
        "writes": ["request.messages"],
    },
    f"{_PKG}.file_search.FilesystemFileSearchMiddleware": {"writes": []},
    f"{_PKG}.human_in_the_loop.HumanInTheLoopMiddleware": {
        "reads": ["state.messages", "state.hitl_edited_tool_calls"],
        "writes": [
            "state.messages",
            "state.hitl_edited_tool_calls",
            "interrupt",
            "tool.args",
            "tool.result",
            "handler.skip",
        ],
    },
    f"{_PKG}.model_call_limit.ModelCallLimitMiddleware": {
        "reads": ["state.thread_model_call_count", "state.run_model_call_count"],
        "writes": [
            "state.messages",
            "state.thread_model_call_count",
            "state.run_model_call_count",
        ],
    },
    f"{_PKG}.model_fallback.ModelFallbackMiddleware": {
        "writes": [
            "request.model",
            "request.model_settings",
            "request.system_message",
            "request.messages",
            "request.tools",
            "handler.retry",
        ],
        "inside": ["ModelRouterMiddleware"],
        "why": _ROUTED_FALLBACK,
    },
    f"{_PKG}.model_refusal.ModelRefusalMiddleware": {
        "reads": ["model.result"],
        "writes": [],
        "inside": ["ModelFallbackMiddleware"],
        "why": _REFUSAL,
    },
    f"{_PKG}.model_retry.ModelRetryMiddleware": {
        "writes": ["handler.retry", "model.result"],
    },
    f"{_PKG}.model_router.ModelRouterMiddleware": {
        "reads": ["state.messages", "state.model_route"],
        "writes": ["state.model_route", "request.model"],
    },
    f"{_PKG}.pii.PIIMiddleware": {
        "reads": ["state.messages"],
        "writes": ["state.messages"],
    },
    f"{_PKG}.provider_tool_search.ProviderToolSearchMiddleware": {
        "reads": ["request.tools"],
        "writes": ["request.tools"],
    },
    f"{_PKG}.shell_tool.ShellToolMiddleware": {
        "writes": ["state.shell_session_resources"],
    },
    f"{_PKG}.summarization.SummarizationMiddleware": {
        "reads": ["state.messages"],
        "writes": ["state.messages"],
    },
    f"{_PKG}.todo.TodoListMiddleware": {
        "reads": ["state.messages"],
        "writes": ["request.system_message", "state.messages"],
    },
    f"{_PKG}.tool_call_limit.ToolCallLimitMiddleware": {
        "reads": ["state.messages", "state.thread_tool_call_count", "state.run_tool_call_count"],
        "writes": [
            "state.messages",
            "state.thread_tool_call_count",
            "state.run_tool_call_count",
        ],
    },
    f"{_PKG}.tool_emulator.LLMToolEmulator": {
        "reads": ["tool.args"],
        "writes": ["handler.skip"],
    },
    f"{_PKG}.tool_error.ToolErrorMiddleware": {"writes": ["tool.result"]},
    f"{_PKG}.tool_retry.ToolRetryMiddleware": {"writes": ["handler.retry", "tool.result"]},
    f"{_PKG}.tool_selection.LLMToolSelectorMiddleware": {
        "reads": ["request.messages", "request.tools"],
        "writes": ["request.tools"],
    },
}
"""Class (``module.Name``) -> its declaration keywords, and ``why`` for its constraints."""

_parsed: dict[str, Declaration | None] = {}


def builtin_declaration(middleware: Any) -> Declaration | None:
    """The table's declaration for ``middleware``'s class (or the nearest listed base)."""
    for klass in type(middleware).__mro__:
        key = f"{klass.__module__}.{klass.__qualname__}"
        if key in BUILTINS:
            if key not in _parsed:
                _parsed[key] = declare(f"funcware's table entry for {key}", **BUILTINS[key])
            return _parsed[key]
    return None
