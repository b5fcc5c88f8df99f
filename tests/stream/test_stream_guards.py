"""Guards that govern the stream: ``stream="buffer"`` and ``SlidingWindow``.

The invariant: for an agent whose guards buffer, what a client assembles from the stream
equals what the final state holds, in every stream mode, sync and async. And a model call
a middleware makes itself stays out of the user's message stream unless it opts in.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    RemoveMessage,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_stream_writer
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt
from support import lookup

from funcware import (
    AgentMiddleware,
    AgentState,
    SlidingWindow,
    after_model,
    before_model,
    create_agent,
    hook_config,
    wrap_model_call,
)
from funcware.guards.release import tool_call_chunks
from funcware.testing import StreamingScriptedChatModel

EMAIL = re.compile(r"[a-z]+@[a-z]+\.[a-z]{2,3}")


def redact(text: str) -> str:
    return EMAIL.sub("[email]", text)


class ChunkedModel(StreamingScriptedChatModel):
    """Streams its text ``chunk_size`` characters at a time, then each tool call with its
    arguments split across two chunks (as providers send them)."""

    def _chunks(self, message: AIMessage) -> Iterator[AIMessageChunk]:
        text = message.text
        for start in range(0, len(text), self.chunk_size):
            yield AIMessageChunk(content=text[start : start + self.chunk_size], id=message.id)
        for whole in tool_call_chunks(message):
            half = len(whole["args"] or "") // 2
            first = {**whole, "args": (whole["args"] or "")[:half]}
            rest = {"name": None, "args": (whole["args"] or "")[half:], "id": None}
            yield AIMessageChunk(content="", id=message.id, tool_call_chunks=[first])  # type: ignore[list-item]
            yield AIMessageChunk(
                content="",
                id=message.id,
                tool_call_chunks=[{**rest, "index": whole["index"]}],  # type: ignore[list-item]
            )


def _last_ai(state: AgentState) -> AIMessage | None:
    last = state["messages"][-1]
    return last if isinstance(last, AIMessage) else None


def make_guard(stream: Any = "buffer", *, name: str = "guard") -> Any:
    """A guard: redacts e-mails; replaces "secret" answers and ends; drops "drop" answers."""

    @after_model(stream=stream, can_jump_to=["end"], name=name)
    def guard(state: AgentState) -> dict[str, Any] | None:
        last = _last_ai(state)
        if last is None:
            return None
        if "secret" in last.text:
            refusal = AIMessage("[withheld]", id=last.id)
            return {"messages": [refusal], "jump_to": "end"}
        if "drop" in last.text:
            return {
                "messages": [
                    RemoveMessage(id=last.id or ""),
                    AIMessage("[dropped]", id=f"dropped-{last.id}"),
                ],
                "jump_to": "end",
            }
        if EMAIL.search(last.text):
            fixed = last.model_copy(update={"content": redact(last.text)})
            return {"messages": [fixed]}
        return None

    return guard


def answer(text: str, tool_key: str | None = None, *, id: str = "a-1") -> AIMessage:
    """A scripted answer with a fixed id, so two runs of one script can be compared."""
    calls = [{"name": "lookup", "args": {"key": tool_key}, "id": f"c-{tool_key}"}]
    return AIMessage(text, tool_calls=calls if tool_key else [], id=id)


def script() -> list[AIMessage]:
    return [
        answer("checking for bob@mail.com now", tool_key="k1", id="a-1"),
        answer("bob is at bob@mail.com, done", id="a-2"),
    ]


def hi() -> dict[str, Any]:
    return {"messages": [HumanMessage("hi")]}


# -- what a client assembles from each stream mode ---------------------------------------


def _fold(chunks: list[AIMessageChunk]) -> dict[str, AIMessageChunk]:
    """Chunks added up per message id; empty chunks (langchain-core's end marker) skipped."""
    by_id: dict[str, AIMessageChunk] = {}
    for chunk in chunks:
        if not chunk.content and not chunk.tool_call_chunks:
            continue
        key = chunk.id or ""
        by_id[key] = by_id[key] + chunk if key in by_id else chunk
    return by_id


def _ai_view(messages: list[Any]) -> dict[str, tuple[str, list[tuple[str, Any]]]]:
    return {
        m.id: (m.text, [(c["name"], c["args"]) for c in m.tool_calls])
        for m in messages
        if isinstance(m, AIMessage) and (m.text or m.tool_calls)
    }


def _from_messages_stream(items: list[Any]) -> dict[str, tuple[str, list[tuple[str, Any]]]]:
    chunks = [m for m, _ in items if isinstance(m, AIMessageChunk)]
    whole = [m for m, _ in items if isinstance(m, AIMessage) and not isinstance(m, AIMessageChunk)]
    return {**_ai_view(whole), **_ai_view(list(_fold(chunks).values()))}


def run_messages(agent: Any, mode: str, inputs: Any = None, **kwargs: Any) -> list[Any]:
    inputs = hi() if inputs is None else inputs
    if mode == "sync":
        return list(agent.stream(inputs, stream_mode="messages", **kwargs))

    async def collect() -> list[Any]:
        return [item async for item in agent.astream(inputs, stream_mode="messages", **kwargs)]

    return asyncio.run(collect())


def final_state(agent: Any) -> dict[str, Any]:
    return agent.invoke(hi())  # type: ignore[no-any-return]


def _agent(*middleware: Any, responses: list[AIMessage] | None = None, size: int = 3) -> Any:
    model = ChunkedModel(responses=responses or script(), chunk_size=size)
    return create_agent(model, [lookup], middleware=list(middleware))


MODES = ["sync", "async"]


@pytest.mark.parametrize("mode", MODES)
def test_pass_streams_the_raw_tokens(mode: str) -> None:
    seen = _from_messages_stream(run_messages(_agent(make_guard("pass")), mode))
    assert any("bob@mail.com" in text for text, _ in seen.values())


@pytest.mark.parametrize("mode", MODES)
def test_buffer_streams_what_the_state_keeps(mode: str) -> None:
    agent = _agent(make_guard())
    items = run_messages(agent, mode)
    streamed = _from_messages_stream(items)
    state = final_state(_agent(make_guard()))
    assert list(streamed.values()) == list(_ai_view(state["messages"]).values())
    assert not any("bob@mail.com" in text for text, _ in streamed.values())
    # the released turn carries its tool call, and streams from the guard's node
    assert streamed and any(calls for _, calls in streamed.values())
    guard_nodes = {meta["langgraph_node"] for m, meta in items if isinstance(m, AIMessageChunk)}
    assert guard_nodes == {"guard.after_model"}


@pytest.mark.parametrize("mode", MODES)
def test_buffer_replaced_answer_and_jump_to_end(mode: str) -> None:
    responses = [answer("the secret is 42")]  # one answer: the guard jumps to end
    streamed = _from_messages_stream(run_messages(_agent(make_guard(), responses=responses), mode))
    assert list(streamed.values()) == [("[withheld]", [])]


@pytest.mark.parametrize("mode", MODES)
def test_buffer_removed_answer_never_streams(mode: str) -> None:
    responses = [answer("please drop this")]
    agent = _agent(make_guard(), responses=responses)
    streamed = _from_messages_stream(run_messages(agent, mode))
    assert list(streamed.values()) == [("[dropped]", [])]
    state = _agent(make_guard(), responses=[answer("please drop this")]).invoke(hi())
    assert [m.text for m in state["messages"] if isinstance(m, AIMessage)] == ["[dropped]"]


@pytest.mark.parametrize("mode", MODES)
def test_two_buffering_guards_release_after_the_last_one(mode: str) -> None:
    @after_model(stream="buffer")
    def shout(state: AgentState) -> dict[str, Any] | None:
        last = _last_ai(state)
        if last is None or last.text.isupper():
            return None
        return {"messages": [last.model_copy(update={"content": last.text.upper()})]}

    # after_model hooks run last to first: the e-mail guard, then shout
    agent = _agent(shout, make_guard())
    streamed = _from_messages_stream(run_messages(agent, mode))
    state = _agent(shout, make_guard()).invoke(hi())
    assert list(streamed.values()) == list(_ai_view(state["messages"]).values())
    assert all(text == text.upper() for text, _ in streamed.values())
    assert "[EMAIL]" in "".join(text for text, _ in streamed.values())


@pytest.mark.parametrize("mode", MODES)
def test_a_buffering_wrap_guard_releases_from_the_model_node(mode: str) -> None:
    @wrap_model_call(stream="buffer")
    def scrub(request: Any, handler: Any) -> Any:
        response = handler(request)
        message = response.result[0]
        return message.model_copy(update={"content": redact(message.text)})

    items = run_messages(_agent(scrub), mode)
    streamed = _from_messages_stream(items)
    state = _agent(scrub).invoke(hi())
    assert list(streamed.values()) == list(_ai_view(state["messages"]).values())
    assert "bob@mail.com" not in json.dumps([t for t, _ in streamed.values()])
    assert {meta["langgraph_node"] for _, meta in items if meta["langgraph_node"] != "tools"} == {
        "model"
    }


@pytest.mark.parametrize("mode", MODES)
def test_class_guard_declares_stream_as_an_attribute(mode: str) -> None:
    class Redactor(AgentMiddleware):
        stream = "buffer"

        def after_model(self, state: AgentState, runtime: Any) -> dict[str, Any] | None:
            last = _last_ai(state)
            if last is None or not EMAIL.search(last.text):
                return None
            return {"messages": [last.model_copy(update={"content": redact(last.text)})]}

        async def aafter_model(self, state: AgentState, runtime: Any) -> dict[str, Any] | None:
            return self.after_model(state, runtime)

    streamed = _from_messages_stream(run_messages(_agent(Redactor()), mode))
    assert streamed
    assert not any("@mail.com" in text for text, _ in streamed.values())


def test_updates_and_values_assemble_to_the_final_state() -> None:
    agent = _agent(make_guard())
    messages: list[Any] = []
    for chunk in agent.stream(hi(), stream_mode="updates"):
        for update in chunk.values():
            if update and "messages" in update:
                messages = add_messages(messages, update["messages"])
    values = list(_agent(make_guard()).stream(hi(), stream_mode="values"))
    state = _agent(make_guard()).invoke(hi())
    assert "funcware_stream_held" not in state
    assert _ai_view(messages) == _ai_view(state["messages"])
    assert _ai_view(values[-1]["messages"]) == _ai_view(state["messages"])


def test_custom_events_pass_through_a_buffered_turn() -> None:
    @before_model
    def announce(state: AgentState) -> None:
        get_stream_writer()({"step": len(state["messages"])})

    agent = _agent(announce, make_guard())
    items = list(agent.stream(hi(), stream_mode=["custom", "messages"]))
    custom = [data for kind, data in items if kind == "custom"]
    streamed = _from_messages_stream([data for kind, data in items if kind == "messages"])
    assert custom == [{"step": 1}, {"step": 3}]  # hi; then hi, the tool call, its result
    assert not any("@mail.com" in text for text, _ in streamed.values())


def test_astream_events_v2_shows_only_the_released_answer() -> None:
    agent = _agent(make_guard())

    async def collect() -> list[AIMessageChunk]:
        return [
            event["data"]["chunk"]
            async for event in agent.astream_events(hi(), version="v2")
            if event["event"] == "on_chat_model_stream"
        ]

    streamed = _ai_view(list(_fold(asyncio.run(collect())).values()))
    state = _agent(make_guard()).invoke(hi())
    assert list(streamed.values()) == list(_ai_view(state["messages"]).values())


def test_stream_events_v3_messages_are_the_released_ones() -> None:
    agent = _agent(make_guard())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the v3 protocol is marked experimental
        run = agent.stream_events(hi(), version="v3")
        finals = []
        for stream in run.messages:
            "".join(stream.text)  # drain the message's stream
            finals.append(stream.output_message)
    state = _agent(make_guard()).invoke(hi())
    # v3 names a streamed message after its model run, so compare what the messages say
    released = _ai_view([m for m in finals if m is not None])
    assert list(released.values()) == list(_ai_view(state["messages"]).values())


@pytest.mark.parametrize("mode", MODES)
def test_interrupt_in_a_buffering_guard_releases_after_resume(mode: str) -> None:
    @after_model(stream="buffer")
    def approve(state: AgentState) -> dict[str, Any] | None:
        last = _last_ai(state)
        if last is None or not last.text:
            return None
        verdict = interrupt({"answer": last.text})
        if verdict == "ok":
            return None
        return {"messages": [last.model_copy(update={"content": "[rejected]"})]}

    def build() -> Any:
        model = ChunkedModel(responses=[answer("raw answer")], chunk_size=2)
        return create_agent(model, [lookup], middleware=[approve], checkpointer=InMemorySaver())

    agent = build()
    config = {"configurable": {"thread_id": "t"}}
    first = run_messages(agent, mode, hi(), config=config)
    assert _from_messages_stream(first) == {}  # paused: nothing released yet
    second = run_messages(agent, mode, Command(resume="no"), config=config)
    assert list(_from_messages_stream(second).values()) == [("[rejected]", [])]


# -- the invariant, on random scripts ------------------------------------------------------

WORDS = st.sampled_from(["alpha", "beta", "ann@web.org", "secret", "drop", "z", "ok"])


@st.composite
def scripts(draw: st.DrawFn) -> list[AIMessage]:
    turns = draw(st.integers(min_value=0, max_value=2))
    out = []
    for index in range(turns):
        text = " ".join(
            draw(st.lists(WORDS.filter(lambda w: w not in ("secret", "drop")), max_size=4))
        )
        out.append(answer(text, tool_key=f"k{index}", id=f"a-{index}"))
    final = " ".join(draw(st.lists(WORDS, min_size=1, max_size=5)))
    out.append(answer(final, id="a-last"))
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    responses=scripts(),
    size=st.integers(min_value=1, max_value=8),
    mode=st.sampled_from(MODES),
    stream_mode=st.sampled_from(["messages", "updates", "values"]),
)
def test_what_streams_is_what_the_state_holds(
    responses: list[AIMessage], size: int, mode: str, stream_mode: str
) -> None:
    def build() -> Any:
        copies = [m.model_copy(deep=True) for m in responses]
        return _agent(make_guard(), responses=copies, size=size)

    state = build().invoke(hi())
    expected = _ai_view(state["messages"])
    if stream_mode == "messages":
        streamed = _from_messages_stream(run_messages(build(), mode))
        assert list(streamed.values()) == list(expected.values())
        return
    agent = build()
    if mode == "sync":
        chunks = list(agent.stream(hi(), stream_mode=stream_mode))
    else:

        async def collect() -> list[Any]:
            return [c async for c in agent.astream(hi(), stream_mode=stream_mode)]

        chunks = asyncio.run(collect())
    if stream_mode == "values":
        assert _ai_view(chunks[-1]["messages"]) == expected
        return
    messages: list[Any] = []
    for chunk in chunks:
        for update in chunk.values():
            if update and "messages" in update:
                messages = add_messages(messages, update["messages"])
    assert _ai_view(messages) == expected


