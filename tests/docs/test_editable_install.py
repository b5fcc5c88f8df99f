"""An editable install (``pip install -e .``, setuptools' default mode) imports funcware from
this checkout: the package's folder is the repository's ``funcware/``, so an edited or added
module is used without reinstalling; modules' ``__file__`` and traceback frames are the
repository's files (``hooks/``, ``compose/`` and ``cookbook/`` through their links in
``funcware/``), never a copy under ``build/`` or site-packages; and no other folder of the
checkout becomes importable. Checks the install this suite runs in; installs nothing.

Type checkers do not follow setuptools' editable installs, so nothing here checks them;
``.ci/run`` type-checks a user's file against the installed wheel.

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

# The checkout's other top-level folders, none of which an install may expose.
OTHER_FOLDERS = ("hooks", "compose", "cookbook", "tests", "bench", "deploy", "docs")

# Run from a folder outside the repository, so the checkout itself is not on sys.path
# (nor its funcware.egg-info, which would stand in for the installed metadata).
PROBE = """
import importlib.util, json, sys, traceback
from importlib.metadata import distribution
import funcware
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
others = {}
for name in sys.argv[1:]:
    spec = importlib.util.find_spec(name)
    places = [] if spec is None else [spec.origin, *(spec.submodule_search_locations or [])]
    others[name] = [str(place) for place in places if place]
print(json.dumps({
    "direct_url": json.loads(distribution("funcware").read_text("direct_url.json") or "{}"),
    "package_path": list(funcware.__path__),
    "decorators": decorators.__file__,
    "frames": frames,
    "others": others,
}))
"""


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What a program outside the repository sees of the installed funcware."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run(
        [sys.executable, "-c", PROBE, *OTHER_FOLDERS],
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


def _in_checkout(path: str) -> bool:
    """A file of the checkout itself, reached without a copy or link tree under build/."""
    where = Path(path)
    return where.is_relative_to(ROOT) and not where.is_relative_to(ROOT / "build")


def test_the_package_is_the_repositorys_funcware_folder(seen: dict[str, Any]) -> None:
    # Python looks up every funcware module in this folder, so one added there imports at once.
    assert [Path(p).resolve() for p in seen["package_path"]] == [ROOT / "funcware"]
    assert _in_checkout(seen["package_path"][0])


def test_modules_and_traceback_frames_are_the_repositorys_files(seen: dict[str, Any]) -> None:
    assert _in_checkout(seen["decorators"])
    assert Path(seen["decorators"]).resolve() == ROOT / "hooks" / "decorators.py"
    frames = seen["frames"]
    assert frames[-1] == "<string>"  # the hook itself
    files = [f for f in frames if Path(f).is_absolute()]  # not the probe's "<string>"
    ours = [f for f in files if Path(f).resolve().is_relative_to(ROOT)]
    assert any(Path(f).resolve().is_relative_to(ROOT / "compose") for f in ours), frames
    assert all(_in_checkout(f) for f in ours), frames
    copies = [f for f in files if "/funcware/" in f and not _in_checkout(f)]
    assert copies == [], frames


def test_no_other_folder_of_the_checkout_is_importable(seen: dict[str, Any]) -> None:
    exposed = {
        name: places
        for name, places in seen["others"].items()
        if any(Path(place).resolve().is_relative_to(ROOT) for place in places)
    }
    assert exposed == {}
