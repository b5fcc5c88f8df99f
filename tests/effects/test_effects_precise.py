"""Effects declared per hook, and middleware you did not write placed with ``declare()``.

A class declares what each of its hooks does with a dict (``writes={"after_model": [...]}``);
each hook is then checked, and watched under ``effects="strict"``, against its own entry.
``funcware.effects.declare(middleware, outside=[...])`` returns a stand-in that is the
middleware (same class, hooks, name and state) with the declaration added, so a library's
middleware is placed without re-lifting its function; the original is left as it was.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime

from funcware import (
    AgentMiddleware,
    AgentState,
    MiddlewareOrderWarning,
    UndeclaredEffectError,
    compose,
    create_agent,
    explain,
    wrap_model_call,
)
from funcware.cookbook.model_fallback import ModelFallback
from funcware.effects import declare
from funcware.effects.declarations import declarations
from funcware.testing import ScriptedChatModel, run_hook


def build(middleware: list[Any], **options: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        create_agent(ScriptedChatModel(responses=["ok"] * 5), middleware=middleware, **options)
    return [str(w.message) for w in caught if issubclass(w.category, MiddlewareOrderWarning)]


class Limiter(AgentMiddleware[AgentState[Any], Any]):
    """Counts calls in a wrap and, after the model, answers the calls over a limit."""

    reads = {"after_model": ["messages.latest"], "wrap_model_call": ["model.calls"]}  # noqa: RUF012
    writes = {"after_model": ["messages.answer"], "wrap_model_call": []}  # noqa: RUF012

    def __init__(self) -> None:
        self.seen = 0

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.seen += 1
        return handler(request)

    def after_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        last = state["messages"][-1]
        calls = getattr(last, "tool_calls", None) or []
        answers = [ToolMessage("over", tool_call_id=c["id"]) for c in calls]
        return {"messages": answers} if answers else None


def test_a_class_declares_what_each_hook_does() -> None:
    decl = declarations(Limiter())
    assert decl is not None
    assert decl.writes_in("after_model") == {"messages.answer"}
    assert decl.writes_in("wrap_model_call") == frozenset()
    assert decl.reads_in("wrap_model_call") == {"model.calls"}
    assert decl.writes == {"messages.answer"}  # the union, for what looks at the whole


def test_each_hook_is_watched_against_its_own_entry() -> None:
    class Sneaky(Limiter):
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            handler(request)
            return AIMessage("rewritten")  # declared for no hook: refused in this one

    proposal = AIMessage("", id="a1", tool_calls=[{"name": "t", "args": {}, "id": "c1"}])
    run_hook(Limiter(), "after_model", state={"messages": [HumanMessage("hi"), proposal]})
    with pytest.raises(
        UndeclaredEffectError, match=r"'model\.answer\.rewrite'.*writes=\[nothing\]"
    ):
        run_hook(Sneaky(), "wrap_model_call", responses=["ok"])


def test_a_per_hook_declaration_is_checked_where_it_is_given() -> None:
    class Wrong(Limiter):
        writes = {"after_modle": ["messages.answer"]}  # noqa: RUF012

    with pytest.raises(ValueError, match=r"takes hook names as keys.*Did you mean 'after_model'"):
        declarations(Wrong())

    class Misplaced(Limiter):
        writes = {"after_model": ["request.model"]}  # noqa: RUF012

    with pytest.raises(
        ValueError, match=r"an after_model hook cannot have writes=\['request.model'\]"
    ):
        declarations(Misplaced())
    with pytest.raises(TypeError, match=r"a decorator makes one hook \(wrap_model_call\)"):
        wrap_model_call(writes={"wrap_model_call": ["request.model"]})(lambda r, h: h(r))


# -- declare(): placing a middleware you did not write -------------------------------------


def recovering() -> Any:
    """A library's layer that turns a failed model call into an answer (not ours to edit)."""

    @wrap_model_call(writes=["model.error.recover"])
    def answer_errors(request: Any, handler: Any) -> Any:
        try:
            return handler(request)
        except ConnectionError:
            return AIMessage("Sorry, the model is unavailable.")

    return answer_errors


def test_the_fix_sentence_shows_declare_and_the_stand_in_silences_the_warning() -> None:
    fallback = ModelFallback(ScriptedChatModel(responses=["from the backup"]))
    library = recovering()
    (text,) = build([library, fallback][::-1])
    assert (
        "list funcware.effects.declare(answer_errors, outside=['ModelFallback']) in its place"
    ) in text
    placed = declare(library, outside=["ModelFallback"])
    agent = create_agent(
        ScriptedChatModel(responses=[ConnectionError("down")]),
        middleware=[placed, fallback],
    )
    assert explain(agent).hazards == []
    answer = agent.invoke({"messages": [("user", "hi")]})["messages"][-1]
    assert answer.content == "from the backup"  # the fallback was asked, not hidden
    with warnings.catch_warnings():  # listed in the wrong order, the stand-in is refused
        warnings.simplefilter("error")
        with pytest.raises(Exception, match=r"must sit outside 'ModelFallback'"):
            create_agent(ScriptedChatModel(responses=[]), middleware=[fallback, placed])


def test_the_stand_in_is_the_middleware_and_the_original_is_unchanged() -> None:
    original = Limiter()
    placed = declare(original, inside=["ModelFallback"], position="innermost")
    assert isinstance(placed, Limiter) and placed.name == original.name
    own = declarations(original)
    new = declarations(placed)
    assert own is not None and new is not None
    assert (own.inside, own.position) == ((), None)
    assert (new.inside, new.position) == (("ModelFallback",), "innermost")
    assert new.writes_in("after_model") == own.writes_in("after_model")  # kept, not given
    run_hook(placed, "wrap_model_call", responses=["ok"])
    assert original.seen == placed.seen == 1  # one state: what the stand-in counts, it sees
    redeclared = declare(original, writes={"after_model": ["messages.append"]})
    assert declarations(redeclared).writes_in("after_model") == {"messages.append"}  # type: ignore[union-attr]


def test_declare_checks_its_keywords_and_refuses_a_class() -> None:
    with pytest.raises(ValueError, match=r"declare\('Limiter'\).*'model.reslt' in writes= is not"):
        declare(Limiter(), writes=["model.reslt"])
    with pytest.raises(TypeError, match=r"takes a middleware instance, got the class Limiter"):
        declare(Limiter, outside=["x"])
    both = compose(Limiter(), recovering())
    with pytest.raises(TypeError, match=r"flattened into its members \(Limiter, answer_errors\)"):
        declare(both, outside=["x"])


def test_declare_places_langchains_middleware() -> None:
    lc = pytest.importorskip("langchain.agents.middleware")
    retry = lc.ModelRetryMiddleware(max_retries=0)
    fallback = lc.ModelFallbackMiddleware(ScriptedChatModel(responses=["from the backup"]))
    (text,) = build([fallback, retry])
    assert (
        "funcware.effects.declare(ModelRetryMiddleware(...), outside=['ModelFallbackMiddleware'])"
    ) in text
    placed = declare(retry, outside=["ModelFallbackMiddleware"])
    assert build([placed, fallback]) == []
    assert isinstance(placed, lc.ModelRetryMiddleware)
    decl = declarations(placed)
    assert decl is not None and "model.error.recover" in decl.writes  # the table's, kept
