"""Packaging: the installed version, and what setuptools builds from this checkout: the wheel
``pip install .`` installs, and the sdist with the wheel built from it. Each holds every module
under ``funcware/`` (``hooks/``, ``compose/`` and ``cookbook/`` through their links, every
sub-package included) as a real file with the checkout's content, and nothing else.

The builds run offline with the setuptools installed here (the ``test`` extra asks for the
version ``pyproject.toml`` builds with), from a copy of the sources in a temporary folder.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import funcware

ROOT = Path(__file__).resolve().parents[2]

# What a build reads: the metadata, and the package with the folders its links point at.
SOURCES = ("pyproject.toml", "README.md", "funcware", "hooks", "compose", "cookbook")


def test_funcware_has_the_installed_version() -> None:
    from importlib.metadata import version

    assert funcware.__version__ == version("funcware")


def _ships(path: str) -> bool:
    """A file the package is made of: a module, or the ``py.typed`` marker."""
    return path.endswith(".py") or path.rpartition("/")[2] == "py.typed"


def _package_files() -> dict[str, bytes]:
    """Every module (and ``py.typed``) under funcware/, following its links, by wheel path."""
    found: dict[str, bytes] = {}
    for folder, subfolders, names in os.walk(ROOT / "funcware", followlinks=True):
        subfolders[:] = [name for name in subfolders if name != "__pycache__"]
        for name in names:
            if _ships(name):
                path = Path(folder) / name
                found[path.relative_to(ROOT).as_posix()] = path.read_bytes()
    return found


def _copy_sources(to: Path) -> Path:
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    to.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, to / name, symlinks=True, ignore=skip)
        else:
            shutil.copy2(ROOT / name, to / name)
    return to


def _build(kind: str, project: Path, out: Path) -> Path:
    """Run setuptools' PEP 517 hook ``build_<kind>`` in ``project``; the file it wrote."""
    hook = f"import sys; from setuptools import build_meta; build_meta.build_{kind}(sys.argv[1])"
    run = subprocess.run(
        [sys.executable, "-c", hook, str(out)], cwd=project, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    (built,) = out.glob("*.whl" if kind == "wheel" else "*.tar.gz")
    return built


def _wheel_files(wheel: Path) -> dict[str, bytes]:
    """The wheel's files outside its .dist-info, by path; none may be a link."""
    files: dict[str, bytes] = {}
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            if info.filename.split("/")[0].endswith(".dist-info"):
                continue
            assert not stat.S_ISLNK(info.external_attr >> 16), info.filename
            files[info.filename] = archive.read(info)
    return files


@pytest.fixture(scope="module")
def package_files() -> dict[str, bytes]:
    found = _package_files()
    assert "funcware/py.typed" in found and "funcware/hooks/decorators.py" in found
    assert "funcware/compose/graph/__init__.py" in found  # the links were followed
    return found


def test_the_wheel_holds_every_module_as_a_real_file(
    tmp_path: Path, package_files: dict[str, bytes]
) -> None:
    project = _copy_sources(tmp_path / "project")
    wheel = _build("wheel", project, tmp_path / "dist")

    assert _wheel_files(wheel) == package_files


def test_the_sdist_holds_real_files_and_builds_the_same_wheel(
    tmp_path: Path, package_files: dict[str, bytes]
) -> None:
    project = _copy_sources(tmp_path / "project")
    sdist = _build("sdist", project, tmp_path / "sdist")
    unpacked = tmp_path / "unpacked"
    in_package: dict[str, bytes] = {}
    with tarfile.open(sdist) as archive:
        for member in archive.getmembers():
            assert not (member.issym() or member.islnk()), member.name
            if not member.isfile():
                continue
            content = archive.extractfile(member)
            assert content is not None
            data = content.read()
            path = member.name.split("/", 1)[1]  # below funcware-<version>/
            (unpacked / path).parent.mkdir(parents=True, exist_ok=True)
            (unpacked / path).write_bytes(data)
            if path.startswith("funcware/") and _ships(path):
                in_package[path] = data
    assert in_package == package_files

    wheel = _build("wheel", unpacked, tmp_path / "dist")

    assert _wheel_files(wheel) == package_files
