"""PII redaction: redact, mask, hash or block personal data in input, answers and tool results.

Guarantee: no value the detector finds reaches the model or the stored user messages
(``apply_to_input``), a stored or streamed answer (``apply_to_output``) or a stored tool
result (``apply_to_tool_results``), and with ``strategy="block"`` the run raises
:class:`PIIDetectionError` instead; the same holds in every funcware agent started during
the run (a funcware agent used as a tool, deepagents' ``task`` subagents): they inherit it.

When to use: the model provider must not receive personal data the user typed, personal
data a tool returns must not be stored in the conversation, and the model's answer must
not show it either — not even in the token stream.

One line per kind of data, with the parameters and defaults of LangChain's
``PIIMiddleware`` (coming from LangChain, change the import and the class name)::

    PIIRedaction("email", apply_to_input=True, apply_to_output=True, apply_to_tool_results=True)
    PIIRedaction("credit_card", strategy="mask", apply_to_tool_results=True)
    PIIRedaction("api_key", detector=r"sk-[a-zA-Z0-9]{32}", strategy="block")

Built-in kinds: ``email``, ``credit_card`` (13 to 19 digits passing the Luhn check),
``ip`` (checked with :mod:`ipaddress`), ``mac_address`` and ``url`` (with a scheme or
``www.``); any other name needs a ``detector``: a regular expression or a function
returning :class:`PIIMatch` dicts. Strategies: ``redact`` (``[REDACTED_EMAIL]``), ``mask``
(keep a little: a card's last four digits, an e-mail's domain, an IP's last part),
``hash`` (``<email_hash:1a2b3c4d>``, the same token for the same value, so the model can
still tell two values apart) and ``block`` (raise :class:`PIIDetectionError`, which names
the kind and the count, never the values).

Where each reach acts, so that no raw value is written anywhere:

- input: a ``before_model`` hook rewrites every ``HumanMessage`` of the state that holds
  the data (same id, so the stored message is replaced), and the ``wrap_model_call``
  masks every message of each request, whatever put it there. What langgraph saved of
  the caller's input before the first hook ran (the input checkpoint of a thread) stays
  as the caller sent it: redact before ``invoke`` when even that must be clean.
- output: the ``wrap_model_call`` rewrites the answer before it is stored, and a
  ``SlidingWindow`` stream policy applies the same rewrite to the text as it streams
  (released ``STREAM_WINDOW`` characters behind the newest token; a match is never
  split). Tool-call arguments are left as the model wrote them: the tool needs them.
- tool results: the ``wrap_tool_call`` rewrites the ``ToolMessage`` (also inside a
  returned ``Command``) before it is written.

Several instances stack: each is named ``PIIRedaction[<kind>]``.

Subagents: every ``PIIRedaction`` declares ``subagents = "inherit"``, so the guarantee
holds for every funcware agent started during the run too (a funcware agent used as a
tool, deepagents' ``task`` subagents built with funcware's ``create_agent``): each runs
with this redaction unless it has a ``PIIRedaction`` of the same kind of its own. Set
``subagents = None`` on an instance to keep it to this agent.

How to adapt: pass ``detector=`` for phone numbers or IBANs; subclass and override
:meth:`PIIRedaction.rewrite` for another replacement; use ``strategy="hash"`` when the
model must still tell two customers apart.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.runtime import Runtime
from langgraph.types import Command
from typing_extensions import TypedDict

from funcware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
    SlidingWindow,
    ToolCallRequest,
    compose,
    create_agent,
)
from funcware.testing import ScriptedChatModel

__all__ = [
    "STREAM_WINDOW",
    "PIIDetectionError",
    "PIIMatch",
    "PIIRedaction",
    "Strategy",
    "demo",
    "pii_redaction",
]

Strategy = Literal["block", "redact", "mask", "hash"]
"""What to do with a value the detector finds."""

STREAM_WINDOW = 64
"""Characters of an answer held back while it streams, so a value is seen whole."""

M = TypeVar("M", bound=BaseMessage)


class PIIMatch(TypedDict):
    """One value found in a text: its kind, the value, and where it is (``text[start:end]``)."""

    type: str
    value: str
    start: int
    end: int


class PIIDetectionError(Exception):
    """A ``block`` redaction found its kind of data; the message names the kind and count."""

    def __init__(self, pii_type: str, matches: Sequence[PIIMatch]) -> None:
        self.pii_type = pii_type
        self.matches = list(matches)
        super().__init__(
            f"Detected {len(self.matches)} instance(s) of {pii_type} in text content; "
            f"PIIRedaction({pii_type!r}, strategy='block') refuses it."
        )


Detector = Callable[[str], list[PIIMatch]]


def _finder(pii_type: str, pattern: str, valid: Callable[[str], bool] = bool) -> Detector:
    compiled = re.compile(pattern)

    def find(text: str) -> list[PIIMatch]:
        return [
            PIIMatch(type=pii_type, value=m.group(), start=m.start(), end=m.end())
            for m in compiled.finditer(text)
            if valid(m.group())
        ]

    return find


def _luhn(number: str) -> bool:
    digits = [int(c) for c in number if c.isdigit()]
    total = sum(
        d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2) for i, d in enumerate(reversed(digits))
    )
    return total % 10 == 0


def _ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


BUILT_IN: dict[str, Detector] = {
    "email": _finder("email", r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    "credit_card": _finder("credit_card", r"\b\d(?:[ -]?\d){12,18}\b", _luhn),
    "ip": _finder(
        "ip", r"\b(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7})\b", _ip
    ),
    "mac_address": _finder(
        "mac_address", r"\b[0-9A-Fa-f]{2}(?:([:-])[0-9A-Fa-f]{2})(?:\1[0-9A-Fa-f]{2}){4}\b"
    ),
    "url": _finder("url", r"\b(?:https?://|www\.)[^\s<>\"']+[^\s<>\"'.,;:!?)]"),
}
"""The detectors of the built-in kinds."""


def _detector(pii_type: str, detector: Detector | str | None) -> Detector:
    if detector is None:
        if pii_type not in BUILT_IN:
            raise ValueError(
                f"PIIRedaction({pii_type!r}) needs a detector: {pii_type!r} is not one of the "
                f"built-in kinds ({', '.join(BUILT_IN)}). Pass detector=r'<regex>' or a "
                "function returning PIIMatch dicts."
            )
        return BUILT_IN[pii_type]
    if isinstance(detector, str):
        return _finder(pii_type, detector)
    if not callable(detector):
        raise TypeError(
            f"PIIRedaction({pii_type!r}, detector={detector!r}): use a regex str or a function "
            "taking the text and returning PIIMatch dicts."
        )
    return detector


def _mask(match: PIIMatch) -> str:
    value, kind = match["value"], match["type"]
    if kind == "email":
        return "****@" + value.rsplit("@", 1)[-1]
    if kind == "credit_card":
        return "**** **** **** " + "".join(c for c in value if c.isdigit())[-4:]
    if kind == "ip":
        separator = "." if "." in value else ":"
        return f"*{separator}*{separator}*{separator}" + value.rsplit(separator, 1)[-1]
    if kind == "mac_address":
        return "**:**:**:**:**:" + value[-2:]
    if kind == "url":
        return "[MASKED_URL]"
    return "****" + value[-4:] if len(value) > 8 else "****"


class PIIRedaction(AgentMiddleware[AgentState[Any], Any]):
    """Redacts, masks, hashes or blocks one kind of personal data where it is told to.

    :param pii_type: The kind of data: ``email``, ``credit_card``, ``ip``,
        ``mac_address``, ``url``, or a name of your own with a ``detector``.
    :param strategy: ``redact`` (``[REDACTED_EMAIL]``), ``mask`` (keep a little),
        ``hash`` (a stable token per value) or ``block`` (raise :class:`PIIDetectionError`).
    :param detector: A regular expression or a function returning :class:`PIIMatch`
        dicts; ``None`` uses the built-in detector of ``pii_type``.
    :param apply_to_input: Store the user's messages without the data and send the model
        none of it.
    :param apply_to_output: Store and stream the model's answers without the data.
    :param apply_to_tool_results: Store tool results without the data.
    """

    def __init__(
        self,
        pii_type: str,
        *,
        strategy: Strategy = "redact",
        detector: Detector | str | None = None,
        apply_to_input: bool = True,
        apply_to_output: bool = False,
        apply_to_tool_results: bool = False,
    ) -> None:
        self.subagents: Literal["inherit"] | None = "inherit"  # agents it starts keep it
        if strategy not in ("block", "redact", "mask", "hash"):
            raise ValueError(
                f"PIIRedaction({pii_type!r}, strategy={strategy!r}): use 'redact', 'mask', "
                "'hash' or 'block'."
            )
        self.pii_type = pii_type
        self.name = f"PIIRedaction[{pii_type}]"
        self.strategy = strategy
        self.detector = _detector(pii_type, detector)
        self.apply_to_input = apply_to_input
        self.apply_to_output = apply_to_output
        self.apply_to_tool_results = apply_to_tool_results
        reads: list[str] = []
        if apply_to_input:
            reads += ["messages.history", "request.messages"]
        if apply_to_output:
            reads.append("model.result")
            self.stream = SlidingWindow(chars=STREAM_WINDOW, check=self.redact)
        if apply_to_tool_results:
            reads.append("tool.result")
        # It rewrites answers and results; it never turns an error into one.
        rewrites = {"model.result": "model.answer.rewrite", "tool.result": "tool.answer.rewrite"}
        writes = [rewrites.get(r, r) for r in reads if r != "messages.history"]
        self.reads = tuple(reads)
        self.writes = tuple(["messages.rewrite"] if apply_to_input else []) + tuple(writes)

    def rewrite(self, match: PIIMatch) -> str:
        """What replaces ``match`` under this instance's strategy (not ``block``)."""
        if self.strategy == "mask":
            return _mask(match)
        if self.strategy == "hash":
            digest = hashlib.sha256(match["value"].encode()).hexdigest()[:8]
            return f"<{match['type']}_hash:{digest}>"
        return f"[REDACTED_{match['type'].upper()}]"

    def redact(self, text: str) -> str:
        """``text`` with every value the detector finds rewritten (``block``: raised)."""
        matches = self.detector(text)
        if not matches:
            return text
        if self.strategy == "block":
            raise PIIDetectionError(self.pii_type, matches)
        for match in sorted(matches, key=lambda m: m["start"], reverse=True):
            text = text[: match["start"]] + self.rewrite(match) + text[match["end"] :]
        return text

    def redact_message(self, message: M) -> M:
        """A rewritten copy of ``message`` (text content and text blocks), or itself if clean."""
        content = message.content
        if isinstance(content, str):
            clean: Any = self.redact(content)
        else:
            clean = [self._redact_block(block) for block in content]
        return message if clean == content else message.model_copy(update={"content": clean})

    def _redact_block(self, block: str | dict[Any, Any]) -> str | dict[Any, Any]:
        if isinstance(block, str):
            return self.redact(block)
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            return {**block, "text": self.redact(block["text"])}
        return block

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Store the user's messages without the data (same ids: replaced, not added)."""
        if not self.apply_to_input:
            return None
        rewritten = [
            clean
            for message in state["messages"]
            if isinstance(message, HumanMessage)
            and (clean := self.redact_message(message)) is not message
        ]
        return {"messages": rewritten} if rewritten else None

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        """Send the model clean messages; store a clean answer (the stream policy cleans
        what streams the same way)."""
        if self.apply_to_input:
            request = request.override(messages=[self.redact_message(m) for m in request.messages])
        response = handler(request)
        if not self.apply_to_output:
            return response
        return ModelResponse(
            result=[self.redact_message(m) for m in response.result],
            structured_response=response.structured_response,
        )

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Rewrite the tool's result before it is stored."""
        result = handler(request)
        if not self.apply_to_tool_results:
            return result
        if isinstance(result, ToolMessage):
            return self.redact_message(result)
        update = result.update
        if isinstance(update, dict) and isinstance(update.get("messages"), list):
            messages = [
                self.redact_message(m) if isinstance(m, ToolMessage) else m
                for m in update["messages"]
            ]
            return Command(
                graph=result.graph,
                update={**update, "messages": messages},
                resume=result.resume,
                goto=result.goto,
            )
        return result


