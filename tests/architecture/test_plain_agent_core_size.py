"""A plain agent loads at most 5,000 lines of funcware, all of them funcware's own files.

A fresh interpreter builds and runs the plain agent the performance guide measures (a
decorated ``before_model`` and ``wrap_model_call``, one ``compose()``, one class middleware
with ``after_model``, a fake chat model, one ``invoke``); every module then in ``sys.modules``
named ``funcware`` or ``funcware.*`` is counted by the lines of its file.
"""

from __future__ import annotations

import functools
from pathlib import Path

from fresh_python import loaded_modules

import funcware

FRONT = Path(funcware.__file__).resolve().parent
ROOT = FRONT.parent
MAX_LINES = 5_000
"""The figure docs/guides/performance.md gives ("What a plain agent loads")."""

PLAIN_AGENT = """
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage

from funcware import AgentMiddleware, before_model, compose, create_agent, wrap_model_call


@before_model
def b(state):
    return None


@wrap_model_call
def w(request, handler):
    return handler(request)


class C(AgentMiddleware):
    def after_model(self, state, runtime):
        return None


model = GenericFakeChatModel(messages=iter([AIMessage("ok")]))
agent = create_agent(model, middleware=[b, compose(w), C()])
agent.invoke({"messages": [HumanMessage("hi")]})
"""


@functools.cache
def _funcware_files() -> dict[str, str | None]:
    """The funcware modules the plain agent left loaded, with their files (run once)."""
    return {
        name: file
        for name, file in loaded_modules(PLAIN_AGENT).items()
        if name == "funcware" or name.startswith("funcware.")
    }


def _lines(file: str) -> int:
    return len(Path(file).read_text(encoding="utf-8").splitlines())


def test_every_module_a_plain_agent_loads_is_a_file_of_this_package() -> None:
    files = _funcware_files()
    assert Path(files["funcware"] or "").resolve().parent == FRONT, (
        f"the fresh interpreter imported funcware from {files['funcware']}, not {FRONT}"
    )
    strangers = {
        name: file
        for name, file in files.items()
        if file is None
        or not file.endswith(".py")
        or not Path(file).is_relative_to(FRONT)
        or not Path(file).resolve().is_relative_to(ROOT)
    }
    assert not strangers, f"modules that are not files of funcware under {FRONT}: {strangers}"


def test_a_plain_agent_loads_at_most_5000_lines_of_funcware() -> None:
    sizes = {name: _lines(file) for name, file in _funcware_files().items() if file is not None}
    total = sum(sizes.values())
    largest = sorted(sizes.items(), key=lambda item: item[1], reverse=True)[:10]
    assert total <= MAX_LINES, (
        f"a plain agent loads {total:,} lines of funcware in {len(sizes)} modules, over the "
        f"{MAX_LINES:,} the docs promise (docs/guides/performance.md states the figure; "
        "docs/architecture.md, 'What a plain run loads', says how the core keeps to it). "
        "New code on a plain agent's path must bring its own cut, or move to a module "
        "loaded only where it is needed. Largest modules:\n"
        + "\n".join(f"  {lines:>5}  {name}" for name, lines in largest)
    )
