"""Merging state schemas, and the input/output schemas without omitted or private fields."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, TypeVar, cast, get_args, get_origin
from weakref import WeakKeyDictionary, WeakValueDictionary

from langgraph.channels.base import BaseChannel
from langgraph.channels.binop import BinaryOperatorAggregate
from langgraph.channels.delta import DeltaChannel
from langgraph.channels.topic import Topic
from typing_extensions import NotRequired, Required, TypedDict, get_type_hints

from funcware.hooks.adapters import adapters
from funcware.hooks.types import AgentState, OmitFromSchema

__all__ = [
    "declarations",
    "field_metadata",
    "input_output_schemas",
    "merge_schemas",
    "native_fields",
    "reducer_keys",
    "strip_required",
    "type_hints",
]


_HINTS: WeakKeyDictionary[type, dict[str, Any]] = WeakKeyDictionary()
_evaluated = partial(get_type_hints, include_extras=True)


def type_hints(schema: type) -> dict[str, Any]:
    """``get_type_hints(schema, include_extras=True)``, evaluated once per class (string
    annotations are most of the cost of building an agent)."""
    return _once(_HINTS, schema, _evaluated)


def native_fields(schema: type) -> dict[str, Any]:
    """A state schema's fields in funcware's terms (a new dict), another library's schema
    rewritten by its registered adapter (``funcware.interop``)."""
    hints = dict(type_hints(schema))
    for adapter in adapters():
        adapted = adapter.fields(schema, hints)
        if adapted is not None:
            return adapted
    return hints


def strip_required(annotation: Any) -> Any:
    while get_origin(annotation) in (Required, NotRequired):
        annotation = get_args(annotation)[0]
    return annotation


def field_metadata(annotation: Any) -> tuple[Any, ...]:
    annotation = strip_required(annotation)
    return tuple(getattr(annotation, "__metadata__", ()))


def _is_reducer(item: object) -> bool:
    if not callable(item) or inspect.isclass(item):
        return False
    try:
        params = inspect.signature(item).parameters
    except (TypeError, ValueError):
        return False
    positional = [
        p for p in params.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return len(positional) == 2


_ACCUMULATING = (BinaryOperatorAggregate, DeltaChannel, Topic)
"""Channels that fold every write of a step, like a reducer (others keep one value)."""


def _accumulates(item: object) -> bool:
    if isinstance(item, BaseChannel) or (inspect.isclass(item) and issubclass(item, BaseChannel)):
        return isinstance(item, _ACCUMULATING) or (
            inspect.isclass(item) and issubclass(item, _ACCUMULATING)
        )
    return _is_reducer(item)


_REDUCER_KEYS: WeakKeyDictionary[type, frozenset[str]] = WeakKeyDictionary()
_IN_OUT: WeakKeyDictionary[type, tuple[type, type]] = WeakKeyDictionary()
_MERGED: WeakValueDictionary[tuple[object, ...], type] = WeakValueDictionary()
"""Worked out once per class (a merged schema once per list of schemas)."""


_T = TypeVar("_T")


def _once(cache: WeakKeyDictionary[type, _T], schema: type, work: Callable[[type], _T]) -> _T:
    """``cache[schema]``, worked out by ``work(schema)`` the first time."""
    try:
        found = cache.get(schema)
    except TypeError:  # not weak-referenceable: work it out every time
        return work(schema)
    if found is None:
        found = cache[schema] = work(schema)
    return found


def reducer_keys(schema: type) -> frozenset[str]:
    """State keys that take several writes per step: a reducer or an accumulating channel."""
    return _once(_REDUCER_KEYS, schema, _reducer_keys)


def _reducer_keys(schema: type) -> frozenset[str]:
    keys = {
        key
        for key, ann in native_fields(schema).items()
        if any(map(_accumulates, field_metadata(ann)))
    }
    return frozenset({"messages", *keys})


def declarations(schema: type) -> dict[str, tuple[Any, bool]]:
    """Each field's type (without ``Required``/``NotRequired``) and whether it is required
    (the wrapper says so, else the class: ``total=False``)."""
    required_keys: frozenset[str] | None = getattr(schema, "__required_keys__", None)
    declared: dict[str, tuple[Any, bool]] = {}
    for key, annotation in native_fields(schema).items():
        wrapper = get_origin(annotation)
        if wrapper in (Required, NotRequired):
            required = wrapper is Required
        else:
            required = required_keys is None or key in required_keys
        declared[key] = (strip_required(annotation), required)
    return declared


def merge_schemas(
    owned: Sequence[tuple[object, type]], *, name: str = "AgentState", winner: type | None = None
) -> type[AgentState[Any]]:
    """One TypedDict with ``AgentState``'s fields and those of every ``(owner, schema)``.

    Two types of one field merge when one holds the other (or is a ``TypeVar``); else the
    later wins, with a ``StateSchemaConflictWarning`` naming both owners. A field is required
    only if every owner requires it; ``winner`` (``create_agent``'s ``state_schema``)
    overrides each field it declares, as in LangChain. The same schemas give the same class.
    """
    key = (name, winner, *(schema for _, schema in owned))
    try:
        found = _MERGED.get(key)
    except TypeError:  # an unhashable schema: merge every time
        key, found = (), None
    if found is not None:
        return cast("type[AgentState[Any]]", found)
    declaring = [(owner, schema) for owner, schema in owned if schema is not AgentState]
    if declaring or winner is not None:
        from funcware.compose.graph.merging import merged_declarations

        merged, conflicted = merged_declarations(declaring, winner)
    else:
        merged, conflicted = declarations(AgentState), False
    fields = {
        key: annotation if required else NotRequired[annotation]
        for key, (annotation, required) in merged.items()
    }
    schema: type = TypedDict(name, fields)  # type: ignore[misc]
    if key and not conflicted:  # a conflict is warned about on every build
        _MERGED[key] = schema
    return cast("type[AgentState[Any]]", schema)


def _omitted(annotation: Any, side: str) -> bool:
    return any(
        isinstance(item, OmitFromSchema) and getattr(item, side)
        for item in field_metadata(annotation)
    )


def input_output_schemas(schema: type) -> tuple[type, type]:
    """``(input_schema, output_schema)``: ``schema`` without its omitted/private fields."""
    return _once(_IN_OUT, schema, _input_output)


def _input_output(schema: type) -> tuple[type, type]:
    fields = native_fields(schema)
    inputs = {k: a for k, a in fields.items() if not _omitted(a, "input")}
    outputs = {k: a for k, a in fields.items() if not _omitted(a, "output")}
    name = getattr(schema, "__name__", "AgentState")
    return (
        TypedDict(f"{name}Input", inputs),  # type: ignore[operator]
        TypedDict(f"{name}Output", outputs),  # type: ignore[operator]
    )
