"""LangChain's ``HumanInTheLoopMiddleware`` in funcware stacks: an approval that fails closed.

In its default ``"batched"`` mode LangChain's middleware pauses with ``interrupt()`` and no
``response_schema``, so langgraph saves whatever the resume holds before the middleware
reads it: a decision it then refuses ("Unexpected human decision", a wrong count) stays
saved, and every later resume of that pause is answered with it. The approval can never be
answered again. The adapter (:mod:`funcware.interop`) puts :func:`guard_after_model`
around its ``after_model`` in funcware stacks, which gives it three guarantees:

- a resume the pause cannot take (not ``{"decisions": [...]}``, a wrong count, a decision
  type the tool does not allow, a key a decision does not have, an edit without a tool
  name and arguments) is refused with a ``ValueError`` that starts with LangChain's
  sentence, before the middleware reads it: nothing runs, nothing is saved, and the same
  pause can be answered again;
- an edit that turns a call into a call of another gated tool is refused, so a call
  cannot escape the policy of the tool it becomes (langchain#40166); an edit to a tool the
  middleware does not gate is what that tool's policy allows;
- the reviewer is asked only about calls that will run: a call another middleware already
  answered (a limit's refusal) is left out of the review and kept as it was.

The ``"per_call"`` mode is left as it is: it pauses with a typed ``response_schema``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langgraph._internal._constants import CONFIG_KEY_SCRATCHPAD
from langgraph.config import get_config

__all__ = ["guard_after_model"]

_KEYS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    # decision type: (keys it must have, keys it may have)
    "approve": (frozenset({"type"}), frozenset({"type"})),
    "edit": (frozenset({"type", "edited_action"}), frozenset({"type", "edited_action"})),
    "reject": (frozenset({"type"}), frozenset({"type", "message"})),
    "respond": (frozenset({"type", "message"}), frozenset({"type", "message"})),
}


def _waiting_resume() -> Any:
    """The resume this node's first ``interrupt()`` would return, without taking it."""
    try:
        configurable = get_config().get("configurable", {})
    except RuntimeError:
        return None
    scratchpad = configurable.get(CONFIG_KEY_SCRATCHPAD)
    if scratchpad is None:
        return None
    if scratchpad.resume:
        return scratchpad.resume[0]
    return scratchpad.get_null_resume(False)


