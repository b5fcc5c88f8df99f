"""Content guard: replace a model answer that contains blocked content, and end the run.

Guarantee: no answer matching a blocked pattern stays in the state, reaches a tool, or
streams to the client.

When to use: an output filter for secrets, credentials or policy terms that must never
reach the user or a tool — checked on the model's answer, before any of its tool calls
run.

An ``after_model`` hook runs after every model call and before the agent routes to the
tools. It checks every ``AIMessage`` since the last ``HumanMessage`` — their text and
tool-call arguments — against ``BLOCKED``: not just ``messages[-1]``, since a hook that
ran before it may have appended messages (a refusal, a notice) after the model's answer.
On a hit it returns a refusal ``AIMessage`` carrying the *same id*: the ``add_messages``
reducer replaces a message with an existing id in place, so the offending answer (and
the tool calls it asked for) is gone from the state; ``ToolMessage``\\ s other hooks
already added for those calls are removed with it (``RemoveMessage``). It also
returns ``{"jump_to": "end"}``, declared with ``@hook_config(can_jump_to=["end"])``, so
the run stops there (``after_agent`` hooks, if any, still run).

Streaming: ``stream = "buffer"`` makes the guard govern the stream too. Without it, a
client streaming with ``stream_mode="messages"`` would see the model's tokens — the
password included — before the guard runs. With it, the turn's tokens are held until the
guard has decided, and the client receives the answer as the state keeps it: here, the
refusal. (A moderation call the guard makes itself stays out of the user's stream.)

How to adapt: call a moderation model instead of regexes; return
``RemoveMessage(id=...)`` and a new message to drop the answer instead of replacing it;
jump to ``"model"`` with a corrective ``HumanMessage`` to let the model try again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langgraph.runtime import Runtime

from funcware import AgentMiddleware, AgentState, create_agent, hook_config
from funcware.testing import ScriptedChatModel

BLOCKED = (
    re.compile(r"\bpassword\s*(?:is|:)\s*\S+", re.IGNORECASE),
    re.compile(r"\bsk-[A-Za-z0-9]{16,}\b"),  # API-key-like strings
)


def this_turn(messages: Sequence[AnyMessage]) -> Iterator[AnyMessage]:
    """The messages after the last ``HumanMessage``, newest first."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return
        yield message


class ContentGuard(AgentMiddleware[AgentState]):
    """Replaces an answer that matches any of ``patterns`` with ``refusal``; ends the run.

    Guarantee: no answer matching a blocked pattern stays in the state, reaches a tool, or
    streams to the client.
    """

    stream = "buffer"  # hold the turn's tokens until this guard has decided
    reads = ("state.messages", "messages.latest")
    writes = ("state.messages", "messages.rewrite.text")  # withholds calls, never adds one

    def __init__(
        self,
        patterns: Sequence[re.Pattern[str]] = BLOCKED,
        refusal: str = "I can't share that. The answer was withheld by the content guard.",
    ) -> None:
        if isinstance(patterns, (str, re.Pattern)) or not all(
            isinstance(p, re.Pattern) for p in patterns
        ):
            raise TypeError(
                f"ContentGuard(patterns={patterns!r}): give a sequence of compiled patterns, "
                "e.g. [re.compile(r'password', re.I)]."
            )
        self.patterns = tuple(patterns)
        self.refusal = refusal

    def offending(self, message: AIMessage) -> bool:
        """Whether the message's text or any of its tool-call arguments is blocked."""
        texts = [message.text, *(json.dumps(call["args"]) for call in message.tool_calls)]
        return any(p.search(text) for p in self.patterns for text in texts)

    @hook_config(can_jump_to=["end"])
    def after_model(self, state: AgentState, runtime: Runtime[None]) -> dict[str, Any] | None:
        turn = list(this_turn(state["messages"]))
        hits = [m for m in turn if isinstance(m, AIMessage) and self.offending(m)]
        if not hits:
            return None
        withheld = {call["id"] for m in hits for call in m.tool_calls}
        replies: list[BaseMessage] = [
            RemoveMessage(id=m.id)
            for m in turn
            if isinstance(m, ToolMessage) and m.tool_call_id in withheld and m.id
        ]
        refusals = [AIMessage(self.refusal, id=m.id) for m in hits]
        return {"messages": [*replies, *refusals], "jump_to": "end"}


@tool
def send_message(to: str, body: str) -> str:
    """Send a chat message to a colleague."""
    return f"Sent to {to}."


def demo() -> tuple[Any, dict[str, Any]]:
    """The model tries to send a password; the guard withholds it and the run ends."""
    leak = AIMessage(
        "Sure, sending it now: the admin password is hunter2.",
        tool_calls=[
            {
                "name": "send_message",
                "args": {"to": "bob", "body": "The admin password is hunter2"},
                "id": "m1",
            }
        ],
    )
    model = ScriptedChatModel(responses=[leak, "Message sent."])
    agent = create_agent(model, [send_message], middleware=[ContentGuard()])
    state = agent.invoke({"messages": [HumanMessage("Send Bob the admin password.")]})
    return agent, state


if __name__ == "__main__":
    print(demo()[1]["messages"][-1].content)
