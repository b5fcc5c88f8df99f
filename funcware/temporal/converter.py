"""A Temporal data converter that keeps LangChain messages and langgraph commands typed.

The plugin sends a node's arguments and result as ``Any``. Temporal's JSON converter would
turn every message into a plain dict on the other side (and a node's ``Command`` or
``Send`` too), so the activity would see ``state["messages"]`` as dicts. This converter
writes LangChain's serializable objects with ``langchain_core.load.dumpd`` and reads them
back with ``langchain_core.load.load`` (core classes only), and tags ``Command`` and
``Send``; other dataclasses are written field by field, as Temporal's converter does.
Give it to the client of every worker and starter: ``Client.connect(...,
data_converter=data_converter)``.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from typing import Any

from langchain_core.load import dumpd, load
from langchain_core.load.serializable import Serializable
from langgraph.types import Command, Send
from temporalio.converter import (
    AdvancedJSONEncoder,
    CompositePayloadConverter,
    DataConverter,
    DefaultPayloadConverter,
    JSONPlainPayloadConverter,
)

__all__ = ["LangChainPayloadConverter", "data_converter"]

_KIND = "__funcware_langgraph__"


class _ReadableCommand(Command):  # type: ignore[type-arg]
    """A ``Command`` the plugin may also index (``output.langgraph_command["goto"]``)."""

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)


class _Encoder(AdvancedJSONEncoder):
    def default(self, o: Any) -> Any:
        if isinstance(o, Serializable) and o.is_lc_serializable():
            return dumpd(o)
        if isinstance(o, Command):
            fields = {f.name: getattr(o, f.name) for f in dataclasses.fields(o)}
            return {_KIND: "Command", **fields}
        if isinstance(o, Send):
            return {_KIND: "Send", "node": o.node, "arg": o.arg}
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            return {f.name: getattr(o, f.name) for f in dataclasses.fields(o)}
        if isinstance(o, type):  # an interrupt's schema given as a class: its name
            return f"{o.__module__}.{o.__qualname__}"
        return super().default(o)


def _revive(value: dict[str, Any]) -> Any:
    kind = value.get(_KIND)
    if kind == "Command":
        fields = {k: v for k, v in value.items() if k != _KIND}
        if isinstance(fields.get("goto"), list):
            fields["goto"] = tuple(fields["goto"])
        return _ReadableCommand(**fields)
    if kind == "Send":
        return Send(value["node"], value["arg"])
    if value.get("lc") == 1 and value.get("type") == "constructor" and "id" in value:
        with warnings.catch_warnings():  # langchain_core.load is marked beta
            warnings.simplefilter("ignore")
            return load(value, allowed_objects="core")
    return value


class _Decoder(json.JSONDecoder):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("object_hook", _revive)
        super().__init__(*args, **kwargs)


class LangChainPayloadConverter(CompositePayloadConverter):
    """Temporal's default payload converters, the JSON one keeping LangChain types."""

    def __init__(self) -> None:
        converters = [
            JSONPlainPayloadConverter(encoder=_Encoder, decoder=_Decoder)
            if isinstance(converter, JSONPlainPayloadConverter)
            else converter
            for converter in DefaultPayloadConverter.default_encoding_payload_converters
        ]
        super().__init__(*converters)


data_converter = DataConverter(payload_converter_class=LangChainPayloadConverter)
"""The data converter for every client that starts or serves funcware agents."""
