"""funcware without ``langchain``: it imports and runs agents, and never imports ``langchain``.

``langchain`` is an optional extra (interop only). Each check runs in a fresh interpreter in
which ``langchain`` cannot be imported, whether or not it is installed: a finder placed first
on ``sys.meta_path`` records and refuses every ``langchain`` / ``langchain.*`` import (so an
attempt is seen even where it would be caught), or ``sys.modules["langchain"] = None``.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, distribution

from fresh_python import run_python


def installed(name: str) -> bool:
    try:
        distribution(name)
    except PackageNotFoundError:
        return False
    return True


def test_funcware_imports_and_runs_agents_without_langchain() -> None:
    result = run_python(
        """
        import json
        import funcware, funcware.compose, funcware.hooks, funcware.interop, funcware.testing
        from funcware import cookbook
        from funcware.interop import langchain_base
        from langchain_core.messages import AIMessage, HumanMessage
        from langchain_core.tools import tool

        imported = sorted(n for n in sys.modules if n.split(".")[0] == "langchain")
        tried_at_import = list(TRIED)

        @tool
        def add(a: int, b: int) -> int:
            "Add."
            return a + b

        @funcware.before_model(can_jump_to=["end"])
        def gate(state):
            return {"jump_to": "end"} if state["messages"][-1].text == "stop" else None

        class Double(funcware.AgentMiddleware):
            def wrap_tool_call(self, request, handler):
                args = {k: 2 * v for k, v in request.tool_call["args"].items()}
                return handler(request.override(tool_call={**request.tool_call, "args": args}))

        model = funcware.testing.ScriptedChatModel(responses=[
            AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "c"}]),
            "six",
        ])
        agent = funcware.create_agent(
            model, [add], middleware=[funcware.compose(gate, Double())]
        )
        state = agent.invoke({"messages": [HumanMessage("1 + 2?")]})
        for name in cookbook.RECIPES:
            cookbook.load(name).demo()

        print(json.dumps({
            "imported": imported,
            "tried_at_import": tried_at_import,
            "tried": TRIED,
            "foreign": langchain_base(type(gate)) is not None,
            "messages": [m.text for m in state["messages"]],
        }))
        """,
        block=True,
    )
    assert result["imported"] == [] and result["tried_at_import"] == []
    if installed("langchain"):  # funcware asks for LangChain's classes once, and copes
        assert set(result["tried"]) <= {
            "langchain.agents._subagent_transformer",
            "langchain.agents.structured_output",
            "langchain",
            "langchain.agents",
        }
    else:  # an environment without it never sees an attempt, running agents or demos
        assert result["tried"] == []
    assert result["foreign"] is False
    assert result["messages"] == ["1 + 2?", "", "6", "six"]


def test_to_langchain_says_what_to_install() -> None:
    result = run_python(
        """
        import json, sys
        sys.modules["langchain"] = None
        from funcware import before_model
        from funcware.interop import to_langchain

        @before_model
        def note(state):
            return None

        try:
            to_langchain(note)
        except ImportError as exc:
            print(json.dumps({"error": str(exc), "cause": type(exc.__cause__).__name__}))
        """
    )
    assert "funcware.interop.to_langchain needs the `langchain` package" in str(result["error"])
    assert "pip install -e '.[langchain]' from a funcware checkout" in str(result["error"])
    assert result["cause"] == "ModuleNotFoundError"
