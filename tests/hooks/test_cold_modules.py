"""A plain agent loads none of the hooks' modules for rarer cases; each loads when its case
comes: a declared jump, a feature's option, a hook that declares ``config``, a misuse."""

from __future__ import annotations

import pytest
from fresh_python import loaded_modules

COLD = (
    "funcware.hooks.class_refusals",
    "funcware.hooks.configuring",
    "funcware.hooks.injected",
    "funcware.hooks.jumps",
    "funcware.hooks.locations",
    "funcware.hooks.option_values",
    "funcware.hooks.prompts",
    "funcware.hooks.refusals",
    "funcware.hooks.type_misuse",
)

PLAIN = """
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from funcware import AgentMiddleware, before_model, compose, create_agent, wrap_model_call

b = before_model(name="b")(lambda state: None)
w = wrap_model_call(name="w")(lambda request, handler: handler(request))


class C(AgentMiddleware):
    def after_model(self, state, runtime):
        return None


model = GenericFakeChatModel(messages=iter([AIMessage("ok")]))
agent = create_agent(model, middleware=[b, compose(w), C()])
agent.invoke({"messages": [("user", "hi")]})
"""


def _loaded(code: str) -> set[str]:
    return {name for name in loaded_modules(code) if name in COLD}


def test_a_plain_agent_loads_no_cold_hooks_module() -> None:
    assert _loaded(PLAIN) == set()


@pytest.mark.parametrize(
    ("code", "module"),
    [
        ("before_model(can_jump_to=['end'])(lambda state: None)", "funcware.hooks.jumps"),
        ("before_model(on_error='continue')(lambda state: None)", "funcware.hooks.option_values"),
        (
            "agent = create_agent(GenericFakeChatModel(messages=iter([AIMessage('ok')])), "
            "middleware=[before_model(name='x')(lambda state, config: None)])\n"
            "agent.invoke({'messages': [('user', 'hi')]})",
            "funcware.hooks.injected",
        ),
    ],
    ids=["jump", "feature-option", "injected-config"],
)
def test_a_rarer_case_loads_its_module(code: str, module: str) -> None:
    assert module in _loaded(PLAIN + code)
