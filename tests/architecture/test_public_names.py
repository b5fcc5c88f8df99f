"""Every public name has one home, and every exception prints with a public path.

An exception raised to a user names a module they can import it from
(``funcware.errors.InvalidJumpError``, never a private ``funcware.compose.steps...``);
names that moved keep working from their old import path, with a deprecation warning.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys

import pytest

import funcware
from funcware.errors import FuncwareDeprecationWarning

PUBLIC = (
    "funcware",
    "funcware.errors",
    "funcware.hooks",
    "funcware.testing",
    "funcware.structured_output",
    "funcware.observe",
    "funcware.effects",
    "funcware.policies",
    "funcware.runs",
    "funcware.guards",
    "funcware.interop",
    "funcware.explain",
    "funcware.temporal",
)


def every_module() -> list[str]:
    names = ["funcware"]
    for info in pkgutil.walk_packages(funcware.__path__, "funcware."):
        if ".cookbook" in info.name or info.name.endswith(("__main__", "pytest_plugin")):
            continue
        if info.name.startswith(("funcware.observe.otel", "funcware.interop.langchain")):
            continue  # need optional extras
        names.append(info.name)
    return names


def optional(name: str) -> object | None:
    """The module ``name``, or ``None`` when it needs an extra that is not installed."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as missing:
        if (missing.name or "").split(".")[0] in ("temporalio", "opentelemetry"):
            return None
        raise


def test_every_exception_class_prints_with_a_public_module() -> None:
    private = []
    for name in every_module():
        module = optional(name)
        if module is None:
            continue
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, (Exception, Warning))
                and value.__module__.startswith("funcware")
                and value.__module__ not in PUBLIC
                and not value.__name__.startswith("_")
            ):
                private.append(f"{value.__module__}.{value.__qualname__}")
    internal = {
        "funcware.effects.ordering.CycleError",  # caught inside the order check
    }
    assert sorted(set(private) - internal) == []


def test_every_public_exception_is_importable_where_it_says_it_lives() -> None:
    for name in PUBLIC:
        module = importlib.import_module(name)
        for attribute in getattr(module, "__all__", ()):
            try:
                value = getattr(module, attribute)
            except ImportError:  # a name that needs an extra not installed here
                continue
            if inspect.isclass(value) and issubclass(value, (Exception, Warning)):
                home = importlib.import_module(value.__module__)
                assert getattr(home, value.__name__) is value, f"{name}.{attribute}"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("funcware.hooks", "funcware.errors"),  # HookTimeoutError
        ("funcware.compose", "funcware.errors"),  # InvalidJumpError
    ],
)
def test_a_moved_name_still_imports_from_its_old_home_with_a_deprecation(
    old: str, new: str
) -> None:
    name = "HookTimeoutError" if old == "funcware.hooks" else "InvalidJumpError"
    package = importlib.import_module(old)
    with pytest.warns(FuncwareDeprecationWarning, match=f"import it from {new} instead"):
        value = getattr(package, name)
    assert value is getattr(importlib.import_module(new), name)


def test_exceptions_are_importable_from_funcware_and_funcware_errors() -> None:
    from funcware import errors

    for name in errors.__all__:
        assert getattr(funcware, name) is getattr(errors, name), name
        assert getattr(errors, name).__module__ == "funcware.errors"


def test_explain_still_explains_after_its_module_was_imported() -> None:
    # A fresh interpreter: importing the module first makes it the package's attribute.
    code = """
import funcware.explain
from funcware import before_model, explain
explanation = explain([before_model(lambda state: None)])
assert isinstance(explanation, funcware.explain.Explanation), explanation
print("before_model" in str(explanation))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