# -- the sliding window --------------------------------------------------------------------


@st.composite
def texts(draw: st.DrawFn) -> str:
    parts = draw(
        st.lists(
            st.one_of(
                st.sampled_from(["hi", "there", "a", "mail", "me", "."]),
                st.from_regex(r"[a-z]{1,6}@[a-z]{1,6}\.[a-z]{2,3}", fullmatch=True),
            ),
            max_size=12,
        )
    )
    return " ".join(parts)


def _pieces(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@settings(max_examples=200, deadline=None)
@given(text=texts(), cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=20))
def test_sliding_window_never_releases_what_its_check_later_redacts(
    text: str, cuts: list[int]
) -> None:
    from funcware.guards.sliding import SlidingText

    window = SlidingText(SlidingWindow(chars=18, check=redact))  # longest address: 17
    released = ""
    expected = redact(text)
    for piece in _pieces(text, cuts):
        released += window.feed(piece)
        assert expected.startswith(released)
        assert len(window.pending) >= 0
    released += window.finish()
    assert released == expected


@pytest.mark.parametrize("mode", MODES)
def test_sliding_guard_streams_checked_text_behind_the_window(mode: str) -> None:
    @after_model(stream=SlidingWindow(chars=18, check=redact))
    def pii(state: AgentState) -> None:
        return None

    text = "write to bob@mail.com or to ann@web.org today please"
    agent = _agent(pii, responses=[answer(text)], size=2)
    items = run_messages(agent, mode)
    chunks = [m for m, _ in items if isinstance(m, AIMessageChunk) and m.content]
    assert len(chunks) > 3  # released as it comes, not as one message
    assert "".join(c.text for c in chunks) == redact(text)
    for index in range(len(chunks)):  # no prefix ever shows an address
        assert not EMAIL.search("".join(c.text for c in chunks[: index + 1]))
    state = _agent(pii, responses=[answer(text)], size=2).invoke(hi())
    assert state["messages"][-1].text == redact(text)


