"""Packaging: the installed version, and the editable wheel ``packaging/backend.py`` builds
(links the package, loads the real files, falls back to setuptools' strict mode).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import funcware

_REPO = str(Path(__file__).resolve().parents[2])


# -- the version ------------------------------------------------------------------


def test_funcware_has_the_installed_version() -> None:
    from importlib.metadata import version

    assert funcware.__version__ == version("funcware")


def _backend() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "funcware_build_backend", os.path.join(_REPO, "packaging", "backend.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fake_metadata(directory: str, settings: Any = None) -> str:
    """What setuptools' metadata hook leaves: a dist-info folder; its name is returned."""
    info = os.path.join(directory, "funcware-9.9.dist-info")
    os.makedirs(info)
    for name, text in (("METADATA", "Name: funcware\nVersion: 9.9\n"), ("RECORD", "stale")):
        with open(os.path.join(info, name), "w") as file:
            file.write(text)
    return "funcware-9.9.dist-info"


def test_an_editable_wheel_links_the_package_and_loads_the_real_files(
    monkeypatch: Any, tmp_path: Any
) -> None:
    import zipfile

    with open(os.path.join(_REPO, "pyproject.toml")) as file:
        pyproject = file.read()
    assert 'build-backend = "backend"\nbackend-path = ["packaging"]' in pyproject
    backend = _backend()
    project, wheels = tmp_path / "project", tmp_path / "wheels"
    (project / "funcware").mkdir(parents=True)
    (project / "funcware" / "__init__.py").write_text("")
    wheels.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setattr(backend._setuptools, "prepare_metadata_for_build_editable", _fake_metadata)
    name = backend.build_editable(str(wheels))
    assert name == "funcware-9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheels / name) as wheel:
        files = {member: wheel.read(member).decode() for member in wheel.namelist()}
    linked = project / "build" / "__editable__.funcware"
    assert os.listdir(linked) == ["funcware"]
    assert (linked / "funcware").resolve() == (project / "funcware").resolve()
    pth = files["__editable__.funcware-9.9.pth"].splitlines()
    assert pth == [
        str(linked),
        "import __editable___funcware_finder; __editable___funcware_finder.install()",
    ]
    assert f"ROOT = {str(project)!r}" in files["__editable___funcware_finder.py"]
    assert files["funcware-9.9.dist-info/METADATA"].startswith("Name: funcware")
    record = files["funcware-9.9.dist-info/RECORD"].splitlines()
    assert {line.split(",")[0] for line in record} == set(files)
    assert "Tag: py3-none-any" in files["funcware-9.9.dist-info/WHEEL"]
    assert backend.build_wheel is backend._setuptools.build_wheel  # the rest is setuptools'


def test_an_editable_wheel_falls_back_to_setuptools_strict_mode(
    monkeypatch: Any, tmp_path: Any
) -> None:
    from pathlib import Path

    backend = _backend()
    seen: list[Any] = []
    monkeypatch.setattr(
        backend._setuptools, "build_editable", lambda *args: seen.append(args) or "x.whl"
    )
    monkeypatch.chdir(tmp_path)
    # A mode the caller chose is setuptools' to build.
    assert backend.build_editable("dist", {"editable_mode": "compat"}) == "x.whl"

    def no_symlinks(*args: Any, **kwargs: Any) -> None:
        raise OSError("symbolic links are not available")

    monkeypatch.setattr(Path, "symlink_to", no_symlinks)
    assert backend.build_editable("dist") == "x.whl"
    assert [args[1] for args in seen] == [{"editable_mode": "compat"}, {"editable_mode": "strict"}]


def test_the_editable_finder_finds_each_module_at_its_real_path(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = _backend()
    real = tmp_path.resolve() / "repo"
    (real / "funcware").mkdir(parents=True)
    (real / "funcware" / "__init__.py").write_text("")
    (real / "hooks").mkdir()
    (real / "hooks" / "__init__.py").write_text("")
    (real / "hooks" / "decorators.py").write_text("")
    (real / "funcware" / "hooks").symlink_to("../hooks", target_is_directory=True)
    namespace: dict[str, Any] = {}
    exec(backend.FINDER_SOURCE.format(root=str(real), package=str(real / "funcware")), namespace)
    finder = namespace["EditableFinder"]
    monkeypatch.syspath_prepend(str(real))  # as the .pth puts the link directory on it
    top = finder.find_spec("funcware")
    assert top.origin == str(real / "funcware" / "__init__.py")
    hooks = finder.find_spec("funcware.hooks", top.submodule_search_locations)
    assert hooks.origin == str(real / "hooks" / "__init__.py")
    assert list(hooks.submodule_search_locations) == [str(real / "hooks")]
    leaf = finder.find_spec("funcware.hooks.decorators", hooks.submodule_search_locations)
    assert leaf.origin == str(real / "hooks" / "decorators.py")
    assert finder.find_spec("hooks") is None and finder.find_spec("funcwarex") is None


def test_the_editable_finder_leaves_a_funcware_earlier_on_sys_path_alone(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = _backend()
    namespace: dict[str, Any] = {}
    repo = tmp_path.resolve() / "repo"
    exec(backend.FINDER_SOURCE.format(root=str(repo), package=str(repo / "funcware")), namespace)
    other = tmp_path.resolve() / "other"
    (other / "funcware").mkdir(parents=True)
    (other / "funcware" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(other))  # another checkout: PYTHONPATH, the current folder
    assert namespace["EditableFinder"].find_spec("funcware") is None  # the plain import takes it