_card_numbers = PIIRedaction(
    "credit_card",
    strategy="mask",
    apply_to_input=True,
    apply_to_output=True,
    apply_to_tool_results=True,
)
_card_numbers.inside = ("PIIRedaction[email]",)  # the order this stack means: e-mail first

pii_redaction = compose(
    PIIRedaction("email", apply_to_input=True, apply_to_output=True, apply_to_tool_results=True),
    _card_numbers,
    name="pii_redaction",
)
"""The demo's stack: e-mail addresses redacted and card numbers masked, everywhere."""


@tool
def lookup_customer(customer_id: str) -> str:
    """Fetch a customer's record from the CRM."""
    return (
        f"Customer {customer_id}: Jane Doe, jane.doe@example.com, "
        "card 4111 1111 1111 1111, plan: premium."
    )


def demo() -> tuple[Any, dict[str, Any]]:
    """The user, a tool and the answer reveal PII; the model sees none, the state keeps none."""
    model = ScriptedChatModel(
        responses=[
            AIMessage(
                "",
                tool_calls=[{"name": "lookup_customer", "args": {"customer_id": "42"}, "id": "l1"}],
            ),
            "You are on the premium plan; the receipt goes to jane.doe@example.com.",
        ]
    )
    agent = create_agent(model, [lookup_customer], middleware=[pii_redaction])
    question = HumanMessage(
        "I'm customer 42 (jane.doe@example.com, card 4111-1111-1111-1111). Which plan am I on?"
    )
    state = agent.invoke({"messages": [question]})
    return agent, state


if __name__ == "__main__":
    for message in demo()[1]["messages"]:
        print(f"{message.type}: {message.text}")
