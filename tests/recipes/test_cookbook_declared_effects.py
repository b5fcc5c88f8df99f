"""Every cookbook recipe declares its effects, and its scenario keeps to them.

Each recipe's ``demo()`` (and its ``highlights()``, the rest of what the tour runs) is run
with the recipe module's ``create_agent`` replaced by one that records the agents it
builds and sets ``effects=``: so the recipe runs exactly as written, only watched. A
recipe's wrong declaration (its own hook with one effect left out) must then fail that
same scenario with ``UndeclaredEffectError``: the strict check does watch the recipes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from funcware import (
    AgentMiddleware,
    MiddlewareOrderError,
    MiddlewareOrderWarning,
    UndeclaredEffectError,
    before_model,
    cookbook,
    create_agent,
    explain,
    wrap_model_call,
    wrap_tool_call,
)
from funcware.effects.declarations import declarations


@contextmanager
def building(module: ModuleType, effects: str) -> Iterator[list[Any]]:
    """While inside, ``module``'s agents are built with ``effects=``; yields them as built."""
    assert module.create_agent is create_agent, f"{module.__name__} has its own create_agent"
    built: list[Any] = []

    def create(*args: Any, **kwargs: Any) -> Any:
        agent = create_agent(*args, **kwargs, effects=effects)
        built.append(agent)
        return agent

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "create_agent", create)
        yield built


def run_scenario(module: ModuleType) -> None:
    """What the tour runs of ``module``: its demo, then its highlights (if any)."""
    agent, state = module.demo()
    highlights = getattr(module, "highlights", None)
    if highlights is not None:
        highlights(agent, state)


def own_middleware(module: ModuleType) -> list[Any]:
    """The middleware instances ``module`` defines at its top level (composites flattened)."""
    found: list[Any] = []
    for value in vars(module).values():
        if isinstance(value, AgentMiddleware):
            found.extend(getattr(value, "members", None) or [value])
    return found


@pytest.mark.parametrize("name", cookbook.RECIPES)
def test_every_middleware_of_the_recipe_declares_its_effects(name: str) -> None:
    module = cookbook.load(name)
    with building(module, "warn") as built, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_scenario(module)
    # routed_fallback shows its warning on purpose, and catches it itself; nothing else warns,
    # and no agent has a conflict (a composite's warning comes when the module is imported).
    assert not [w for w in caught if issubclass(w.category, MiddlewareOrderWarning)], name
    assert built, f"{name} built no agent"
    conflicts = [(c.outer, c.inner) for agent in built for c in explain(agent).conflicts]
    assert conflicts == ([("fall_back", "route_by_length")] if name == "routed_fallback" else [])
    used = [m for agent in built for m in explain(agent).plan.middleware]
    for agent in built:
        report = explain(agent).ordering
        if report is None:  # nothing declared anything: an agent without middleware
            assert explain(agent).plan.middleware == [], name
            continue
        assert report.undeclared == [], name
        assert "undeclared" not in str(explain(agent))
    for middleware in [*used, *own_middleware(module)]:
        assert declarations(middleware) is not None, f"{name}: {middleware.name} is undeclared"
    classes = [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, AgentMiddleware)
        and value.__module__ == module.__name__
    ]
    for cls in classes:  # every middleware class the recipe defines is in its scenario
        assert any(isinstance(m, cls) for m in used), f"{name}: {cls.__name__} never ran"


@pytest.mark.parametrize("name", [n for n in cookbook.RECIPES if n != "routed_fallback"])
def test_the_recipe_scenario_keeps_to_its_declarations(name: str) -> None:
    module = cookbook.load(name)
    with building(module, "strict") as built:
        run_scenario(module)
    assert built


def test_routed_fallback_keeps_to_its_declarations_and_its_warning_is_strict_an_error() -> None:
    from funcware.cookbook import routed_fallback

    with building(routed_fallback, "strict"):
        routed_fallback.demo()
        assert "must sit inside 'route_by_length'" in routed_fallback.wrong_order_error()
        with pytest.raises(MiddlewareOrderError, match="an error with effects='strict'"):
            routed_fallback.unordered_warning()


def redeclared(
    decorator: Callable[..., Any], **options: Any
) -> Callable[[ModuleType, str], tuple[str, Any]]:
    """A maker of the recipe's decorated hook ``attr`` again, declared with ``options``."""

    def make(module: ModuleType, attr: str) -> tuple[str, Any]:
        return attr, decorator(**options)(getattr(module, attr).__wrapped__)

    return make


def subclassed(**attributes: Any) -> Callable[[ModuleType, str], tuple[str, Any]]:
    """A maker of a subclass of the recipe's middleware class ``attr`` with ``attributes``."""

    def make(module: ModuleType, attr: str) -> tuple[str, Any]:
        return attr, type(attr, (getattr(module, attr),), attributes)

    return make


