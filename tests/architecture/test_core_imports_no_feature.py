"""The core never imports a feature: features plug into the core's seams, never the reverse.

The core is ``funcware.hooks`` and ``funcware.compose`` (the card's folders) with
``funcware.errors``, ``funcware.compat``, ``funcware.messages`` and ``funcware.tools``. Every
import statement in a core module is read from its source — at module level, inside a
function, or under ``TYPE_CHECKING`` — and none may name a feature package.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import funcware

FRONT = Path(funcware.__file__).resolve().parent
ROOT = FRONT.parent
CORE_FOLDERS = {"funcware.hooks": ROOT / "hooks", "funcware.compose": ROOT / "compose"}
CORE_MODULES = ("errors", "compat", "messages", "tools")
FEATURES = (
    "funcware.effects",
    "funcware.guards",
    "funcware.policies",
    "funcware.pairing",
    "funcware.nodes",
    "funcware.runs",
    "funcware.observe",
    "funcware.structured",
    "funcware.structured_output",
    "funcware.explain",
    "funcware.interop",
    "funcware.temporal",
    "funcware.testing",
    "funcware.cookbook",
)


def core_files() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package, folder in CORE_FOLDERS.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    for name in CORE_MODULES:
        path = FRONT / f"{name}.py"
        if path.exists():
            found[f"funcware.{name}"] = path
    return found


def imported(module: str, path: Path) -> list[tuple[int, str]]:
    """Every module an import statement in ``path`` names, resolved to absolute names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            names.append((node.lineno, target))
            names += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, (ast.Attribute, ast.Name))
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.append((node.lineno, str(node.args[0].value)))
    return names


def is_feature(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FEATURES)


def test_no_core_module_imports_a_feature_package() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for module, path in core_files().items()
        for line, name in imported(module, path)
        if is_feature(name)
    ]
    assert not found, "the core imports features:\n" + "\n".join(found)


def test_the_core_is_read_from_the_card_folders() -> None:
    files = core_files()
    assert "funcware.compose.agent" in files and "funcware.hooks.decorators" in files
    assert all(not is_feature(module) for module in files)


DEFAULT_ON = ("funcware.pairing",)
"""Features every agent uses unless told not to: the tool-call pairing check
(``tool_pairing="off"`` turns it off, and then it loads nothing)."""

PLAIN_AGENT = (
    "import sys\n"
    "from funcware import before_model, compose, create_agent, wrap_model_call\n"
    "from funcware import AgentMiddleware\n"
    "from langchain_core.language_models.fake_chat_models import GenericFakeChatModel\n"
    "from langchain_core.messages import AIMessage\n"
    "b = before_model(name='b')(lambda state: None)\n"
    "w = wrap_model_call(name='w')(lambda request, handler: handler(request))\n"
    "class C(AgentMiddleware):\n"
    "    def after_model(self, state, runtime):\n"
    "        return None\n"
    "model = GenericFakeChatModel(messages=iter([AIMessage('ok')]))\n"
    "agent = create_agent(model, middleware=[b, compose(w), C()]{options})\n"
    "agent.invoke({{'messages': [('user', 'hi')]}})\n"
    "print('\\n'.join(sorted(sys.modules)))\n"
)


def _heavy_feature_modules(options: str) -> list[str]:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", PLAIN_AGENT.format(options=options)],
        capture_output=True,
        text=True,
        cwd=ROOT.parent,
        check=True,
    )
    loaded = [name for name in done.stdout.split() if is_feature(name)]
    return [name for name in loaded if name.count(".") > 1]


def test_a_plain_agent_loads_no_feature_module() -> None:
    """Building and running an agent that uses no feature imports none of their modules."""
    heavy = [m for m in _heavy_feature_modules("") if not m.startswith(DEFAULT_ON)]
    assert not heavy, f"a plain agent loaded feature modules: {heavy}"


def test_an_agent_with_the_default_features_off_loads_none() -> None:
    heavy = _heavy_feature_modules(", tool_pairing='off'")
    assert not heavy, f"an agent with tool_pairing='off' loaded feature modules: {heavy}"