def test_sliding_guard_holds_tool_calls_to_the_end() -> None:
    @after_model(stream=SlidingWindow(chars=18, check=redact))
    def pii(state: AgentState) -> None:
        return None

    responses = [answer("calling the tool now", tool_key="k", id="a-1"), answer("done", id="a-2")]
    agent = _agent(pii, responses=responses)
    items = run_messages(agent, "sync")
    model_chunks = [m for m, meta in items if meta["langgraph_node"] == "model"]
    first_turn = [c for c in model_chunks if c.id == model_chunks[0].id]
    with_calls = [i for i, c in enumerate(first_turn) if c.tool_call_chunks]
    assert with_calls == [len(first_turn) - 1]
    assert _fold(first_turn)[first_turn[0].id or ""].tool_calls[0]["args"] == {"key": "k"}


# -- model calls made inside middleware ------------------------------------------------------


def _internal_model() -> ChunkedModel:
    return ChunkedModel(responses=[AIMessage("internal summary text")] * 4, chunk_size=4)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("opt_in", [False, True])
def test_node_hook_model_calls_are_hidden_unless_opted_in(mode: str, opt_in: bool) -> None:
    helper = _internal_model()

    @before_model(stream_internal_calls=opt_in)
    def summarize(state: AgentState) -> None:
        helper.invoke("summarize")

    items = run_messages(_agent(summarize, responses=[answer("final words")]), mode)
    texts_seen = "".join(m.text for m, _ in items if isinstance(m, AIMessageChunk))
    assert ("internal summary" in texts_seen) is opt_in
    assert "final words" in texts_seen


