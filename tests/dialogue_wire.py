"""A small wire of the tests' own, to show that adding a wire is one module plus one registry line.

``dialogue-chat`` is the OpenAI chat format with ``dialogue`` in place of ``messages`` and
replies marked ``"object": "dialogue.turn"``; it is served at ``/dialogue/v1/turns``. Built on
the OpenAI chat codec's functions, reached only through ``get_codec``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from toolwire.codecs import get_codec
from toolwire.codecs.base import Encoded
from toolwire.codecs.detect import Kind
from toolwire.codecs.registry import Wire, WireRules
from toolwire.errors import ProviderError
from toolwire.http.providers import Provider
from toolwire.transcript import Reply, Request

WIRE = "dialogue-chat"
PATH = "/dialogue/v1/turns"
_chat = get_codec("openai-chat")

STOP_REASONS = _chat.STOP_REASONS
StreamDecoder = _chat.StreamDecoder


def _as_chat(body: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(body)
    if "dialogue" in out:
        out["messages"] = out.pop("dialogue")
    return out


def encode(request: Request) -> Encoded:
    encoded = _chat.encode(request)
    body = dict(encoded.body)
    body["dialogue"] = body.pop("messages")
    return Encoded(body=body, notes=encoded.notes)


def decode_request(
    body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
) -> Request:
    return _chat.decode_request(_as_chat(body), model=model, stream=stream)


def decode_response(body: Mapping[str, Any], *, request: Request | None = None) -> Reply:
    return _chat.decode_response(body, request=request)


def encode_response(reply: Reply, *, request: Request | None = None) -> dict[str, Any]:
    return {**_chat.encode_response(reply, request=request), "object": "dialogue.turn"}


def encode_stream(reply: Reply, *, request: Request | None = None) -> list[bytes]:
    return _chat.encode_stream(reply, request=request)


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


RECORD = Wire(
    name=WIRE,
    module=__name__,
    path=PATH,
    rules=WireRules(results_by="position", name_pattern=re.compile(r"[a-z_]{1,32}"),
                    name_wording="lowercase letters and '_', at most 32 characters"),
    detect=recognise,
    detect_rank=5,
)
"""The one registry line: ``register_wire(RECORD)``."""

PROVIDER = Provider(name="dialogue", wire=WIRE, base_url="https://dialogue.test",
                    key_vars=("DIALOGUE_KEY",), any_server=True)
"""A provider for it, for a session that registers the wire for every test
(``TOOLWIRE_TEST_WIRES``, tests/conftest.py)."""

LIVE_WRITER = "dialogue_live:DialogueWriter"
"""Where its proxy writer is (tests/dialogue_live.py), for a record that names one."""
