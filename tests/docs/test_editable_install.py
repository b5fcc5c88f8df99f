"""An editable install (``pip install -e .``, packaging/backend.py) shows the repository's
own files: modules' ``__file__`` and traceback frames are under the repository root, never
a copy or link tree under ``build/``; and the path type checkers follow holds only
``funcware``. Checks the install this suite runs in; installs nothing.

Skipped when funcware is not installed in editable mode from this checkout;
``FUNCWARE_REQUIRE_EDITABLE=1`` (CI) makes that a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Run from a folder outside the repository, so the checkout itself is not on sys.path
# (nor its funcware.egg-info, which would stand in for the installed metadata).
PROBE = """
import json, traceback
from importlib.metadata import distribution
import funcware.hooks.decorators as decorators
from funcware import before_model, create_agent
from funcware.testing import ScriptedChatModel

@before_model
def refuse(state):
    raise PermissionError("refused")

agent = create_agent(ScriptedChatModel(responses=["hi"]), middleware=[refuse])
try:
    agent.invoke({"messages": [("user", "hello")]})
except PermissionError as error:
    frames = [frame.filename for frame in traceback.extract_tb(error.__traceback__)]
dist = distribution("funcware")
pth = [str(f.locate()) for f in dist.files or [] if f.name.endswith(".pth")]
print(json.dumps({
    "direct_url": json.loads(dist.read_text("direct_url.json") or "{}"),
    "pth": [open(p, encoding="utf-8").read() for p in pth],
    "decorators": decorators.__file__,
    "frames": frames,
}))
"""


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What a program outside the repository sees of the installed funcware."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=tmp_path_factory.mktemp("outside"),
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    found: dict[str, Any] = json.loads(run.stdout)
    direct = found["direct_url"]
    if not (
        direct.get("dir_info", {}).get("editable")
        and direct.get("url", "").endswith(ROOT.as_posix())
    ):
        reason = "funcware is not installed in editable mode from this checkout (pip install -e .)"
        if os.environ.get("FUNCWARE_REQUIRE_EDITABLE") == "1":
            pytest.fail(f"FUNCWARE_REQUIRE_EDITABLE=1 but {reason}")
        pytest.skip(reason)
    return found


def _is_under(path: str, folder: Path) -> bool:
    return Path(path).is_relative_to(folder)


def test_modules_and_traceback_frames_are_the_repositorys_files(seen: dict[str, Any]) -> None:
    assert seen["decorators"] == str(ROOT / "hooks" / "decorators.py")
    frames = seen["frames"]
    assert frames[-1] == "<string>"  # the hook itself
    assert any(_is_under(f, ROOT / "compose") for f in frames), frames
    assert not [f for f in frames if "__editable__" in f or "/build/" in f], frames


def test_the_path_type_checkers_follow_holds_only_funcware(seen: dict[str, Any]) -> None:
    (text,) = seen["pth"]
    lines = text.splitlines()
    paths = [line for line in lines if line and not line.startswith(("#", "import"))]
    assert len(paths) == 1, lines
    linked = Path(paths[0])
    assert [p.name for p in linked.iterdir()] == ["funcware"]
    assert (linked / "funcware").resolve() == ROOT / "funcware"
    assert (linked / "funcware" / "py.typed").is_file()
