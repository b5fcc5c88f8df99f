"""What the tool-call pairing check costs: the same agent with ``tool_pairing="warn"`` (the
default) and ``tool_pairing="off"``.

The agent: three tool steps (four model calls, three tool calls) through a stack that
exercises every place the check runs: a ``before_model`` hook that writes no message, an
``after_model`` hook that rewrites the model's answer by id (as a redaction does: the
check simulates ``add_messages``), a node hook that writes something else, and two
``wrap_model_call`` layers. Two inputs: a fresh
question, and a thread-like history of 60 messages (20 earlier tool steps) before it.
Batches alternate so that load on the machine hits both alike, and the fastest batch of
each counts (load only ever adds time); the time is this process's CPU time, so other
processes on a busy machine count less. The verdict line says whether the check stays
within 2% of the agent without it.

    python bench/pairing.py            # 30 rounds
    python bench/pairing.py --quick    # 3 rounds (the smoke test)
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

from fake_model import BenchChatModel, add
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from funcware import after_model, before_agent, before_model, create_agent, wrap_model_call

__all__ = ["INPUTS", "agents", "main", "measure", "question"]

STEPS = 3
BUDGET = 0.02


def _history(turns: int) -> list[BaseMessage]:
    history: list[BaseMessage] = []
    for turn in range(turns):
        call = {"name": "add", "args": {"a": turn, "b": 1}, "id": f"old_{turn}"}
        history += [
            HumanMessage(f"question {turn}"),
            AIMessage("", tool_calls=[call]),
            ToolMessage(str(turn + 1), tool_call_id=f"old_{turn}"),
        ]
    return history


INPUTS: dict[str, list[BaseMessage]] = {"fresh question": [], "60-message history": _history(20)}


def _stack() -> list[Any]:
    @before_agent
    def start(state: Any) -> dict[str, Any]:
        return {}

    @before_model
    def before(state: Any) -> dict[str, Any]:
        return {"messages": []}

    @after_model
    def after(state: Any) -> dict[str, Any]:
        # A redaction-style rewrite: the model's answer replaced by id (add_messages' path).
        return {"messages": [state["messages"][-1].model_copy()]}

    def layer(name: str) -> Any:
        def wrap(request: Any, handler: Callable[[Any], Any]) -> Any:
            return handler(request)

        return wrap_model_call(name=name)(wrap)

    return [start, before, after, layer("outer"), layer("inner")]


def agents(prior: int) -> dict[str, Any]:
    """The agent with the check off and on (``tool_pairing``), for ``prior`` earlier tool steps."""
    return {
        mode: create_agent(
            BenchChatModel(tool_steps=prior + STEPS), [add], middleware=_stack(), tool_pairing=mode
        )
        for mode in ("off", "warn")
    }


def question(history: list[BaseMessage]) -> dict[str, Any]:
    """A run's input: ``history``, then a new question."""
    return {"messages": [*history, HumanMessage("hi")]}


def measure(rounds: int = 30, inner: int = 20) -> dict[str, dict[str, float]]:
    """Best µs per invoke, per input, with the check off and on."""
    results: dict[str, dict[str, float]] = {}
    for label, history in INPUTS.items():
        prior = sum(isinstance(m, ToolMessage) for m in history)
        pair = agents(prior)
        for agent in pair.values():
            assert agent.invoke(question(history))["messages"][-1].text == "done"
        best = dict.fromkeys(pair, float("inf"))
        for _ in range(rounds):
            for mode, agent in pair.items():
                inputs = [question(history) for _ in range(inner)]
                start = time.process_time_ns()
                for item in inputs:
                    agent.invoke(item)
                best[mode] = min(best[mode], (time.process_time_ns() - start) / inner / 1e3)
        results[label] = best
    return results


def report(results: dict[str, dict[str, float]]) -> str:
    lines = [
        f"| {STEPS} tool steps, 5 middleware | check off (µs) | check on (µs) | difference |",
        "|---|---|---|---|",
    ]
    worst = 0.0
    for label, best in results.items():
        difference = best["warn"] / best["off"] - 1
        worst = max(worst, difference)
        lines.append(
            f"| {label} | {best['off']:.0f} | {best['warn']:.0f} | {difference * 100:+.1f}% |"
        )
    lines.append("")
    verdict = "yes" if worst <= BUDGET else "**NO**"
    lines.append(f"the pairing check stays within {BUDGET:.0%} of the agent without it: {verdict}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    print(report(measure(rounds=3 if args.quick else 30, inner=3 if args.quick else 20)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
