"""One codec per wire format, all with the same functions.

``get_codec(wire)`` returns the codec module for a wire name; modules are imported on first
use. Every codec is pure functions over JSON: no HTTP, no vendor SDK imports.
"""

from __future__ import annotations

import importlib
from typing import cast

from toolwire.codecs.base import WIRES, Codec, Encoded, Note, WireModule, WireName
from toolwire.events import StreamEnd, StreamEvent

_MODULES: dict[str, str] = {
    "anthropic-messages": "anthropic_messages.codec",
    "openai-chat": "openai_chat.codec",
    "openai-responses": "openai_responses.codec",
    "ollama-chat": "ollama_chat.codec",
    "gemini-generate": "gemini_generate.codec",
}

_LOADED: dict[str, Codec] = {}


def get_codec(wire: str) -> Codec:
    """The codec for ``wire``, one of `WIRES`."""
    codec = _LOADED.get(wire)  # the usual case: already made
    if codec is not None:
        return codec
    try:
        module = _MODULES[wire]
    except KeyError:
        raise ValueError(
            f"unknown wire {wire!r}; choose one of: {', '.join(WIRES)}"
        ) from None
    loaded = importlib.import_module(f"{__name__}.{module}")
    codec = _LOADED[wire] = Codec(cast(WireModule, loaded))
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
