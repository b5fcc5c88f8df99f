"""``PIIRedaction``: one middleware, one line, with LangChain's reach and strategies.

Each test checks a part of the recipe's guarantee: with ``apply_to_input`` the model is
sent no raw value and the stored user messages hold none; with ``apply_to_output`` no
stored or streamed answer does; with ``apply_to_tool_results`` no stored tool result
does; ``block`` raises and names the kind and count, never the value. The constructor
has the parameters and defaults of LangChain's ``PIIMiddleware``.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import pytest
from harness import Driver, StreamingScriptedModel, tool_calls
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from funcware import MiddlewareOrderWarning, create_agent, explain
from funcware.cookbook.pii_redaction import PIIDetectionError, PIIMatch, PIIRedaction
from funcware.testing import ScriptedChatModel

EMAIL = "jane.doe@example.com"


@tool
def lookup_customer(customer_id: str) -> str:
    """Fetch a customer's record."""
    return f"Customer {customer_id}: Jane Doe, {EMAIL}, plan premium."


def _support_agent(middleware: list[Any], model: Any = None) -> tuple[Any, Any]:
    model = model or ScriptedChatModel(
        responses=[
            tool_calls(("lookup_customer", {"customer_id": "42"})),
            f"Your receipt goes to {EMAIL}.",
        ]
    )
    agent = create_agent(
        model, [lookup_customer], middleware=middleware, checkpointer=InMemorySaver()
    )
    return agent, model


def _question() -> dict[str, Any]:
    return {"messages": [HumanMessage(f"I'm {EMAIL}. Which plan am I on?")]}


def _texts(messages: list[Any], kind: type) -> list[str]:
    return [m.text for m in messages if isinstance(m, kind)]


def test_one_line_covers_input_output_and_tool_results(driver: Driver) -> None:
    pii = PIIRedaction(
        "email", apply_to_input=True, apply_to_output=True, apply_to_tool_results=True
    )
    agent, model = _support_agent([pii])
    config: Any = {"configurable": {"thread_id": "t"}}

    driver.invoke(agent, _question(), config)

    sent = [m.text for call in model.calls for m in call.messages]
    assert sent and not any(EMAIL in text for text in sent)
    stored = driver.get_state(agent, config).values["messages"]
    assert not any(EMAIL in m.text for m in stored)
    assert _texts(stored, HumanMessage) == ["I'm [REDACTED_EMAIL]. Which plan am I on?"]
    assert _texts(stored, ToolMessage) == ["Customer 42: Jane Doe, [REDACTED_EMAIL], plan premium."]
    assert _texts(stored, AIMessage)[-1] == "Your receipt goes to [REDACTED_EMAIL]."
    assert len(stored) == 4  # the input was replaced in place, not added again


def test_the_defaults_are_langchains_input_only(driver: Driver) -> None:
    pii = PIIRedaction("email")
    assert (pii.strategy, pii.apply_to_input, pii.apply_to_output, pii.apply_to_tool_results) == (
        "redact",
        True,
        False,
        False,
    )
    agent, model = _support_agent([pii])
    result = driver.invoke(agent, _question(), {"configurable": {"thread_id": "t"}})

    assert _texts(result["messages"], HumanMessage) == ["I'm [REDACTED_EMAIL]. Which plan am I on?"]
    assert not any(EMAIL in m.text for call in model.calls for m in call.messages)
    assert EMAIL in _texts(result["messages"], ToolMessage)[0]  # not asked to
    assert EMAIL in result["messages"][-1].text


def test_the_streamed_answer_never_shows_the_value(driver: Driver) -> None:
    model = StreamingScriptedModel(
        responses=[f"Write to {EMAIL} or to ops@example.org, both read it daily."]
    )
    agent = create_agent(
        model, middleware=[PIIRedaction("email", apply_to_input=False, apply_to_output=True)]
    )
    chunks = driver.stream(agent, {"messages": [HumanMessage("who?")]}, stream_mode="messages")

    streamed = "".join(c.text for c, _meta in chunks if isinstance(c, (AIMessage, AIMessageChunk)))
    assert streamed == "Write to [REDACTED_EMAIL] or to [REDACTED_EMAIL], both read it daily."


