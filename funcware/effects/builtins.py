"""The effects and ordering constraints of LangChain's built-in middleware (langchain 1.5).

Keyed by the class's module and name, so nothing here imports ``langchain``: a LangChain
middleware (or a subclass of one) declares what its class's entry says. Read from
langchain 1.5.2's ``langchain/agents/middleware`` sources; references between entries
are class names, so they match LangChain middleware by their default names. A few
entries depend on how the instance is configured (``on_failure``, ``exit_behavior``), and
the table also says which classes never take the jumps their hooks declare, and which
tools an approval asks about or an ``after_model`` refuses (for the hazard check).
"""

from __future__ import annotations

from typing import Any

from funcware.effects.declarations import Declaration, parse

__all__ = ["BUILTINS", "asked_tools", "builtin_declaration", "builtin_jumps", "refused_tools"]

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
_TOOL_ERROR = (
    "ToolErrorMiddleware must sit outside ToolRetryMiddleware: it does not retry, so the "
    "retry goes inside it (with on_failure='error') and only the last error reaches it "
    "(LangChain's documentation)"
)
_TOOL_SEARCH = (
    "ProviderToolSearchMiddleware must sit inside ModelFallbackMiddleware: it sets up the "
    "tool search for the provider of request.model, so a fallback outside it hands each "
    "fallback model its own provider's tool search"
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
    # after_model: finds the last AIMessage, interrupts, edits its tool calls in place
    # (same id) and answers rejected calls; wrap_tool_call applies edits (per_call: decides,
    # answers a rejected call itself) and annotates an edited call's answer.
    f"{_PKG}.human_in_the_loop.HumanInTheLoopMiddleware": {
        "reads": ["messages.latest", "state.hitl_edited_tool_calls"],
        "writes": {
            "after_model": [
                "messages.rewrite",
                "messages.answer",
                "state.hitl_edited_tool_calls",
                "interrupt",
            ],
            "wrap_tool_call": [
                "state.hitl_edited_tool_calls",
                "interrupt",
                "tool.args",
                "tool.answer.rewrite",
                "handler.skip",
            ],
        },
    },
    # before_model checks the counts (exit "end": appends an AIMessage and jumps to end,
    # "error": raises); after_model counts the call just made.
    f"{_PKG}.model_call_limit.ModelCallLimitMiddleware": {
        "reads": ["model.calls", "state.thread_model_call_count", "state.run_model_call_count"],
        "writes": [
            "messages.append",
            "state.thread_model_call_count",
            "state.run_model_call_count",
        ],
    },
    f"{_PKG}.model_fallback.ModelFallbackMiddleware": {
        "reads": ["model.error"],
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
    # on_failure="continue" (the default) or a callable: the last error becomes an answer.
    f"{_PKG}.model_retry.ModelRetryMiddleware": {
        "reads": ["model.error"],
        "writes": ["handler.retry", "model.error.recover"],
    },
    f"{_PKG}.model_router.ModelRouterMiddleware": {
        "reads": ["messages.latest", "state.model_route"],
        "writes": ["state.model_route", "request.model"],
    },
    # before_model masks the last HumanMessage and the ToolMessages after the last
    # AIMessage, after_model the last AIMessage's content, all in place (same ids).
    f"{_PKG}.pii.PIIMiddleware": {
        "reads": ["messages.latest"],
        "writes": ["messages.rewrite.text"],
    },
    f"{_PKG}.provider_tool_search.ProviderToolSearchMiddleware": {
        "reads": ["request.tools"],
        "writes": ["request.tools"],
        "inside": ["ModelFallbackMiddleware"],
        "why": _TOOL_SEARCH,
    },
    f"{_PKG}.shell_tool.ShellToolMiddleware": {
        "writes": ["state.shell_session_resources"],
    },
    # before_model: removes every message and puts back a summary and the recent ones
    # as they were (no tool call added or changed).
    f"{_PKG}.summarization.SummarizationMiddleware": {
        "reads": ["messages.history"],
        "writes": ["messages.rewrite.text", "messages.append"],
    },
    # after_model answers parallel write_todos calls with errors.
    f"{_PKG}.todo.TodoListMiddleware": {
        "reads": ["messages.latest"],
        "writes": ["request.system_message", "messages.answer"],
    },
    # after_model counts the last AIMessage's calls (answered or not: an earlier hook's
    # rejection still counts), found robustly; over the limit it answers them
    # ("continue", "end": also an AIMessage and a jump to end) or raises ("error").
    f"{_PKG}.tool_call_limit.ToolCallLimitMiddleware": {
        "reads": [
            "messages.latest",
            "tool.calls",
            "state.thread_tool_call_count",
            "state.run_tool_call_count",
        ],
        "writes": [
            "messages.answer",
            "messages.append",
            "state.thread_tool_call_count",
            "state.run_tool_call_count",
        ],
    },
    f"{_PKG}.tool_emulator.LLMToolEmulator": {
        "reads": ["tool.args"],
        "writes": ["handler.skip"],
    },
    f"{_PKG}.tool_error.ToolErrorMiddleware": {
        "reads": ["tool.error"],
        "writes": ["tool.error.recover"],
        "outside": ["ToolRetryMiddleware"],
        "why": _TOOL_ERROR,
    },
    # on_failure="continue" (the default) or a callable: the last error becomes an answer.
    f"{_PKG}.tool_retry.ToolRetryMiddleware": {
        "reads": ["tool.error"],
        "writes": ["handler.retry", "tool.error.recover"],
    },
    f"{_PKG}.tool_selection.LLMToolSelectorMiddleware": {
        "reads": ["request.messages", "request.tools"],
        "writes": ["request.tools"],
    },
}
"""Class (``module.Name``) -> its declaration keywords, and ``why`` for its constraints."""

_ERROR_RAISES = ("on_failure", "error")
_MCL = f"{_PKG}.model_call_limit.ModelCallLimitMiddleware"
_VARIANTS: dict[str, list[tuple[tuple[str, object], dict[str, Any]]]] = {
    f"{_PKG}.model_retry.ModelRetryMiddleware": [
        (_ERROR_RAISES, {"reads": ["model.error"], "writes": ["handler.retry"]}),
    ],
    f"{_PKG}.tool_retry.ToolRetryMiddleware": [
        (_ERROR_RAISES, {"reads": ["tool.error"], "writes": ["handler.retry"]}),
    ],
    f"{_PKG}.tool_call_limit.ToolCallLimitMiddleware": [
        (
            ("exit_behavior", "error"),
            {
                "reads": BUILTINS[f"{_PKG}.tool_call_limit.ToolCallLimitMiddleware"]["reads"],
                "writes": ["state.thread_tool_call_count", "state.run_tool_call_count"],
            },
        ),
    ],
    _MCL: [
        # without a thread limit, a count skipped by a jump to "end" cannot matter: the
        # run ends, and the run count starts again with the next run
        (
            ("thread_limit", None),
            {"reads": ["state.thread_model_call_count", "state.run_model_call_count"]},
        ),
        (
            ("exit_behavior", "error"),
            {"writes": ["state.thread_model_call_count", "state.run_model_call_count"]},
        ),
    ],
}
"""Class -> ``[((attribute, value), keywords), ...]``: the keywords that replace the
entry's for an instance so configured (an ``on_failure="error"`` retry raises its last
error instead of answering with it), applied in turn."""

_JUMPS_WHEN: dict[str, tuple[str, object]] = {
    f"{_PKG}.tool_call_limit.ToolCallLimitMiddleware": ("exit_behavior", "end"),
    f"{_PKG}.model_call_limit.ModelCallLimitMiddleware": ("exit_behavior", "end"),
    f"{_PKG}.pii.PIIMiddleware": ("", None),
}
"""Classes whose hooks declare ``can_jump_to`` but jump only when ``attribute == value``
(``("", None)``: never; ``PIIMiddleware`` raises instead)."""

_parsed: dict[tuple[str, tuple[bool, ...]], Declaration | None] = {}


def _entry(middleware: Any) -> str | None:
    return _known(middleware, BUILTINS)


def _known(middleware: Any, table: dict[str, Any]) -> str | None:
    """The key of ``middleware``'s class (or its nearest base) in ``table``."""
    for klass in type(middleware).__mro__:
        key = f"{klass.__module__}.{klass.__qualname__}"
        if key in table:
            return key
    return None


def builtin_declaration(middleware: Any) -> Declaration | None:
    """The table's declaration for ``middleware``'s class (or the nearest listed base)."""
    key = _entry(middleware)
    if key is None:
        return None
    variants = _VARIANTS.get(key, [])
    chosen = tuple(getattr(middleware, a, None) == v for (a, v), _ in variants)
    if (key, chosen) not in _parsed:
        entry = dict(BUILTINS[key])
        for picked, (_, keywords) in zip(chosen, variants, strict=True):
            if picked:
                entry.update(keywords)
        _parsed[key, chosen] = parse(f"funcware's table entry for {key}", **entry)
    return _parsed[key, chosen]


def builtin_jumps(middleware: Any) -> bool:
    """``False`` when the table knows ``middleware`` never takes the jumps its hooks declare."""
    key = _entry(middleware)
    when = _JUMPS_WHEN.get(key) if key is not None else None
    if when is None:
        return True
    attribute, value = when
    return bool(attribute) and getattr(middleware, attribute, None) == value


_ASKS: dict[str, str] = {
    f"{_PKG}.human_in_the_loop.HumanInTheLoopMiddleware": "interrupt_on",
    "funcware.cookbook.human_approval.ApproveToolCalls": "needs_approval",
}
"""Approvals whose attribute names the tools they ask a reviewer about (its keys, or items)."""

_REFUSES: dict[str, tuple[str, frozenset[str] | None, str]] = {
    # over its limit it answers the calls with an error ("continue", "end") or raises
    # ("error"): in every configuration, no call over the limit runs
    f"{_PKG}.tool_call_limit.ToolCallLimitMiddleware": (
        "tool_name",
        None,
        "the calls over its limit",
    ),
    f"{_PKG}.todo.TodoListMiddleware": (
        "",
        frozenset({"write_todos"}),
        "write_todos calls made in parallel",
    ),
}
"""Classes whose ``after_model`` refuses tool calls: ``(attribute, tools, which calls)``,
the attribute naming the one tool refused (``None`` there: every tool), else ``tools``."""


def asked_tools(middleware: Any) -> frozenset[str] | None:
    """The tools ``middleware`` asks a reviewer about, when its configuration says
    (``None``: unknown, any tool)."""
    key = _known(middleware, _ASKS)
    names = getattr(middleware, _ASKS[key], None) if key is not None else None
    return frozenset(names) if isinstance(names, (dict, frozenset, set, list, tuple)) else None


def refused_tools(middleware: Any) -> tuple[str, frozenset[str] | None] | None:
    """When the table knows ``middleware``'s ``after_model`` refuses tool calls: which
    calls in words, and the tools (``None``: any tool)."""
    key = _known(middleware, _REFUSES)
    if key is None:
        return None
    attribute, tools, which = _REFUSES[key]
    if attribute:
        name = getattr(middleware, attribute, None)
        tools = frozenset({name}) if isinstance(name, str) else None
    return which, tools