@pytest.mark.parametrize("mode", MODES)
def test_wrap_hook_model_calls_are_hidden_but_the_agents_call_streams(mode: str) -> None:
    grader = _internal_model()

    @wrap_model_call
    def grade(request: Any, handler: Any) -> Any:
        response = handler(request)
        grader.invoke("grade this")
        return response

    items = run_messages(_agent(grade, responses=[answer("final words")]), mode)
    texts_seen = "".join(m.text for m, _ in items if isinstance(m, AIMessageChunk))
    assert "internal summary" not in texts_seen
    assert "final words" in texts_seen


# -- bad input ---------------------------------------------------------------------------------


def test_stream_on_a_hook_that_decides_nothing_is_refused() -> None:
    with pytest.raises(TypeError, match=r"@before_model .*stream='buffer'.*after_model"):

        @before_model(stream="buffer")  # type: ignore[call-overload]
        def early(state: AgentState) -> None:
            return None


def test_unknown_stream_policy_is_refused_with_the_options() -> None:
    with pytest.raises(ValueError, match=r"stream='bufer'.*'pass'.*'buffer'.*SlidingWindow"):

        @after_model(stream="bufer")  # type: ignore[arg-type]
        def guard(state: AgentState) -> None:
            return None


def test_class_stream_without_a_guard_hook_is_refused_at_build() -> None:
    class Counter(AgentMiddleware):
        stream = "buffer"

        def before_model(self, state: AgentState, runtime: Any) -> None:
            return None

    with pytest.raises(ValueError, match=r"middleware 'Counter' .*stream='buffer'.*no after_model"):
        create_agent(ChunkedModel(responses=[]), [], middleware=[Counter()])


