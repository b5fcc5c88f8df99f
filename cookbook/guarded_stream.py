"""Guarded streaming: the user sees what the guard decided, not the model's raw tokens.

Guarantee (``mask_answer``): no e-mail address in a model answer reaches the state or the
client's stream.

When to use: an output guard (``after_model`` or ``wrap_model_call``) that rewrites,
redacts or blocks answers, in an agent whose client streams (``stream_mode="messages"``,
``astream_events``, ``stream_events(version="v3")``). A guard runs after the model has
produced its tokens; without a stream policy the client has already shown them.

``stream=`` on the guard says how its decisions govern the stream:

- ``"pass"`` (the default): tokens stream as the model makes them; the guard changes only
  the state. Fine for guards that do not change what the user may see.
- ``"buffer"``: the turn's tokens are held until every buffering guard has run on the
  whole message; then the message as the guards left it is streamed (a blocked answer's
  tokens never leave the process). The first token arrives with the whole message.
- ``SlidingWindow(chars=N, check=f)``: for checks that work on text as it comes (masking
  e-mail addresses): tokens are released once they are ``N`` characters behind the newest
  one, after ``f`` has masked them. The first token arrives ``N`` characters late.

Either way, what the client assembles from the stream equals what the final state holds.
``demo()`` streams one scripted answer through three agents: no guard, a buffering guard,
and a sliding-window check.

How to adapt: put ``stream="buffer"`` on any guard that may replace or remove an answer
(a class middleware sets the ``stream`` attribute); use a sliding window for masking
where the first token should still come early, with ``chars`` at least the longest text
the check must see at once.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage

from funcware import AgentState, SlidingWindow, after_model, create_agent
from funcware.testing import StreamingScriptedChatModel

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
ANSWER = "Sure: write to jane.doe@example.com, she handles refunds."


def mask(text: str) -> str:
    """``text`` with e-mail addresses replaced by ``[EMAIL]``."""
    return EMAIL.sub("[EMAIL]", text)


@after_model(
    stream="buffer",
    reads=["state.messages", "messages.latest"],
    writes=["state.messages", "messages.rewrite.text"],
)
def mask_answer(state: AgentState) -> dict[str, Any] | None:
    """Mask e-mail addresses in the model's answers since the last human message (not just
    ``messages[-1]``: other hooks may have appended after the answer); hold the tokens."""
    masked = []
    for message in reversed(state["messages"]):
        if isinstance(message, HumanMessage):
            break
        if isinstance(message, AIMessage) and EMAIL.search(message.text):
            masked.append(message.model_copy(update={"content": mask(message.text)}))
    return {"messages": masked} if masked else None


# The hook returns nothing, but its stream= check rewrites the answer the agent keeps.
@after_model(stream=SlidingWindow(chars=32, check=mask), writes=["state.messages"])
def mask_as_it_streams(state: AgentState) -> None:
    """funcware masks the answer as it streams; the state keeps what was streamed."""
    return None


def _agent(*middleware: Any) -> Any:
    model = StreamingScriptedChatModel(responses=[ANSWER], chunk_size=6)
    return create_agent(model, [], middleware=list(middleware))


def streamed(agent: Any) -> list[str]:
    """The text of each message chunk a client receives for one question."""
    question = {"messages": [HumanMessage("Who handles refunds?")]}
    return [
        chunk.text
        for chunk, _ in agent.stream(question, stream_mode="messages")
        if isinstance(chunk, AIMessageChunk) and chunk.text
    ]


def highlights(agent: Any, state: dict[str, Any]) -> list[str]:
    """The three streams side by side, for the tour."""
    rows = [
        ("no guard", streamed(_agent())),
        ("buffer", streamed(_agent(mask_answer))),
        ("sliding window", streamed(_agent(mask_as_it_streams))),
    ]
    lines = [f"{label:<15} {' | '.join(chunks)}" for label, chunks in rows]
    return [*lines, f"{'state keeps':<15} {state['messages'][-1].text}"]


def demo() -> tuple[Any, dict[str, Any]]:
    """The buffering guard's agent answers; its stream and state both show the masked text."""
    agent = _agent(mask_answer)
    state = agent.invoke({"messages": [HumanMessage("Who handles refunds?")]})
    return agent, state


if __name__ == "__main__":
    agent, state = demo()
    print("\n".join(highlights(agent, state)))
