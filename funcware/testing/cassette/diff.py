"""A readable account of how a live request differs from a recorded one."""

from __future__ import annotations

import difflib
import json
from typing import Any

__all__ = ["changes", "distance", "explain"]

_SHORT = 70


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _SHORT else text[: _SHORT - 3] + "..."


def _message_changes(recorded: list[Any], live: list[Any]) -> list[str]:
    found = []
    if len(recorded) != len(live):
        found.append(f"messages: {len(recorded)} recorded, {len(live)} now")
    for index, (old, new) in enumerate(zip(recorded, live, strict=False)):
        if old == new:
            continue
        label = f"messages[{index}] ({new.get('type', '?')})"
        for field in sorted(set(old) | set(new)):
            if old.get(field) != new.get(field):
                found.append(
                    f"{label} {field}: {_short(old.get(field))} -> {_short(new.get(field))}"
                )
    return found


def _tool_changes(recorded: list[Any], live: list[Any]) -> list[str]:
    def by_name(tools: list[Any]) -> dict[str, Any]:
        return {str(t.get("function", t).get("name")): t for t in tools}

    old, new = by_name(recorded), by_name(live)
    found = [f"tools: {name!r} added" for name in new if name not in old]
    found += [f"tools: {name!r} removed" for name in old if name not in new]
    found += [
        f"tools: {name!r} schema changed" for name in new if old.get(name, new[name]) != new[name]
    ]
    if not found and recorded != live:
        found.append("tools: order changed")
    return found


def changes(recorded: dict[str, Any], live: dict[str, Any]) -> list[str]:
    """One line per difference, naming the part that changed and its old and new value."""
    found = _message_changes(recorded.get("messages", []), live.get("messages", []))
    found += _tool_changes(recorded.get("tools", []), live.get("tools", []))
    if recorded.get("tool_choice") != live.get("tool_choice"):
        found.append(
            f"tool_choice: {_short(recorded.get('tool_choice'))} -> "
            f"{_short(live.get('tool_choice'))}"
        )
    old, new = recorded.get("settings", {}), live.get("settings", {})
    for name in sorted(set(old) | set(new)):
        if old.get(name) != new.get(name):
            before = _short(old[name]) if name in old else "(absent)"
            after = _short(new[name]) if name in new else "(absent)"
            found.append(f"settings.{name}: {before} -> {after}")
    for name in sorted(set(recorded) ^ set(live)):
        found.append(f"{name}: only in the {'recording' if name in recorded else 'live call'}")
    return found


def _lines(value: Any) -> list[str]:
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False).splitlines()


def distance(recorded: Any, live: Any) -> float:
    """How unalike two requests are (0: equal), to pick the recording nearest a call."""
    return 1.0 - difflib.SequenceMatcher(None, _lines(recorded), _lines(live)).ratio()


def explain(recorded: Any, live: Any, *, limit: int = 60) -> str:
    """The changes, then a unified diff (recorded -> live) cut at ``limit`` lines."""
    summary = changes(recorded, live) if isinstance(recorded, dict) else []
    diff = list(
        difflib.unified_diff(_lines(recorded), _lines(live), "recorded", "live", n=2, lineterm="")
    )
    if len(diff) > limit:
        diff = [*diff[:limit], f"... ({len(diff) - limit} more diff lines)"]
    return "\n".join([*(f"  - {line}" for line in summary), *diff])