def test_bad_sliding_window_is_refused() -> None:
    with pytest.raises(ValueError, match="positive int"):
        SlidingWindow(chars=0, check=redact)
    with pytest.raises(TypeError, match="function"):
        SlidingWindow(chars=5, check="nope")  # type: ignore[arg-type]


def test_hook_config_still_declares_jumps_for_a_buffering_guard() -> None:
    class Blocker(AgentMiddleware):
        stream = "buffer"

        @hook_config(can_jump_to=["end"])
        def after_model(self, state: AgentState, runtime: Any) -> dict[str, Any] | None:
            last = _last_ai(state)
            if last is None:
                return None
            return {"messages": [AIMessage("[blocked]", id=last.id)], "jump_to": "end"}

    agent = _agent(Blocker(), responses=[answer("anything")])
    streamed = _from_messages_stream(run_messages(agent, "sync"))
    assert list(streamed.values()) == [("[blocked]", [])]


def test_sliding_guard_checks_tool_call_arguments_too() -> None:
    @after_model(stream=SlidingWindow(chars=18, check=redact))
    def pii(state: AgentState) -> None:
        return None

    def build() -> Any:
        responses = [answer("mailing", tool_key="ann@web.org", id="a-1"), answer("ok", id="a-2")]
        return _agent(pii, responses=responses)

    items = run_messages(build(), "sync")
    model_chunks = [m for m, meta in items if meta["langgraph_node"] == "model"]
    first = _fold([c for c in model_chunks if c.id == "a-1"])["a-1"]
    assert first.tool_calls[0]["args"] == {"key": "[email]"}
    state = build().invoke(hi())
    assert state["messages"][1].tool_calls[0]["args"] == {"key": "[email]"}


