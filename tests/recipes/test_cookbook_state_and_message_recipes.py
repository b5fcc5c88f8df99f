"""Cookbook recipes, second batch: each demo's effect, each hook alone, and the tour entry.

``models`` swaps a recipe module's ``ScriptedChatModel`` for a factory that remembers every
model the demo builds, so a test can check what the model was sent, not only the result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.memory import InMemorySaver

from funcware import (
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
    create_agent,
)
from funcware.cookbook import (
    content_guard,
    human_approval,
    outer_wins,
    pii_redaction,
    prompt_caching,
    schema_tool,
    summarize_history,
    usage_tracking,
)
from funcware.cookbook.__main__ import main as tour
from funcware.testing import ScriptedChatModel

RECIPES = (
    "schema_tool",
    "usage_tracking",
    "outer_wins",
    "content_guard",
    "pii_redaction",
    "human_approval",
    "prompt_caching",
    "summarize_history",
)

Capture = Callable[[Any], list[ScriptedChatModel]]


@pytest.fixture
def models(monkeypatch: pytest.MonkeyPatch) -> Capture:
    """``models(module)``: from now on, the models ``module.demo()`` builds, in order."""

    def capture(module: Any) -> list[ScriptedChatModel]:
        made: list[ScriptedChatModel] = []
        original = module.ScriptedChatModel

        def factory(*args: Any, **kwargs: Any) -> ScriptedChatModel:
            model: ScriptedChatModel = original(*args, **kwargs)
            made.append(model)
            return model

        monkeypatch.setattr(module, "ScriptedChatModel", factory)
        return made

    return capture


def tool_results(state: dict[str, Any]) -> dict[str, list[ToolMessage]]:
    """The state's ``ToolMessage``s grouped by the id of the call they answer."""
    found: dict[str, list[ToolMessage]] = {}
    for message in state["messages"]:
        if isinstance(message, ToolMessage):
            found.setdefault(message.tool_call_id, []).append(message)
    return found


def sent_text(model: ScriptedChatModel) -> str:
    """Everything the model was sent, over all its calls, as one string."""
    return "\n".join(m.text for call in model.calls for m in call.messages)


# -- the tour -----------------------------------------------------------------------


@pytest.mark.parametrize("name", RECIPES)
def test_recipe_runs_in_the_tour(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert tour([name]) == 0
    out = capsys.readouterr().out
    assert f"== {name}:" in out and "1/1 recipes ran" in out


# -- schema_tool --------------------------------------------------------------------


def test_schema_tool_is_bound_and_answered_by_the_hook(models: Capture) -> None:
    made = models(schema_tool)
    _, state = schema_tool.demo()
    results = tool_results(state)
    (weather,) = results["w1"]
    assert weather.name == "get_weather" and weather.status == "success"
    assert weather.content == "18°C and cloudy in Paris."
    (clock,) = results["t1"]
    assert clock.content == "It is 14:00 in Paris."  # the real tool still runs
    (model,) = made
    assert set(model.calls[0].tool_names) == {"get_weather", "local_time"}
    schema = next(t for t in model.calls[0].tools if t["function"]["name"] == "get_weather")
    assert schema["function"]["parameters"]["required"] == ["city"]
    assert state["messages"][-1].content == "In Paris it is 14:00, 18°C and cloudy."


def test_schema_tool_hook_answers_without_the_handler_and_passes_the_rest_on() -> None:
    def no_handler(request: ToolCallRequest) -> ToolMessage:
        raise AssertionError("the schema tool must be answered without calling the handler")

    call = ToolCall(
        name="get_weather", args={"city": "Oslo", "unit": "fahrenheit"}, id="x", type="tool_call"
    )
    request = ToolCallRequest(tool_call=call, tool=None, state={}, runtime=None)  # type: ignore[arg-type]
    answer = schema_tool.serve_weather(request, no_handler)
    assert isinstance(answer, ToolMessage) and answer.content == "39°F and cloudy in Oslo."

    other = ToolCallRequest(
        tool_call=ToolCall(name="local_time", args={}, id="y", type="tool_call"),
        tool=None,
        state={},
        runtime=None,  # type: ignore[arg-type]
    )
    passed = ToolMessage("from the handler", tool_call_id="y")
    assert schema_tool.serve_weather(other, lambda r: passed) is passed


# -- usage_tracking -----------------------------------------------------------------


def expected_usage(script: list[AIMessage]) -> dict[str, int]:
    usages = [m.usage_metadata for m in script if m.usage_metadata is not None]
    return {
        "input_tokens": sum(u["input_tokens"] for u in usages),
        "output_tokens": sum(u["output_tokens"] for u in usages),
        "total_tokens": sum(u["total_tokens"] for u in usages),
        "model_calls": len(script),
    }


def test_usage_total_is_the_sum_of_the_scripted_usage() -> None:
    _, state = usage_tracking.demo()
    assert state["usage"] == expected_usage(usage_tracking.SCRIPT)
    assert state["usage"] == {
        "input_tokens": 285,
        "output_tokens": 30,
        "total_tokens": 315,
        "model_calls": 2,
    }


def test_usage_carries_over_between_turns_of_a_thread() -> None:
    third = AIMessage(
        "You're welcome.",
        usage_metadata={"input_tokens": 200, "output_tokens": 5, "total_tokens": 205},
    )
    script = [*usage_tracking.SCRIPT, third]
    agent = create_agent(
        ScriptedChatModel(responses=script),
        [usage_tracking.convert],
        middleware=[usage_tracking.UsageTracker()],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "usage"}}
    agent.invoke({"messages": [HumanMessage("20 EUR in USD?")]}, config)
    state = agent.invoke({"messages": [HumanMessage("Thanks!")]}, config)
    assert state["usage"] == expected_usage(script)


