"""The build backend: setuptools', with editable installs that show the repository's own files.

``pip install -e .`` asks for an editable wheel. setuptools offers two modes, and neither
serves both people who read funcware's code through an install:

- the default (an import finder) imports the repository's files, but mypy and pyright
  cannot see a finder, so ``mypy --strict`` on a user's file would not find funcware;
- ``strict`` (a link tree under ``build/`` on ``sys.path``) is seen by type checkers, but
  every module's ``__file__``, every traceback and every debugger shows the link tree's
  path (``build/__editable__.../funcware/...``), so a click in an editor opens a path
  that is not the repository's.

This backend's editable wheel holds one ``.pth`` file with two lines, one for each:

1. a path line naming a generated directory, ``build/__editable__.funcware/``, that holds
   nothing but a symlink ``funcware`` to the repository's ``funcware/``. Type checkers read
   ``.pth`` path lines (and skip ``import`` lines), so they follow it like any installed
   package; being a symlink, it has every module, new ones included;
2. an ``import`` line that puts a small finder (``__editable___funcware_finder``) first on
   ``sys.meta_path``. It finds ``funcware`` in the repository and each of its modules at
   its file's real path (the ``funcware/hooks`` symlink resolved too), so Python imports
   ``<repo>/funcware/__init__.py`` and ``<repo>/hooks/decorators.py`` — the files you
   edit, which tracebacks, debuggers and ``__file__`` then show. It handles no other
   name, and works only while modules are imported.

The wheel's metadata is setuptools' own. Where symlinks cannot be made (Windows without
developer mode), or when the caller chose a mode with ``--config-settings
editable_mode=...``, setuptools builds the editable wheel as usual (``strict`` by
default). A module added later needs no reinstall. Every other hook is setuptools' own.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 - the other PEP 517/660 hooks, unchanged

PACKAGE = "funcware"
FINDER = "__editable___funcware_finder"
"""Named as setuptools names its finders, so tools that know those (pytest's assertion
rewriting skips them; griffe reads their ``MAPPING``) treat this one alike."""
TAG = "py3-none-any"

# The finder module the wheel installs; ROOT is the repository, filled in at build time.
FINDER_SOURCE = '''\
"""Imports funcware from the repository {root!r} (an editable install).

Written by funcware's build backend (packaging/backend.py in the repository): funcware
and its submodules are found in the real directories behind their symlinks, so
tracebacks and debuggers show the repository's own files.
"""

import os
import sys
from importlib.machinery import PathFinder
from importlib.util import spec_from_file_location

ROOT = {root!r}
MAPPING = {{"funcware": {package!r}}}  # the package's directory, as setuptools' finders say it


class EditableFinder:
    """Finds ``funcware`` in ROOT, and each of its modules where its file really is."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != "funcware" and not name.startswith("funcware."):
            return None
        # sys.path decides which funcware, as for a plain install: another checkout earlier
        # on it (PYTHONPATH, the current directory) is left to the normal import system
        spec = PathFinder.find_spec(name, path)
        if spec is None or spec.origin is None:
            return None
        real = os.path.realpath(spec.origin)
        if not real.startswith(ROOT + os.sep):
            return None
        if real == spec.origin:
            return spec
        package = [os.path.dirname(real)] if spec.submodule_search_locations is not None else None
        return spec_from_file_location(name, real, submodule_search_locations=package)


def install():
    if EditableFinder not in sys.meta_path:
        sys.meta_path.insert(0, EditableFinder)
'''


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """An editable wheel whose imports resolve to the repository's files (see above)."""
    settings = dict(config_settings or {})
    root = Path.cwd().resolve()
    if "editable_mode" in settings or not _link_package(root):
        settings.setdefault("editable_mode", "strict")
        return _setuptools.build_editable(wheel_directory, settings, metadata_directory)
    with tempfile.TemporaryDirectory() as scratch:
        if metadata_directory is None:
            metadata_directory = os.path.join(
                scratch, _setuptools.prepare_metadata_for_build_editable(scratch, settings)
            )
        return _write_wheel(Path(wheel_directory), Path(metadata_directory), root)


def _link_package(root: Path) -> bool:
    """Make ``build/__editable__.funcware/funcware`` a symlink to ``root/funcware``."""
    linked = root / "build" / f"__editable__.{PACKAGE}"
    shutil.rmtree(linked, ignore_errors=True)
    linked.mkdir(parents=True)
    try:
        (linked / PACKAGE).symlink_to(root / PACKAGE, target_is_directory=True)
    except OSError:
        return False
    return True


def _write_wheel(wheel_directory: Path, metadata: Path, root: Path) -> str:
    """Zip the ``.pth``, the finder and setuptools' metadata into a PEP 660 wheel."""
    dist_info = metadata.name  # funcware-<version>.dist-info
    version = dist_info.removesuffix(".dist-info").split("-", 1)[1]
    files: dict[str, bytes] = {
        f"__editable__.{PACKAGE}-{version}.pth": (
            f"{root / 'build' / f'__editable__.{PACKAGE}'}\nimport {FINDER}; {FINDER}.install()\n"
        ).encode(),
        f"{FINDER}.py": FINDER_SOURCE.format(root=str(root), package=str(root / PACKAGE)).encode(),
    }
    for path in sorted(metadata.rglob("*")):
        if path.is_file() and path.name not in ("RECORD", "WHEEL"):
            files[f"{dist_info}/{path.relative_to(metadata).as_posix()}"] = path.read_bytes()
    files[f"{dist_info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: funcware-backend\nRoot-Is-Purelib: true\nTag: {TAG}\n"
    ).encode()
    record = [f"{name},{_digest(data)},{len(data)}" for name, data in files.items()]
    files[f"{dist_info}/RECORD"] = "\n".join([*record, f"{dist_info}/RECORD,,", ""]).encode()
    name = f"{PACKAGE}-{version}-{TAG}.whl"
    with zipfile.ZipFile(wheel_directory / name, "w", zipfile.ZIP_DEFLATED) as wheel:
        for member, data in files.items():
            wheel.writestr(member, data)
    return name


def _digest(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"sha256={digest.decode()}"
