"""One codec per wire format, all with the same functions.

``get_codec(wire)`` returns the codec for a wire name; the wire registry
(`toolwire.codecs.registry`) says which module that is, and the module is imported on first
use. Every codec is pure functions over JSON: no HTTP, no vendor SDK imports.
"""

from __future__ import annotations

import importlib
from typing import cast

from toolwire.codecs.base import Codec, Encoded, Note, WireModule
from toolwire.codecs.registry import WIRES, WireName, get_wire
from toolwire.events import StreamEnd, StreamEvent

_LOADED: dict[str, Codec] = {}  # by codec module path


def get_codec(wire: str) -> Codec:
    """The codec for ``wire``: one of `WIRES`, or a wire added with
    `toolwire.codecs.registry.register_wire`."""
    record = get_wire(wire)  # ValueError naming the registered wires
    codec = _LOADED.get(record.module)  # the usual case: already made
    if codec is None:
        codec = _LOADED[record.module] = Codec(
            cast(WireModule, importlib.import_module(record.module)),
            reasoning=record.reasoning, media_tokens=record.media_tokens,
            examples=record.input_examples,
            callers=record.allowed_callers, managed=record.context_management,
            added_tools=record.added_tools, check_headers=record.check_headers,
            resumable=record.resumable, per_model=record.per_model,
            usual_pass=record.usual_pass,
            freeform=record.freeform_calls)
    return codec


__all__ = [
    "WIRES",
    "Codec",
    "Encoded",
    "Note",
    "StreamEnd",
    "StreamEvent",
    "WireModule",
    "WireName",
    "get_codec",
]