WRONG = [
    pytest.param(
        "message_limit",
        "message_limit",
        redeclared(before_model, can_jump_to=["end"], reads=["state.messages"], writes=[]),
        "state.messages",
        id="message_limit-state",
    ),
    pytest.param(
        "logging_around_model",
        "retry_once",
        redeclared(wrap_model_call, writes=[]),
        "handler.retry",
        id="logging_around_model-retry",
    ),
    pytest.param(
        "model_fallback",
        "ModelFallback",
        subclassed(writes=("handler.retry",)),
        "request.model",
        id="model_fallback-request",
    ),
    pytest.param(
        "schema_tool",
        "serve_weather",
        redeclared(wrap_tool_call, reads=["tool.args"], writes=[]),
        "handler.skip",
        id="schema_tool-skip",
    ),
    pytest.param(
        "tool_retry",
        "ToolRetry",
        subclassed(writes=("handler.retry",)),
        "tool.error.recover",
        id="tool_retry-recover",
    ),
    pytest.param(
        "usage_tracking",
        "UsageTracker",
        subclassed(writes=()),
        "state.usage",
        id="usage_tracking-state",
    ),
    pytest.param(
        "human_approval",
        "ApproveToolCalls",
        subclassed(writes=("state.messages",)),
        "interrupt",
        id="human_approval-interrupt",
    ),
    pytest.param(
        "prompt_caching",
        "cache_reference",
        redeclared(wrap_model_call, reads=["request.system_message"], writes=[]),
        "request.system_message",
        id="prompt_caching-request",
    ),
]


@pytest.mark.parametrize(("name", "attr", "make", "effect"), WRONG)
def test_a_declaration_missing_one_effect_fails_the_recipe_scenario(
    name: str,
    attr: str,
    make: Callable[[ModuleType, str], tuple[str, Any]],
    effect: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = cookbook.load(name)
    monkeypatch.setattr(module, *make(module, attr))
    with building(module, "warn"):  # unwatched, the scenario runs as before
        run_scenario(module)
    with building(module, "strict"), pytest.raises(UndeclaredEffectError) as caught:
        run_scenario(module)
    assert f"effect {effect!r}, which it did not declare" in str(caught.value)


STRICT_PLUGIN = '''
"""Make effects="strict" create_agent's default, and check that it took."""
import pytest


def pytest_configure(config):
    from langchain_core.messages import AIMessage
    from funcware import UndeclaredEffectError, before_model, create_agent
    from funcware.testing import ScriptedChatModel

    create_agent.__kwdefaults__["effects"] = "strict"  # for every caller, however imported

    @before_model(writes=[])
    def says_hello(state):
        return {"messages": [AIMessage("hello")]}

    built = create_agent(ScriptedChatModel(responses=["hi"]), middleware=[says_hello])
    with pytest.raises(UndeclaredEffectError):
        built.invoke({"messages": [("user", "hi")]})
'''

EXPECTED_UNDER_STRICT = (
    # routed_fallback shows the unordered pair's warning, which strict makes an error
    # (checked above); the whole tour includes that recipe.
    "tests/recipes/test_cookbook_routed_fallback.py::test_the_unconstrained_pair_warns_naming_both",
    "tests/recipes/test_cookbook_tour.py::test_the_tour_runs_every_recipe",
)


def test_the_cookbook_tests_pass_with_every_agent_strict(tmp_path: Path) -> None:
    """The existing recipe tests' own scenarios, with ``effects="strict"`` as the default."""
    (tmp_path / "strict_by_default.py").write_text(STRICT_PLUGIN, encoding="utf-8")
    root = Path(__file__).resolve().parents[2]
    files = sorted(
        str(p.relative_to(root))
        for p in (root / "tests" / "recipes").glob("test_cookbook_*.py")
        if p.name != Path(__file__).name
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    deselect = [arg for test in EXPECTED_UNDER_STRICT for arg in ("--deselect", test)]
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["-p", "strict_by_default", *deselect, *files]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout


# -- the orders the recipes' own docs recommend build silently ------------------------------


def _recommended_stacks() -> dict[str, list[Any]]:
    """Each stack a recipe's docstring (or the issue's support agent, built from them) says
    to use, first outermost."""
    from funcware.cookbook import (
        human_approval,
        logging_around_model,
        model_fallback,
        model_retry,
        outer_wins,
        pii_redaction,
        routed_fallback,
        tool_call_limit,
        tool_monitoring,
        tool_retry,
    )
    from funcware.testing import ScriptedChatModel

    small, large, backup = (ScriptedChatModel(responses=["ok"]) for _ in range(3))
    log = logging_around_model
    approve = human_approval.ApproveToolCalls(
        {"refund"}, when={"refund": lambda call: call["args"]["amount"] > 100}
    )
    return {
        "logging: retry outside the logger": [log.compose(log.retry_once, log.log_model_call)],
        "logging: logger outside the retry": [log.compose(log.log_model_call, log.retry_once)],
        "routed_fallback": [
            routed_fallback.route_by_length(small, large, 5),
            routed_fallback.fall_back_to(backup),
        ],
        "outer_wins": [outer_wins.review],
        "tool_retry with a monitor inside": [
            tool_retry.ToolRetry(),
            tool_monitoring.ToolMonitor(),
        ],
        "model_fallback with a retry inside": [
            model_fallback.ModelFallback(backup),
            model_retry.ModelRetry(),
        ],
        "the support agent of issue 33": [
            pii_redaction.pii_redaction,
            log.compose(log.retry_once, log.log_model_call),
            model_fallback.ModelFallback(backup),
            model_retry.ModelRetry(),
            approve,
            tool_call_limit.ToolCallLimit(limit=3),
        ],
    }


@pytest.mark.parametrize("stack", list(_recommended_stacks()))
def test_every_recipe_stacked_in_the_orders_its_docs_recommend_builds_silently(stack: str) -> None:
    from funcware.testing import ScriptedChatModel

    middleware = _recommended_stacks()[stack]
    with warnings.catch_warnings():
        warnings.simplefilter("error", MiddlewareOrderWarning)
        agent = create_agent(ScriptedChatModel(responses=["ok"]), middleware=middleware)
    assert explain(agent).hazards == []