# -- outer_wins ---------------------------------------------------------------------


def test_outer_value_wins_and_both_notes_are_kept_inner_first() -> None:
    _, state = outer_wins.demo()
    assert state["verdict"] == "approved"  # final_review (outer), not quick_filter (inner)
    messages = state["messages"]
    assert [type(m).__name__ for m in messages] == [
        "HumanMessage",
        "AIMessage",
        "AIMessage",
        "AIMessage",
    ]
    answer, inner_note, outer_note = messages[1:]
    assert "risk" in answer.text
    assert (inner_note.name, inner_note.text) == (
        "quick_filter",
        "[quick_filter] provisionally fine",
    )
    assert (outer_note.name, outer_note.text) == ("final_review", "[final_review] approved")


def test_outer_wins_in_the_composed_stack_alone() -> None:
    request = ModelRequest(model=ScriptedChatModel(responses=[]), messages=[HumanMessage("q")])
    answer = ModelResponse(result=[AIMessage("A guaranteed return.")])
    result = outer_wins.review.wrap_model_call(request, lambda r: answer)
    assert isinstance(result, ExtendedModelResponse) and result.command is not None
    update = result.command.update
    assert isinstance(update, dict)
    assert update["verdict"] == "needs a risk notice"
    notes = [m.text for m in update["messages"]]
    assert notes == ["[quick_filter] flagged: guaranteed", "[final_review] needs a risk notice"]


# -- content_guard ------------------------------------------------------------------


def test_blocked_answer_is_replaced_and_the_run_ends(models: Capture) -> None:
    made = models(content_guard)
    _, state = content_guard.demo()
    messages = state["messages"]
    assert len(messages) == 2  # the question and the refusal, nothing else
    refusal = messages[-1]
    assert isinstance(refusal, AIMessage) and not refusal.tool_calls
    assert refusal.text == content_guard.ContentGuard().refusal
    assert all("hunter2" not in m.text for m in messages)
    assert not tool_results(state)  # send_message never ran
    (model,) = made
    assert len(model.calls) == 1 and model.remaining == 1  # no second model call


def test_guard_replaces_by_id_and_lets_clean_answers_through() -> None:
    guard = content_guard.ContentGuard()
    clean = AIMessage("Ask IT for a password reset.", id="a1")
    assert guard.after_model({"messages": [clean]}, None) is None  # type: ignore[arg-type]
    leak = AIMessage(
        "", id="a2", tool_calls=[{"name": "x", "args": {"k": "sk-" + "a" * 20}, "id": "c"}]
    )
    update = guard.after_model({"messages": [leak]}, None)  # type: ignore[arg-type]
    assert update is not None and update["jump_to"] == "end"
    (replacement,) = update["messages"]
    assert replacement.id == "a2" and replacement.text == guard.refusal


# -- pii_redaction ------------------------------------------------------------------


