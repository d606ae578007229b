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
from toolwire.codecs.base import Encoded, NameMap, Note
from toolwire.codecs.detect import Kind
from toolwire.codecs.registry import Wire, WireRules
from toolwire.errors import ProviderError
from toolwire.events import StreamEvent, ToolCallStarted
from toolwire.http.providers import Provider
from toolwire.transcript import (
    OpaquePart,
    Reply,
    Request,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
)

WIRE = "dialogue-chat"
PATH = "/dialogue/v1/turns"
_chat = get_codec("openai-chat")

STOP_REASONS = _chat.STOP_REASONS
_SWAP = {_chat.WIRE: WIRE, WIRE: _chat.WIRE}
_KEYED = ("provider_data", "provider_options", "file_ids")
"""The fields of the transcript's values that are mappings by wire name."""


def _swapped(value: Any, names: Mapping[str, str] | None = None) -> Any:
    """``value`` (a request, a reply, a stream event or what they hold) with the two wires'
    names swapped where they say whose something is (`_KEYED`, an opaque part's wire): what
    the chat codec reads and writes as its own is this wire's, and the chat wire's own is
    another wire's to this one. ``names`` renames tools (a tool, a call, a result, the tool
    choice, a stream's call)."""
    if isinstance(value, tuple):
        return tuple(_swapped(item, names) for item in value)
    if isinstance(value, msgspec.Struct):
        changes = {}
        for field in msgspec.structs.fields(value):
            old = getattr(value, field.name)
            if field.name in _KEYED and isinstance(old, Mapping):
                new = {_SWAP.get(key, key): item for key, item in old.items()}
            elif isinstance(value, OpaquePart) and field.name == "wire":
                new = _SWAP.get(old, old)
            elif field.name == "name" and isinstance(old, str) and isinstance(value, _NAMED):
                new = (names or {}).get(old, old)
            elif isinstance(old, msgspec.Struct | tuple):
                new = _swapped(old, names)
            else:
                continue
            changes[field.name] = new
        return msgspec.structs.replace(value, **changes) if changes else value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _swapped(getattr(value, f.name), names)
                   for f in dataclasses.fields(value)
                   if isinstance(getattr(value, f.name), msgspec.Struct | tuple)}
        if isinstance(value, ToolCallStarted):
            changes["name"] = (names or {}).get(value.name, value.name)
        return dataclasses.replace(value, **changes)
    return value


_NAMED = (ToolSpec, ToolCallPart, ToolResultPart, ToolChoice)
"""The transcript's values whose ``name`` is a tool's."""
_NAME_RULE = re.compile(r"[a-z_]{1,32}")


def _name_map(request: Request | None) -> NameMap:
    """The names this wire's rule takes for ``request``'s tools: lower case, every other
    character ``_``, at most 32 characters, made unique with letters."""
    to_wire: dict[str, str] = {}
    if request is None:
        return NameMap(to_wire, {})
    taken = {t.name for t in request.tools if _NAME_RULE.fullmatch(t.name)}
    for tool in request.tools:
        if tool.name in taken:
            continue
        base = re.sub(r"[^a-z_]", "_", tool.name.lower())[:32] or "tool"
        candidate, n = base, 0
        while candidate in taken:
            n += 1
            candidate = base[:27] + "_" + "".join(chr(97 + int(d)) for d in f"{n:04d}")
        to_wire[tool.name] = candidate
        taken.add(candidate)
    return NameMap(to_wire, {v: k for k, v in to_wire.items()})


def _words(text: str) -> str:
    """``text`` of the chat codec with the two wires' names swapped."""
    return WIRE.join(part.replace(WIRE, _chat.WIRE) for part in text.split(_chat.WIRE))


class StreamDecoder:
    """The chat codec's stream decoder, its parts marked as this wire's and its calls under
    the user's tool names."""

    def __init__(self, *, request: Request | None = None) -> None:
        names = _name_map(request)
        self._back = names.from_wire
        self._decoder = _chat.StreamDecoder(request=_swapped(request, names.to_wire))

    def feed(self, data: bytes) -> list[StreamEvent]:
        return [_swapped(event, self._back) for event in self._decoder.feed(data)]

    def finish(self) -> Reply:
        return _swapped(self._decoder.finish(), self._back)


def _as_chat(body: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(body)
    if "dialogue" in out:
        out["messages"] = out.pop("dialogue")
    return out


def encode(request: Request) -> Encoded:
    names = _name_map(request)
    encoded = _chat.encode(_swapped(request, names.to_wire))
    body = dict(encoded.body)
    body["dialogue"] = body.pop("messages")
    notes = (*names.notes(), *(Note(kind=n.kind, subject=_words(n.subject),
                                    detail=_words(n.detail)) for n in encoded.notes))
    return Encoded(body=body, notes=notes, headers=encoded.headers)


def decode_request(
    body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
) -> Request:
    return _swapped(_chat.decode_request(_as_chat(body), model=model, stream=stream))


def decode_response(body: Mapping[str, Any], *, request: Request | None = None) -> Reply:
    names = _name_map(request)
    return _swapped(_chat.decode_response(body, request=_swapped(request, names.to_wire)),
                    names.from_wire)


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
    rules=WireRules(results_by="position", name_pattern=_NAME_RULE,
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
