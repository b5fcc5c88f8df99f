"""Run code in a fresh interpreter, optionally one in which ``langchain`` cannot be imported.

A finder placed first on ``sys.meta_path`` records and refuses every ``langchain`` /
``langchain.*`` import, so an attempt is seen even where it would be caught.
:func:`loaded_modules` runs code and reads what it left in ``sys.modules``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

BLOCK_LANGCHAIN = """
import sys
from importlib.abc import MetaPathFinder

TRIED = []


class NoLangChain(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "langchain" or name.startswith("langchain."):
            TRIED.append(name)
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        return None


sys.meta_path.insert(0, NoLangChain())
"""


def run_python(code: str, *, block: bool = False) -> dict[str, object]:
    """Run ``code`` in a fresh interpreter (after :data:`BLOCK_LANGCHAIN` if ``block``).

    The code prints one JSON object as its last line, which is returned.
    """
    source = (BLOCK_LANGCHAIN if block else "") + textwrap.dedent(code)
    done = subprocess.run(
        [sys.executable, "-c", source],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


REPORT_MODULES = """
import json as _json
import sys as _sys

print(_json.dumps({name: getattr(m, "__file__", None) for name, m in list(_sys.modules.items())}))
"""


def loaded_modules(code: str) -> dict[str, str | None]:
    """Every module in ``sys.modules`` after ``code`` ran in a fresh interpreter, with its file.

    A module without a file (built in, a namespace package, one put there by hand) maps to None.
    """
    found = run_python(textwrap.dedent(code) + REPORT_MODULES)
    return {name: None if file is None else str(file) for name, file in found.items()}