def test_model_never_sees_pii_and_state_keeps_none(models: Capture) -> None:
    made = models(pii_redaction)
    _, state = pii_redaction.demo()
    (model,) = made
    sent = sent_text(model)
    assert len(model.calls) == 2
    assert "jane.doe@example.com" not in sent
    assert "4111-1111" not in sent and "4111 1111" not in sent
    # The user's own address and card, redacted and masked before the first call.
    assert "[REDACTED_EMAIL]" in model.calls[0].messages[-1].text
    assert "**** **** **** 1111" in model.calls[0].messages[-1].text

    (tool_message,) = tool_results(state)["l1"]
    assert "jane.doe@example.com" not in tool_message.text and "4111 1111" not in tool_message.text
    assert "[REDACTED_EMAIL]" in tool_message.text and "**** 1111" in tool_message.text
    assert "plan: premium" in tool_message.text
    # The stored input is clean too: the same message, rewritten in place.
    assert state["messages"][0].text == (
        "I'm customer 42 ([REDACTED_EMAIL], card **** **** **** 1111). Which plan am I on?"
    )
    # The answer is checked as it streams, and the state keeps what was streamed.
    assert state["messages"][-1].text == (
        "You are on the premium plan; the receipt goes to [REDACTED_EMAIL]."
    )


def test_redaction_leaves_short_numbers_and_non_text_blocks_alone() -> None:
    email = pii_redaction.PIIRedaction("email")
    cards = pii_redaction.PIIRedaction("credit_card")
    assert cards.redact("order 12345, call 555-0100") == "order 12345, call 555-0100"
    assert email.redact("a.b+c@mail.example.org") == "[REDACTED_EMAIL]"
    assert cards.redact("5500 0000 0000 0004 exp 12/27") == "[REDACTED_CREDIT_CARD] exp 12/27"
    block_message = HumanMessage(
        content=[{"type": "text", "text": "x@y.io"}, {"type": "image", "url": "u"}]
    )
    seen: list[BaseMessage] = []

    def handler(request: ModelRequest[Any]) -> Any:
        seen.extend(request.messages)
        return AIMessage("ok")

    request = ModelRequest(model=ScriptedChatModel(responses=[]), messages=[block_message])
    email.wrap_model_call(request, handler)
    assert seen[0].content == [
        {"type": "text", "text": "[REDACTED_EMAIL]"},
        {"type": "image", "url": "u"},
    ]
    assert block_message.content[0] == {"type": "text", "text": "x@y.io"}  # not edited


# -- human_approval -----------------------------------------------------------------


