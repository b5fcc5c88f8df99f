"""A griffe extension for the API reference: Sphinx roles in docstrings become code.

funcware's docstrings name other objects as ``:func:`name``` (read by ``help()`` and
editors); Markdown has no roles, so the reference shows them as the code span ``name``.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:func|class|meth|attr|mod|data|exc|obj):`~?([^`]+)`")


class SphinxRolesAsCode(griffe.Extension):
    """Rewrite ``:role:`target``` as ``target`` in every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(r"`\1`", obj.docstring.value)