# -- the cookbook ------------------------------------------------------------------------------


def test_guarded_stream_recipe_shows_raw_buffered_and_sliding_streams() -> None:
    from funcware.cookbook import guarded_stream

    agent, state = guarded_stream.demo()
    assert state["messages"][-1].text == guarded_stream.mask(guarded_stream.ANSWER)
    raw, buffered, sliding, kept = guarded_stream.highlights(agent, state)
    assert "jane.doe@exa" in raw.replace(" | ", "")
    assert buffered.split(None, 1)[1] == guarded_stream.mask(guarded_stream.ANSWER)
    assert "@" not in sliding and sliding.count("|") >= 2  # several chunks, none raw
    assert kept.endswith(guarded_stream.mask(guarded_stream.ANSWER))


@pytest.mark.parametrize("mode", MODES)
def test_content_guard_recipe_never_streams_the_password(mode: str) -> None:
    from funcware.cookbook import content_guard

    leak = AIMessage("the admin password is hunter2", id="leak", tool_calls=[])
    model = ChunkedModel(responses=[leak], chunk_size=4)
    agent = create_agent(model, [], middleware=[content_guard.ContentGuard()])
    streamed = _from_messages_stream(run_messages(agent, mode))
    assert "hunter2" not in json.dumps(list(streamed.values()))
    assert [text for text, _ in streamed.values()] == [content_guard.ContentGuard().refusal]


def test_explain_shows_each_guards_stream_policy() -> None:
    from funcware import explain

    @wrap_model_call(stream=SlidingWindow(chars=40, check=redact))
    def masker(request: Any, handler: Any) -> Any:
        return handler(request)

    text = str(explain([make_guard(), masker]))
    assert "guard [stream=buffer] [may jump to end]" in text
    assert "masker [stream=sliding window 40 chars]" in text


@pytest.mark.parametrize("mode", MODES)
def test_an_async_buffering_guard_streams_what_the_state_keeps(mode: str) -> None:
    @after_model(stream="buffer", name="aguard")
    async def aguard(state: AgentState) -> dict[str, Any] | None:
        await asyncio.sleep(0)
        last = _last_ai(state)
        if last is None or not EMAIL.search(last.text):
            return None
        return {"messages": [last.model_copy(update={"content": redact(last.text)})]}

    streamed = _from_messages_stream(run_messages(_agent(aguard), mode))
    state = _agent(aguard).invoke(hi())
    assert list(streamed.values()) == list(_ai_view(state["messages"]).values())
    assert not any("@mail.com" in text for text, _ in streamed.values())