def test_approval_interrupts_then_runs_only_approved_calls(
    models: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs: list[tuple[str, dict[str, Any]]] = []
    for tool_ in (human_approval.send_email, human_approval.delete_file):
        assert isinstance(tool_, StructuredTool) and tool_.func is not None
        original = tool_.func

        def counted(*args: Any, _f: Any = original, _n: str = tool_.name, **kw: Any) -> Any:
            runs.append((_n, kw))
            return _f(*args, **kw)

        monkeypatch.setattr(tool_, "func", counted)
    made = models(human_approval)
    agent, state = human_approval.demo()

    # The run paused on the three reviewable calls, before any tool ran; then once more,
    # after the tools, on the listing's result (ReviewToolResults), before the model.
    history = list(agent.get_state_history(human_approval.THREAD))
    paused = [snapshot for snapshot in reversed(history) if snapshot.interrupts]
    assert len(paused) == 2
    (pause,), (look,) = paused[0].interrupts, paused[1].interrupts
    assert [r["tool_call_id"] for r in look.value["results"]] == ["ls"]
    assert [(r["tool_call_id"], r["name"]) for r in pause.value["review"]] == [
        ("lead", "send_email"),
        ("all", "send_email"),
        ("rm", "delete_file"),
    ]

    # The approved call ran once as proposed, the edited one once with the new args,
    # the rejected one never.
    assert sorted(runs, key=str) == sorted(
        [
            ("send_email", {"to": "lead@corp", "subject": "Q3"}),
            ("send_email", {"to": "board@corp", "subject": "Q3"}),
        ],
        key=str,
    )
    results = tool_results(state)
    assert {k: len(v) for k, v in results.items()} == {"ls": 1, "lead": 1, "all": 1, "rm": 1}
    assert results["lead"][0].content == "E-mail 'Q3' sent to lead@corp."
    assert results["all"][0].content == "E-mail 'Q3' sent to board@corp."
    assert results["rm"][0].status == "error"
    assert "Keep the report until the audit." in results["rm"][0].text
    assert not any("Deleted" in m.text for m in state["messages"])

    proposal = next(m for m in state["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert [c["args"].get("to") for c in proposal.tool_calls][1:3] == ["lead@corp", "board@corp"]
    (model,) = made
    assert len(model.calls) == 2 and state["messages"][-1].text.startswith("Q3 went")


# -- prompt_caching -----------------------------------------------------------------


def test_cache_block_follows_the_kept_prompt_blocks_on_every_call(models: Capture) -> None:
    made = models(prompt_caching)
    _, state = prompt_caching.demo()
    (model,) = made
    assert len(model.calls) == 2
    original = list(prompt_caching.SYSTEM_PROMPT.content)
    for call in model.calls:
        system = call.messages[0]
        assert isinstance(system, SystemMessage)
        blocks = system.content
        assert blocks[:-1] == original  # the earlier blocks, unchanged and in order
        assert blocks[-1] == {
            "type": "text",
            "text": prompt_caching.REFERENCE,
            "cache_control": {"type": "ephemeral"},
        }
        assert sum(isinstance(b, dict) and "cache_control" in b for b in blocks) == 1
    assert prompt_caching.SYSTEM_PROMPT.content == original  # the agent's prompt not edited
    assert "restocking fee" in state["messages"][-1].text


def test_cache_block_turns_a_string_prompt_into_blocks() -> None:
    seen: list[ModelRequest[Any]] = []

    def handler(request: ModelRequest[Any]) -> Any:
        seen.append(request)
        return AIMessage("ok")

    request = ModelRequest(
        model=ScriptedChatModel(responses=[]),
        messages=[HumanMessage("hi")],
        system_prompt="Be kind.",
    )
    prompt_caching.cache_reference(request, handler)
    prompt_caching.cache_reference(seen[0], handler)  # already marked: left as it is
    for sent in seen:
        assert sent.system_message is not None
        assert sent.system_message.content == [
            {"type": "text", "text": "Be kind."},
            prompt_caching.cache_block(prompt_caching.REFERENCE),
        ]
    assert request.system_message is not None and request.system_message.content == "Be kind."


# -- summarize_history --------------------------------------------------------------


def test_old_messages_become_one_summary_and_the_tool_round_is_kept(models: Capture) -> None:
    made = models(summarize_history)
    _, state = summarize_history.demo()
    model, summarizer = made
    messages = state["messages"]
    assert [type(m).__name__ for m in messages] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "ToolMessage",
        "AIMessage",
    ]
    summary, call, hakone, kinosaki, answer = messages
    assert summary.name == "summary"
    assert summary.text.startswith(summarize_history.SUMMARY_PREFIX)
    assert "hot-spring trip to Japan" in summary.text
    old = {m.text for m in summarize_history.HISTORY}
    assert not old & {m.text for m in messages}  # every old message was folded in
    # keep_last=2 would split the tool round; the cut moved back to keep it whole.
    assert [c["id"] for c in call.tool_calls] == ["w1", "w2"]
    assert (hakone.tool_call_id, kinosaki.tool_call_id) == ("w1", "w2")
    assert answer.text.startswith("Kinosaki looks better")

    (summary_call,) = summarizer.calls
    transcript = summary_call.messages[-1].text
    assert all(m.text in transcript for m in summarize_history.HISTORY)
    assert "16°C" not in transcript  # the kept tool results were not summarised
    first, second = model.calls
    assert len(first.messages) == 5
    assert [m.type for m in second.messages] == ["human", "ai", "tool", "tool"]
    assert second.messages[0].text == summary.text


def test_cut_point_never_separates_tool_results_from_their_call() -> None:
    middleware = summarize_history.SummarizeHistory(
        ScriptedChatModel(responses=[]), max_messages=3, keep_last=1
    )
    call = AIMessage("", tool_calls=[{"name": "t", "args": {}, "id": "a"}])
    history: list[Any] = [
        HumanMessage("1"),
        AIMessage("2"),
        HumanMessage("3"),
        call,
        ToolMessage("r", tool_call_id="a"),
    ]
    assert middleware.cut_point(history) == 3
    assert middleware.cut_point(history[:3]) == 2
    short: Any = {"messages": history[:3]}
    assert middleware.before_model(short, None) is None  # type: ignore[arg-type]
    only_round: Any = {"messages": [call, *[ToolMessage("r", tool_call_id="a")] * 3]}
    assert middleware.before_model(only_round, None) is None  # type: ignore[arg-type]


def test_summaries_roll_up_over_turns() -> None:
    summarizer = ScriptedChatModel(responses=["first summary", "second summary"])
    agent = create_agent(
        ScriptedChatModel(responses=["a1", "a2", "a3", "a4"]),
        middleware=[summarize_history.SummarizeHistory(summarizer, max_messages=3, keep_last=1)],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "roll-up"}}
    for question in ("q1", "q2", "q3", "q4"):
        state = agent.invoke({"messages": [HumanMessage(question)]}, config)
    assert [m.text for m in state["messages"]] == [
        summarize_history.SUMMARY_PREFIX + "second summary",
        "q4",
        "a4",
    ]
    assert "first summary" in summarizer.calls[1].messages[-1].text
