"""Issue 11 (streaming parts) against LangChain 1.5: transformers, projections, streams."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import tool_calls
from langchain_core.tools import tool
from support import hi, require_langchain

from funcware import create_agent
from funcware.interop import to_langchain
from funcware.testing import ScriptedChatModel

lc_agents = require_langchain("langchain.agents")
lc_middleware = require_langchain("langchain.agents.middleware")

pytestmark = pytest.mark.filterwarnings("ignore:The v3 streaming protocol")


@tool
def directory(person: str) -> str:
    """Find a person's address."""
    return f"{person} is at bob@example.com"


def _model() -> ScriptedChatModel:
    return ScriptedChatModel(
        responses=[tool_calls(("directory", {"person": "bob"})), "Write to alice@example.com"]
    )


def _pii_agent(factory: Any) -> Any:
    pii = lc_middleware.PIIMiddleware("email", apply_to_output=True)
    return factory(_model(), [directory], middleware=[pii], name="mailer")


def test_pii_middleware_keeps_the_address_out_of_the_v3_stream() -> None:
    agent = _pii_agent(create_agent)
    run = agent.stream_events(hi(), version="v3")
    events = list(run)
    streamed = repr([event["params"]["data"] for event in events])
    assert "alice@example.com" not in streamed
    assert "[REDACTED_EMAIL]" in streamed
    final = _pii_agent(create_agent).invoke(hi())["messages"][-1]
    assert "alice@example.com" not in final.text


def test_pii_stream_is_langchains() -> None:
    def methods_and_texts(factory: Any) -> list[tuple[str, str]]:
        run = _pii_agent(factory).stream_events(hi(), version="v3")
        out = []
        for event in run:
            data = event["params"]["data"]
            if event["method"] == "messages":
                out.append(("messages", data[0].text))
            elif event["method"] == "tools":
                out.append(("tools", str(data.get("event"))))
            else:
                out.append((event["method"], ""))
        return out

    assert methods_and_texts(create_agent) == methods_and_texts(lc_agents.create_agent)


def test_same_transformers_as_langchain_for_the_same_stack() -> None:
    ours = [getattr(f, "func", f) for f in _pii_agent(create_agent).stream_transformers]
    theirs = [getattr(f, "func", f) for f in _pii_agent(lc_agents.create_agent).stream_transformers]
    assert [f.__name__ for f in ours] == [f.__name__ for f in theirs]
    assert ours[0] is theirs[0]  # langgraph's ToolCallTransformer itself
    assert ours[2:] == theirs[2:]


def test_to_langchain_keeps_a_funcware_middlewares_transformers() -> None:
    from test_issue11_stream_transformers import MethodLog, Redacting

    converted = to_langchain(Redacting())
    assert list(converted.transformers) == list(Redacting.transformers)
    agent = lc_agents.create_agent(ScriptedChatModel(responses=["ok"]), middleware=[converted])
    assert Redacting.transformers[0] in agent.stream_transformers
    assert MethodLog not in agent.stream_transformers


def test_run_metadata_matches_langchains() -> None:
    def metadata(factory: Any) -> dict[str, Any]:
        agent = factory(ScriptedChatModel(responses=["ok"]), name="bot")
        return dict(agent.config["metadata"])

    assert metadata(create_agent) == metadata(lc_agents.create_agent)