def _latest_answer(messages: Sequence[Any]) -> tuple[int, AIMessage | None, set[str]]:
    """The model's latest answer, its index, and the ids of its calls already answered."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AIMessage):
            answered = {m.tool_call_id for m in messages[index + 1 :] if isinstance(m, ToolMessage)}
            return index, message, answered
    return -1, None, set()


def _decision_problem(
    decision: object, call: ToolCall, allowed: Sequence[str], gated: Mapping[str, Any]
) -> str | None:
    """Why ``decision`` cannot answer the review of ``call``; ``None`` if it can."""
    if not isinstance(decision, Mapping):
        return "a decision must be a dict with a 'type'"
    kind = decision.get("type")
    if kind not in allowed or kind not in _KEYS:
        return (
            f"Decision type {kind!r} is not allowed for tool {call['name']!r}. "
            f"Expected one of {list(allowed)} based on the tool's configuration"
        )
    required, possible = _KEYS[kind]
    missing, extra = sorted(required - set(decision)), sorted(set(decision) - possible)
    if missing or extra:
        keys = sorted(possible)
        return f"the {kind!r} decision has the keys {keys}; missing {missing}, unknown {extra}"
    if kind == "edit":
        action = decision["edited_action"]
        if (
            not isinstance(action, Mapping)
            or set(action) != {"name", "args"}
            or not isinstance(action["name"], str)
            or not isinstance(action["args"], Mapping)
        ):
            return "an edit's edited_action must be {'name': str, 'args': dict}"
        if action["name"] != call["name"] and action["name"] in gated:
            return (
                f"the edit turns a call to {call['name']!r} into a call to {action['name']!r}, "
                "which needs its own review; reject this call and let the model propose "
                f"the {action['name']!r} call, which is then reviewed under that tool's policy"
            )
    if kind in ("reject", "respond") and not isinstance(decision.get("message", ""), str):
        return f"a {kind!r} decision's message must be a string"
    return None


def _refuse(resume: object, reviewed: Sequence[ToolCall], middleware: Any) -> None:
    """Raise ``ValueError`` if ``resume`` cannot answer the review of ``reviewed``."""
    gated: Mapping[str, Any] = middleware.interrupt_on
    names = [call["name"] for call in reviewed]
    shown: object = resume
    if not isinstance(resume, Mapping) or set(resume) != {"decisions"}:
        problem = "a resume must be {'decisions': [...]} and nothing else"
    elif not isinstance(resume["decisions"], list) or len(resume["decisions"]) != len(reviewed):
        got = resume["decisions"]
        count = len(got) if isinstance(got, list) else "no list of"
        problem = (
            f"Number of human decisions ({count}) does not match number of hanging tool "
            f"calls ({len(reviewed)})"
        )
    else:
        for decision, call in zip(resume["decisions"], reviewed, strict=True):
            allowed = gated[call["name"]]["allowed_decisions"]
            problem_or_none = _decision_problem(decision, call, allowed, gated)
            if problem_or_none is not None:
                shown, problem = decision, problem_or_none
                break
        else:
            return
    raise ValueError(
        f"Unexpected human decision: {shown!r}. {problem}. funcware: the review is of "
        f"{names}; nothing was run and nothing was saved, so resume the thread again with "
        "valid decisions."
    )


def _reviewed(
    middleware: Any, state: Any, runtime: Any, calls: Sequence[ToolCall]
) -> list[ToolCall]:
    """The calls the middleware will ask about, as it decides (its ``when`` predicates)."""
    should = getattr(middleware, "_should_interrupt", None)
    reviewed = []
    for call in calls:
        config = middleware.interrupt_on.get(call["name"])
        if config is None:
            continue
        if should is None or should(call, config, state, runtime):
            reviewed.append(call)
    return reviewed


def _prepare(middleware: Any, state: Any, runtime: Any) -> tuple[AIMessage | None, Any]:
    """Refuse a waiting resume the review cannot take; then the state the middleware sees
    (its latest answer showing only the calls that will run) and the answer it hides."""
    if getattr(middleware, "interrupt_mode", "batched") == "per_call":
        return None, state
    messages = state["messages"]
    index, answer, answered = _latest_answer(messages)
    if answer is None or not answer.tool_calls:
        return None, state
    open_calls = [c for c in answer.tool_calls if c["id"] not in answered]
    resume = _waiting_resume()
    if resume is not None:
        reviewed = _reviewed(middleware, state, runtime, open_calls)
        if reviewed:  # with nothing to review, the waiting answer is not this pause's
            _refuse(resume, reviewed, middleware)
    if len(open_calls) == len(answer.tool_calls):
        return None, state
    shown = answer.model_copy(update={"tool_calls": open_calls})
    return answer, {**state, "messages": [*messages[:index], shown, *messages[index + 1 :]]}


def _restore(result: Any, answer: AIMessage | None) -> Any:
    """Put the calls left out of the review back into the revised answer, in their order."""
    if answer is None or not isinstance(result, dict):
        return result
    revised = [m for m in result.get("messages", []) if isinstance(m, AIMessage)]
    if not revised or revised[0].id != answer.id:
        return result
    by_id = {call["id"]: call for call in revised[0].tool_calls}
    calls = [by_id.get(call["id"], call) for call in answer.tool_calls]
    kept = revised[0].model_copy(update={"tool_calls": calls})
    messages = [kept if m is revised[0] else m for m in result["messages"]]
    return {**result, "messages": messages}


def guard_after_model(method: Callable[..., Any]) -> Callable[..., Any]:
    """``HumanInTheLoopMiddleware.after_model`` (or ``aafter_model``), failing closed."""
    middleware = method.__self__  # type: ignore[attr-defined]

    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def aguarded(state: Any, runtime: Any) -> Any:
            answer, view = _prepare(middleware, state, runtime)
            return _restore(await method(view, runtime), answer)

        return aguarded

    @functools.wraps(method)
    def guarded(state: Any, runtime: Any) -> Any:
        answer, view = _prepare(middleware, state, runtime)
        return _restore(method(view, runtime), answer)

    return guarded
