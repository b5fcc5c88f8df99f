"""Where a middleware class is defined (``file:line``), for error messages and tooling."""

from __future__ import annotations

import inspect
import sys

from funcware.hooks.middleware import _CLASS_WHERE


def class_where(cls: type) -> str:
    """A class's ``file:line``, from its code objects (never its source): the class
    statement's line where Python records it (3.13+), else its first function's."""
    found = _CLASS_WHERE.get(cls)
    if found is None:
        module = sys.modules.get(cls.__module__)
        file = getattr(module, "__file__", None)
        line = getattr(cls, "__firstlineno__", None)
        if line is None:
            lines = [
                code.co_firstlineno
                for value in vars(cls).values()
                if (code := getattr(_function_of(value), "__code__", None)) is not None
                and code.co_filename == file
            ]
            line = min(lines, default=None)
        if file is None:
            found = f"{cls.__module__}.{cls.__qualname__}"
        else:
            found = f"{file}:{line}" if line is not None else file
        _CLASS_WHERE[cls] = found
    return found


def _function_of(value: object) -> object:
    """The plain function behind a class attribute (a method, static or class method)."""
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    return inspect.unwrap(value) if callable(value) else value
