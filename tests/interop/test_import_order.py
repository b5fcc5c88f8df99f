"""What an agent does never depends on whether ``langchain`` was imported, or when.

The same agent (decorated hooks, a ``compose()``, a class middleware, a tool, structured
output whose first answer fails validation and is retried, a stream of updates) runs in
three fresh interpreters: with ``langchain`` imported by the user before funcware, after the
agent is built, or never. Its messages, structured response, streamed updates, the
transformers it compiled with and the class of the structured-output error a wrap layer
caught are the same in all three: where funcware uses LangChain's classes, it decides by
what is installed, not by what was imported.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from support import require_langchain

require_langchain("langchain.agents")

AGENT = textwrap.dedent(
    """
    import json, sys
    if MODE == "before":
        import langchain.agents  # noqa: F401
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from pydantic import BaseModel
    from funcware import AgentMiddleware, before_model, compose, create_agent, wrap_model_call
    from funcware.structured_output import StructuredOutputError, ToolStrategy
    from funcware.testing import ScriptedChatModel

    class Weather(BaseModel):
        city: str
        degrees: int

    @tool
    def forecast(city: str) -> str:
        "The forecast for a city."
        return f"{city}: 21 degrees"

    @before_model
    def count(state):
        return None

    caught = []

    @wrap_model_call
    def retry_once(request, handler):
        try:
            return handler(request)
        except StructuredOutputError as error:
            caught.append([k.__module__ + "." + k.__name__ for k in type(error).__mro__])
            return handler(request)

    class Shout(AgentMiddleware):
        def after_model(self, state, runtime):
            return None

    call = {"name": "forecast", "args": {"city": "Oslo"}, "id": "f1"}
    bad = {"name": "Weather", "args": {"city": "Oslo"}, "id": "w1"}
    good = {"name": "Weather", "args": {"city": "Oslo", "degrees": 21}, "id": "w2"}
    model = ScriptedChatModel(responses=[
        AIMessage("", tool_calls=[call]),
        AIMessage("", tool_calls=[bad]),
        AIMessage("", tool_calls=[good]),
    ])
    strategy = ToolStrategy(Weather, handle_errors=False)
    agent = create_agent(
        model, [forecast], middleware=[count, compose(retry_once), Shout()],
        response_format=strategy,
    )
    if MODE == "after":
        import langchain.agents  # noqa: F401
    updates, result = [], None
    for mode, chunk in agent.stream(
        {"messages": [("user", "Weather in Oslo?")]}, stream_mode=["updates", "values"]
    ):
        if mode == "updates":
            updates.append(sorted(chunk))
        else:
            result = chunk
    print(json.dumps({
        "langchain_loaded": "langchain.agents" in sys.modules,
        "messages": [[m.type, m.text, [c["name"] for c in getattr(m, "tool_calls", [])]]
                     for m in result["messages"]],
        "structured": result["structured_response"].model_dump(),
        "updates": updates,
        "transformers": sorted(f.__module__ + "." + f.__name__
                               for f in agent.stream_transformers),
        "caught": caught,
    }))
    """
)


def run(mode: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", f"MODE = {mode!r}\n" + AGENT],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


@pytest.mark.parametrize("mode", ["before", "after"])
def test_importing_langchain_changes_nothing_an_agent_does(mode: str) -> None:
    never = run("never")
    imported = run(mode)
    assert imported.pop("langchain_loaded") is True
    never.pop("langchain_loaded")
    assert imported == never
    assert never["structured"] == {"city": "Oslo", "degrees": 21}
    (caught,) = never["caught"]  # type: ignore[misc]
    assert "langchain.agents.structured_output.StructuredOutputError" in caught