@pytest.mark.parametrize(
    ("pii_type", "text", "expected"),
    [
        ("email", f"mail {EMAIL} now", "mail ****@example.com now"),
        ("credit_card", "card 4111-1111-1111-1111 ok", "card **** **** **** 1111 ok"),
        ("ip", "from 192.168.1.23 today", "from *.*.*.23 today"),
        ("mac_address", "nic 00:1a:2b:3c:4d:5e up", "nic **:**:**:**:**:5e up"),
        ("url", "see https://example.com/a?b=1.", "see [MASKED_URL]."),
    ],
)
def test_mask_keeps_only_a_little(pii_type: str, text: str, expected: str) -> None:
    assert PIIRedaction(pii_type, strategy="mask").redact(text) == expected


def test_redact_names_the_kind_and_hash_gives_one_token_per_value() -> None:
    assert PIIRedaction("ip").redact("at 10.0.0.1") == "at [REDACTED_IP]"
    hashed = PIIRedaction("email", strategy="hash")
    one, two = hashed.redact("a@x.io"), hashed.redact("b@x.io")
    assert one.startswith("<email_hash:") and one != two
    assert hashed.redact("a@x.io and a@x.io") == f"{one} and {one}"


def test_detection_is_checked_not_only_matched() -> None:
    cards, ips = PIIRedaction("credit_card"), PIIRedaction("ip")
    assert cards.redact("order 4111 1111 1111 1112") == "order 4111 1111 1111 1112"  # not Luhn
    assert ips.redact("version 999.1.2.3") == "version 999.1.2.3"  # not an address


def test_block_raises_naming_the_kind_and_count_never_the_value(driver: Driver) -> None:
    agent, model = _support_agent([PIIRedaction("email", strategy="block")])
    with pytest.raises(PIIDetectionError) as error:
        driver.invoke(agent, _question(), {"configurable": {"thread_id": "t"}})

    assert error.value.pii_type == "email" and len(error.value.matches) == 1
    assert "1 instance(s) of email" in str(error.value) and EMAIL not in str(error.value)
    assert model.calls == []  # the model was never asked


def test_a_custom_kind_takes_a_regex_or_a_function() -> None:
    keys = PIIRedaction("api_key", detector=r"sk-[a-zA-Z0-9]{8}")
    assert keys.redact("key sk-abcd1234 here") == "key [REDACTED_API_KEY] here"

    def find_ids(text: str) -> list[PIIMatch]:
        start = text.find("ID-")
        if start < 0:
            return []
        return [
            PIIMatch(type="staff_id", value=text[start : start + 7], start=start, end=start + 7)
        ]

    assert PIIRedaction("staff_id", detector=find_ids).redact("by ID-1234.") == (
        "by [REDACTED_STAFF_ID]."
    )
    with pytest.raises(ValueError, match="'api_key' is not one of the built-in kinds"):
        PIIRedaction("api_key")


def test_several_kinds_stack_under_their_own_names() -> None:
    email, card = PIIRedaction("email"), PIIRedaction("credit_card", strategy="mask")
    assert (email.name, card.name) == ("PIIRedaction[email]", "PIIRedaction[credit_card]")
    # Two rewrites of the same messages: no guarantee breaks in either order, so the build
    # is silent; explain() lists the unordered effect.
    with warnings.catch_warnings():
        warnings.simplefilter("error", MiddlewareOrderWarning)
        agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=[email, card])
    assert any("request.messages" in c.message for c in explain(agent).conflicts)
    result = agent.invoke({"messages": [HumanMessage(f"{EMAIL}, 4111 1111 1111 1111")]})
    assert result["messages"][0].text == "[REDACTED_EMAIL], **** **** **** 1111"


def test_the_parameters_and_defaults_are_langchains() -> None:
    langchain_pii = pytest.importorskip("langchain.agents.middleware").PIIMiddleware

    def params(cls: type) -> list[tuple[str, Any, Any]]:
        found = inspect.signature(cls.__init__).parameters.values()
        return [(p.name, p.kind, p.default) for p in found if p.name != "self"]

    assert params(PIIRedaction) == params(langchain_pii)


def test_a_blocked_answer_raises_before_any_of_it_streams() -> None:
    model = StreamingScriptedModel(responses=[f"Hello there, write to {EMAIL} please."])
    pii = PIIRedaction("email", strategy="block", apply_to_input=False, apply_to_output=True)
    agent = create_agent(model, middleware=[pii])
    streamed: list[str] = []

    with pytest.raises(PIIDetectionError, match="1 instance"):
        for chunk, _meta in agent.stream(
            {"messages": [HumanMessage("who?")]}, stream_mode="messages"
        ):
            streamed.append(chunk.text)
    assert EMAIL not in "".join(streamed)
    assert len(model.calls) == 1  # the model answered; its answer was refused
