"""A small wire of the tests' own, to show that adding a wire is one module plus one registry line.

``dialogue-chat`` is the OpenAI chat format with ``dialogue`` in place of ``messages`` and
replies marked ``"object": "dialogue.turn"`` (stream chunks ``"dialogue.turn.chunk"``); it is
served at ``/dialogue/v1/turns``. Built on the OpenAI chat codec's functions, reached only
through ``get_codec``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

import msgspec

from toolwire.codecs import get_codec
from toolwire.codecs.base import Encoded, Note
from toolwire.codecs.detect import Kind
from toolwire.codecs.registry import Wire, WireRules
from toolwire.errors import ProviderError
from toolwire.events import StreamEvent
from toolwire.http.providers import Provider
from toolwire.transcript import OpaquePart, Reply, Request

WIRE = "dialogue-chat"
PATH = "/dialogue/v1/turns"
_chat = get_codec("openai-chat")

STOP_REASONS = _chat.STOP_REASONS
_SWAP = {_chat.WIRE: WIRE, WIRE: _chat.WIRE}
_KEYED = ("provider_data", "provider_options", "file_ids")
"""The fields of the transcript's values that are mappings by wire name."""


def _swapped(value: Any) -> Any:
    """``value`` (a request, a reply, a stream event or what they hold) with the two wires'
    names swapped where they say whose something is (`_KEYED`, an opaque part's
    wire): what the chat codec reads and writes as its own is this wire's, and the chat
    wire's own is another wire's to this one."""
    if isinstance(value, tuple):
        return tuple(_swapped(item) for item in value)
    if isinstance(value, msgspec.Struct):
        changes = {}
        for field in msgspec.structs.fields(value):
            old = getattr(value, field.name)
            if field.name in _KEYED and isinstance(old, Mapping):
                new = {_SWAP.get(key, key): item for key, item in old.items()}
            elif isinstance(value, OpaquePart) and field.name == "wire":
                new = _SWAP.get(old, old)
            elif isinstance(old, msgspec.Struct | tuple):
                new = _swapped(old)
            else:
                continue
            changes[field.name] = new
        return msgspec.structs.replace(value, **changes) if changes else value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{
            f.name: _swapped(getattr(value, f.name)) for f in dataclasses.fields(value)
            if isinstance(getattr(value, f.name), msgspec.Struct | tuple)})
    return value


def _words(text: str) -> str:
    """``text`` of the chat codec with the two wires' names swapped."""
    return WIRE.join(part.replace(WIRE, _chat.WIRE) for part in text.split(_chat.WIRE))


class StreamDecoder:
    """The chat codec's stream decoder, its parts marked as this wire's."""

    def __init__(self, *, request: Request | None = None) -> None:
        self._decoder = _chat.StreamDecoder(request=_swapped(request))

    def feed(self, data: bytes) -> list[StreamEvent]:
        return [_swapped(event) for event in self._decoder.feed(data)]

    def finish(self) -> Reply:
        return _swapped(self._decoder.finish())


def _as_chat(body: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(body)
    if "dialogue" in out:
        out["messages"] = out.pop("dialogue")
    return out


def encode(request: Request) -> Encoded:
    encoded = _chat.encode(_swapped(request))
    body = dict(encoded.body)
    body["dialogue"] = body.pop("messages")
    notes = tuple(Note(kind=n.kind, subject=_words(n.subject), detail=_words(n.detail))
                  for n in encoded.notes)
    return Encoded(body=body, notes=notes, headers=encoded.headers)


def decode_request(
    body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
) -> Request:
    return _swapped(_chat.decode_request(_as_chat(body), model=model, stream=stream))


def decode_response(body: Mapping[str, Any], *, request: Request | None = None) -> Reply:
    return _swapped(_chat.decode_response(body, request=_swapped(request)))


def encode_response(reply: Reply, *, request: Request | None = None) -> dict[str, Any]:
    return {**_chat.encode_response(_swapped(reply), request=_swapped(request)),
            "object": "dialogue.turn"}


def encode_stream(reply: Reply, *, request: Request | None = None) -> list[bytes]:
    return [chunk.replace(b'"chat.completion.chunk"', b'"dialogue.turn.chunk"')
            for chunk in _chat.encode_stream(_swapped(reply), request=_swapped(request))]


def decode_error(
    status: int, body: Any, headers: Mapping[str, str] | None = None
) -> ProviderError:
    return _chat.decode_error(status, body, headers)


def encode_error(status: int, message: str) -> dict[str, Any]:
    return {**_chat.encode_error(status, message), "object": "dialogue.error"}


def check_body(body: dict[str, Any]) -> str | None:
    return _chat.check_body(_as_chat(body))


def recognise(body: Mapping[str, Any]) -> Kind | None:
    if "dialogue" in body:
        return "request"
    if body.get("object") == "dialogue.turn":
        return "response"
    return None


def recognise_stream(head: str, text: str) -> bool:
    return "dialogue.turn.chunk" in head


RECORD = Wire(
    name=WIRE,
    module=__name__,
    path=PATH,
    rules=WireRules(results_by="position", name_pattern=re.compile(r"[a-z_]{1,32}"),
                    name_wording="lowercase letters and '_', at most 32 characters"),
    detect=recognise,
    detect_stream=recognise_stream,
    detect_rank=5,
)
"""The one registry line: ``register_wire(RECORD)``."""

PROVIDER = Provider(name="dialogue", wire=WIRE, base_url="https://dialogue.test",
                    key_vars=("DIALOGUE_KEY",), any_server=True)
"""A provider for it, for a session that registers the wire for every test
(``TOOLWIRE_TEST_WIRES``, tests/conftest.py)."""

LIVE_WRITER = "dialogue_live:DialogueWriter"
"""Where its proxy writer is (tests/dialogue_live.py), for a record that names one."""
