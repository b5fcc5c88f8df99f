"""A griffe extension for the API reference: docstrings written for ``help()`` read well
as Markdown too.

- Sphinx roles (``:func:`name```) become the code span ``name`` (Markdown has no roles);
- an ``Options:`` block (the hook decorators') becomes a list, one item per option;
- an RST literal-block marker (``Example::``) loses its second colon;
- a hook decorator's options come from the registry (``funcware.hooks.options``), the one
  source its validation and ``help()`` use too.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:func|class|meth|attr|mod|data|exc|obj):`~?([^`]+)`")
OPTIONS = re.compile(r"^Options:\n((?:    .*\n?)+)", re.MULTILINE)
ITEM = re.compile(r"^    (\S[^:]*): ", re.MULTILINE)


def _options(match: re.Match[str]) -> str:
    """``Options:`` and its indented ``name: text`` lines, as a Markdown list."""
    items = re.split(r"\n(?=    \S)", match.group(1).rstrip("\n"))
    lines = []
    for item in items:
        text = " ".join(part.strip() for part in item.splitlines())
        lines.append(ITEM.sub(lambda m: f"- `{m.group(1)}`: ", "    " + text, count=1))
    return "Options:\n\n" + "\n".join(lines) + "\n"


def _registered_options(obj: griffe.Object) -> str:
    """A hook decorator's ``Options:`` block, written from the registry (with every feature
    registered, as ``import funcware`` leaves it)."""
    if not obj.is_function or not obj.path.startswith("funcware"):
        return ""
    import funcware  # noqa: F401 - registers the features' options
    from funcware.hooks.options import DECORATORS, options_for

    if obj.name not in DECORATORS:
        return ""
    lines = [f"    {o.name}: {o.help}" for o in options_for(obj.name)]
    return "\n\nOptions:\n" + "\n".join(lines) + "\n" if lines else ""


class HelpTextAsMarkdown(griffe.Extension):
    """Rewrite each docstring griffe loads as the module docstring above says."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is None:
            return
        text = ROLE.sub(r"`\1`", obj.docstring.value) + _registered_options(obj)
        text = OPTIONS.sub(_options, text)
        obj.docstring.value = re.sub(r"^(\w[\w ]*)::$", r"\1:", text, flags=re.MULTILINE)
