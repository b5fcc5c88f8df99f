"""What ``timeout=``, ``on_error=`` and ``always=`` cost per call: nothing when unused.

One agent invoke (one model call) with 10 no-op decorated middleware (``before_model``,
``after_model``, ``wrap_model_call``, cycled) and one ``after_agent``, built five ways:
plain decorators; the same with the options spelled out at their defaults
(``timeout=None, on_error="raise", always=False``); and, for scale, each option used
(``on_error="continue"`` on all, ``timeout=5`` on all, the ``after_agent`` marked
``always=True``). Batches of the five alternate so that load on the machine hits them
alike, and the fastest batch of each counts (load only ever adds time). With options
unused the hooks' callables are the very functions of the plain build (checked), so
the two rows differ only by noise.

    python bench/policies.py            # 30 rounds
    python bench/policies.py --quick    # 3 rounds (the smoke test)
"""

from __future__ import annotations

import argparse
import sys
import time
import types
from collections.abc import Callable
from typing import Any

from fake_model import BenchChatModel, add
from langchain_core.messages import HumanMessage

from funcware import (
    after_agent,
    after_model,
    before_model,
    create_agent,
    wrap_model_call,
)
from funcware.hooks.middleware import hook_impls
from funcware.policies.hooks import apply_policies

__all__ = ["BUILDS", "main", "measure"]

HOOKS = 10


def _node(state: Any) -> None:
    return None


def _wrap(request: Any, handler: Callable[[Any], Any]) -> Any:
    return handler(request)


def _copy(func: Callable[..., Any]) -> Callable[..., Any]:
    return types.FunctionType(func.__code__, func.__globals__, func.__name__)


def _stack(options: dict[str, Any], always: bool | None) -> list[Any]:
    decorators = (before_model, after_model, wrap_model_call)
    stack = []
    for i in range(HOOKS):
        decorator = decorators[i % 3]
        func = _wrap if decorator is wrap_model_call else _node
        stack.append(decorator(name=f"hook_{i}", **options)(_copy(func)))
    extra = {} if always is None else {"always": always}
    stack.append(after_agent(name="report", **options, **extra)(_copy(_node)))
    return stack


BUILDS: dict[str, Callable[[], list[Any]]] = {
    "plain decorators": lambda: _stack({}, None),
    "options at their defaults": lambda: _stack({"timeout": None, "on_error": "raise"}, False),
    'on_error="continue" on all': lambda: _stack({"on_error": "continue"}, None),
    "timeout=5 on all": lambda: _stack({"timeout": 5}, None),
    "after_agent always=True": lambda: _stack({}, True),
}


def _same_callables(a: list[Any], b: list[Any]) -> bool:
    """Whether two stacks' hooks run the same code, with no wrapper in between."""

    def code(stack: list[Any]) -> list[Any]:
        return [
            (hook, impl.options.get("timeout"), getattr(func, "__code__", None))
            for middleware in stack
            for hook, impl in ((h, apply_policies(i)) for h, i in hook_impls(middleware).items())
            for func in (impl.sync, impl.async_)
        ]

    return code(a) == code(b)


def measure(rounds: int = 30, inner: int = 20) -> tuple[dict[str, float], bool]:
    """Best µs per invoke of each build, and whether unused options left the hooks alone."""
    stacks = {name: build() for name, build in BUILDS.items()}
    agents = {
        name: create_agent(BenchChatModel(), [add], middleware=stack)
        for name, stack in stacks.items()
    }
    for agent in agents.values():
        assert agent.invoke({"messages": [HumanMessage("hi")]})["messages"][-1].text == "done"
    best = dict.fromkeys(agents, float("inf"))
    for _ in range(rounds):
        for name, agent in agents.items():
            start = time.perf_counter_ns()
            for _ in range(inner):
                agent.invoke({"messages": [HumanMessage("hi")]})
            best[name] = min(best[name], (time.perf_counter_ns() - start) / inner / 1e3)
    same = _same_callables(stacks["plain decorators"], stacks["options at their defaults"])
    return best, same


def report(best: dict[str, float], same: bool) -> str:
    base = best["plain decorators"]
    lines = [
        f"| {HOOKS} no-op middleware + after_agent, 1 model call | µs per invoke | vs plain |",
        "|---|---|---|",
    ]
    lines += [f"| {name} | {us:.0f} | {us / base:.2f}× |" for name, us in best.items()]  # noqa: RUF001
    lines.append("")
    lines.append(
        "unused options leave every hook's callable as it is: " + ("yes" if same else "**NO**")
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    best, same = measure(rounds=3 if args.quick else 30, inner=3 if args.quick else 20)
    print(report(best, same))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
