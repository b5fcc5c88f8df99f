"""Summarize history: fold old messages into one summary once the conversation grows.

Guarantee: the model never receives more than ``max_messages`` messages once a
summary is possible, nor a tool result without the call it answers.

When to use: long-running threads whose history would overflow the context window or
cost too much to resend on every call, where the gist of older turns is enough.

A ``before_model`` hook counts the messages. Past ``max_messages`` it splits the history:
the last ``keep_last`` messages stay as they are, the older ones go to a second (cheaper)
chat model that writes a summary. The cut is moved back so it never falls between an
``AIMessage`` with tool calls and its ``ToolMessage``\\ s — providers refuse a tool result
whose call is missing. The hook then returns
``[RemoveMessage(id=REMOVE_ALL_MESSAGES), summary, *kept]``: ``add_messages`` drops the
whole history at the ``REMOVE_ALL_MESSAGES`` marker and the rest of the list becomes the
new one, so the kept messages keep their ids and their order.

How to adapt: count tokens (``count_tokens_approximately`` from
``langchain_core.messages.utils``) instead of messages; give the summariser a prompt for
your domain (keep names, numbers, decisions); keep the full history in a field of your
own, or rely on the checkpointer's history, if it must stay auditable. The summariser
is called directly, outside the agent's ``wrap_model_call`` layers — redact its input
yourself if those layers redact the agent's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from funcware import AgentMiddleware, AgentState, create_agent
from funcware.testing import ScriptedChatModel

SUMMARY_PROMPT = (
    "Summarise the conversation below for the assistant that will continue it. Keep the "
    "user's goals, preferences, facts and open questions; drop pleasantries."
)
SUMMARY_PREFIX = "Summary of the earlier conversation:\n"


def transcript(messages: Sequence[AnyMessage]) -> str:
    """One line per message, tool calls included, for the summariser to read."""
    lines = []
    for message in messages:
        text: str = message.text
        if isinstance(message, AIMessage) and message.tool_calls:
            calls = ", ".join(f"{c['name']}({c['args']})" for c in message.tool_calls)
            text = f"{text} [calls {calls}]".strip()
        lines.append(f"{message.type}: {text}")
    return "\n".join(lines)


class SummarizeHistory(AgentMiddleware[AgentState]):
    """Replaces all but the last ``keep_last`` messages with a summary past ``max_messages``."""

    reads = ("state.messages", "messages.history")
    writes = ("state.messages", "messages.rewrite.text", "messages.append")

    def __init__(
        self, summarizer: BaseChatModel, max_messages: int = 20, keep_last: int = 6
    ) -> None:
        if not 0 < keep_last < max_messages:
            raise ValueError("need 0 < keep_last < max_messages")
        self.summarizer = summarizer
        self.max_messages = max_messages
        self.keep_last = keep_last

    def cut_point(self, messages: Sequence[AnyMessage]) -> int:
        """Index of the first message to keep: ``keep_last`` from the end, moved back past
        tool results so that an AI tool call and its results stay together.
        """
        cut = len(messages) - self.keep_last
        while cut > 0 and isinstance(messages[cut], ToolMessage):
            cut -= 1
        return cut

    def before_model(self, state: AgentState, runtime: Runtime[None]) -> dict[str, Any] | None:
        messages = state["messages"]
        if len(messages) <= self.max_messages:
            return None
        cut = self.cut_point(messages)
        if cut <= 0:
            return None  # one long tool round: nothing can be summarised without splitting it
        answer = self.summarizer.invoke(
            [SystemMessage(SUMMARY_PROMPT), HumanMessage(transcript(messages[:cut]))]
        )
        summary = HumanMessage(SUMMARY_PREFIX + answer.text, name="summary")
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), summary, *messages[cut:]]}


@tool
def weather(town: str) -> str:
    """Next week's weather in a town."""
    return {"Hakone": "14°C, light rain", "Kinosaki": "16°C, sunny"}.get(town, "unknown")


HISTORY = [
    HumanMessage("I'm planning a trip to Japan in April."),
    AIMessage("Lovely: April is cherry-blossom season. What do you enjoy?"),
    HumanMessage("Quiet places and hot springs."),
    AIMessage("Then consider Hakone, near Tokyo, or Kinosaki, a small onsen town."),
    HumanMessage("Compare next week's weather in Hakone and Kinosaki."),
]
"""An earlier conversation the demo resumes from."""


def demo() -> tuple[Any, dict[str, Any]]:
    """Eight messages before the second call: five become a summary, the tool round stays.

    ``keep_last`` is 2, but the cut moves back so the AI tool call stays with both results.
    """
    model = ScriptedChatModel(
        responses=[
            AIMessage(
                "",
                tool_calls=[
                    {"name": "weather", "args": {"town": "Hakone"}, "id": "w1"},
                    {"name": "weather", "args": {"town": "Kinosaki"}, "id": "w2"},
                ],
            ),
            "Kinosaki looks better next week: 16°C and sunny, against rain in Hakone.",
        ]
    )
    summarizer = ScriptedChatModel(
        responses=[
            "The user plans a quiet, hot-spring trip to Japan in April; Hakone and Kinosaki "
            "were suggested, and they asked to compare next week's weather in both."
        ]
    )
    middleware = SummarizeHistory(summarizer, max_messages=6, keep_last=2)
    agent = create_agent(model, [weather], middleware=[middleware])
    state = agent.invoke({"messages": list(HISTORY)})
    return agent, state


if __name__ == "__main__":
    for message in demo()[1]["messages"]:
        print(f"{message.type}: {message.text}")
