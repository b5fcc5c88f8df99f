"""Small helpers that keep error messages grammatical: articles and plurals."""

from __future__ import annotations

import inspect

__all__ = ["a", "plural", "returned"]

_VOWEL_SOUNDS = ("a", "e", "i", "o", "u")
_CONSONANT_SOUND_EXCEPTIONS = ("uni", "use", "one")


def a(noun: str) -> str:
    """``noun`` with its article: ``a("dict")`` gives ``"a dict"``, ``a("AIMessage")`` an "an"."""
    word = noun.lstrip("`'\"@").lower()
    vowel = word.startswith(_VOWEL_SOUNDS) and not word.startswith(_CONSONANT_SOUND_EXCEPTIONS)
    return f"{'an' if vowel else 'a'} {noun}"


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``"1 response"``, ``"2 responses"``."""
    return f"{count} {noun if count == 1 else (plural_form or noun + 's')}"


def returned(value: object, *, handler: bool = True) -> str:
    """What a hook returned, in words, with the likely fix for the usual slips (``handler``:
    a wrap's, which it may have forgotten to call or to return the result of)."""
    if value is None:
        return "None (did you forget to `return handler(request)`?)" if handler else "None"
    if handler and (inspect.ismethod(value) or inspect.isfunction(value)):
        name = getattr(value, "__qualname__", type(value).__name__)
        return (
            f"the function {name} instead of a result: a wrap that returns `handler` "
            "without calling it does this (did you mean `return handler(request)`?)"
        )
    if inspect.iscoroutine(value):
        value.close()  # never awaited: close it so Python does not warn a second time
        return (
            "a coroutine: it called an async function without awaiting it. Make the hook "
            "`async def` and `await` the call (e.g. `return await handler(request)`)"
        )
    return a(type(value).__name__)
