"""A feature costs nothing where it is not used: once other agents in the process have loaded
every feature, a plain agent's run (sync and async) calls no code of any feature but the
pairing check (on by default), and carries no run wrap."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from pydantic import BaseModel

import funcware
from funcware import (
    after_agent,
    before_model,
    create_agent,
    wrap_agent_call,
    wrap_model_call,
)

FEATURES = ("runs", "subagents", "effects", "policies", "structured", "guards", "nodes")
ROOT = Path(funcware.__file__).resolve().parent


class Answer(BaseModel):
    text: str


def _model() -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage("ok")] * 4))


def _noop(state: Any) -> None:
    return None


def _through(request: Any, handler: Callable[[Any], Any]) -> Any:
    return handler(request)


def _load_every_feature() -> None:
    """Build (and run) one agent per feature, so that each is loaded and consulted by later
    builds."""
    users = [
        [wrap_agent_call(name="around")(_through)],
        [before_model(name="limited", timeout=5.0, on_error="continue")(_noop)],
        [after_agent(name="cleanup", always=True)(_noop)],
        [wrap_model_call(name="guard", stream="buffer")(_through)],
        [before_model(name="declared", reads=["messages.tail"], subagents="inherit")(_noop)],
        [before_model(name="switchable", per_run="on")(_noop)],
        [before_model(name="policed", node_policy={"retry_policy": None})(_noop)],
    ]
    for middleware in users:
        create_agent(_model(), middleware=middleware).invoke({"messages": [("user", "hi")]})
    create_agent(_model(), response_format=Answer)


@contextmanager
def _features_called() -> Iterator[set[str]]:
    """The features whose code runs inside the block (by the package of each call)."""
    seen: set[str] = set()
    roots = {name: str(ROOT / name) for name in FEATURES}

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        filename = frame.f_code.co_filename
        for name, root in roots.items():
            if filename.startswith(root):
                seen.add(name)

    sys.setprofile(profile)
    try:
        yield seen
    finally:
        sys.setprofile(None)


@pytest.mark.parametrize("entry", ["invoke", "ainvoke"])
def test_a_plain_agent_runs_no_feature_code_after_other_agents_loaded_them(entry: str) -> None:
    _load_every_feature()
    plain = create_agent(
        _model(),
        middleware=[before_model(name="b")(_noop), wrap_model_call(name="w")(_through)],
    )
    assert plain.run_wraps == ()  # type: ignore[attr-defined]
    with _features_called() as seen:
        if entry == "invoke":
            result = plain.invoke({"messages": [("user", "hi")]})
        else:
            result = asyncio.run(plain.ainvoke({"messages": [("user", "hi")]}))
    assert result["messages"][-1].text == "ok"
    assert seen == set()


def test_the_profile_sees_a_feature_that_runs() -> None:
    """The check above can fail: an agent that uses wrap_agent_call runs its feature's code."""
    layered = create_agent(_model(), middleware=[wrap_agent_call(name="around")(_through)])
    with _features_called() as seen:
        layered.invoke({"messages": [("user", "hi")]})
    assert "runs" in seen
