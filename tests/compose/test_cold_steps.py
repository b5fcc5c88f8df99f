"""A plain agent loads none of the model step's and the run's modules for rarer cases; each
loads when its case comes: a resume, a context, a hook's Command or jump, a layer's
ExtendedModelResponse, a trace_policy that is no TracePolicy."""

from __future__ import annotations

import pytest
from fresh_python import loaded_modules

COLD = (
    "funcware.compose.steps.contexts",
    "funcware.compose.steps.jump_counts",
    "funcware.compose.steps.late_formats",
    "funcware.compose.steps.node_commands",
    "funcware.compose.steps.resumes",
    "funcware.compose.steps.tracing_errors",
    "funcware.compose.steps.wrapped_runs",
    "funcware.compose.wraps.extended",
    "funcware.compose.wraps.updates",
)

PLAIN = """
from dataclasses import dataclass
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.types import Command
from funcware import AgentMiddleware, before_model, compose, create_agent, wrap_model_call
from funcware.hooks.types import ExtendedModelResponse

b = before_model(name="b")(lambda state: None)
w = wrap_model_call(name="w")(lambda request, handler: handler(request))


class C(AgentMiddleware):
    def after_model(self, state, runtime):
        return None


def model():
    return GenericFakeChatModel(messages=iter([AIMessage("ok")]))


agent = create_agent(model(), middleware=[b, compose(w), C()])
agent.invoke({"messages": [("user", "hi")]})
"""


def _loaded(code: str) -> set[str]:
    return {name for name in loaded_modules(code) if name in COLD}


def test_a_plain_agent_loads_no_cold_steps_module() -> None:
    assert _loaded(PLAIN) == set()


@pytest.mark.parametrize(
    ("code", "modules"),
    [
        (
            "try:\n    agent.invoke(Command(resume='yes'))\nexcept RuntimeError:\n    pass",
            {"funcware.compose.steps.resumes"},
        ),
        (
            "@dataclass\n"
            "class Ctx:\n"
            "    user: str\n"
            "create_agent(model(), context_schema=Ctx).invoke(\n"
            "    {'messages': [('user', 'hi')]}, context=Ctx('u'))",
            {"funcware.compose.steps.contexts"},
        ),
        (
            "c = before_model(name='c')(lambda state: Command(update={'messages': []}))\n"
            "create_agent(model(), middleware=[c]).invoke({'messages': [('user', 'hi')]})",
            {"funcware.compose.steps.node_commands", "funcware.compose.steps.jump_counts"},
        ),
        (
            "j = before_model(name='j', can_jump_to=['end'])(lambda state: {'jump_to': 'end'})\n"
            "create_agent(model(), middleware=[j]).invoke({'messages': [('user', 'hi')]})",
            {"funcware.compose.steps.jump_counts"},
        ),
        (
            "def extended(request, handler):\n"
            "    return ExtendedModelResponse(handler(request), Command(update={'messages': []}))\n"
            "x = wrap_model_call(name='x')(extended)\n"
            "create_agent(model(), middleware=[x]).invoke({'messages': [('user', 'hi')]})",
            {"funcware.compose.wraps.extended", "funcware.compose.wraps.updates"},
        ),
        (
            "class T(AgentMiddleware):\n"
            "    trace_policy = 'omit'\n"
            "    def after_model(self, state, runtime):\n"
            "        return None\n"
            "try:\n"
            "    create_agent(model(), middleware=[T()])\n"
            "except TypeError:\n"
            "    pass",
            {"funcware.compose.steps.tracing_errors"},
        ),
    ],
    ids=["resume", "context", "command", "jump", "extended-response", "trace-policy"],
)
def test_a_rarer_case_loads_its_module(code: str, modules: set[str]) -> None:
    assert modules <= _loaded(PLAIN + code)
