"""The OpenAI Chat Completions wire (``POST /v1/chat/completions``) and the servers copying it.

One codec serves OpenAI, OpenRouter, vLLM, llama.cpp, LM Studio, Ollama's ``/v1``, DeepSeek,
Mistral, Groq and other compatible servers: it encodes strictly what the API documents and decodes
leniently what those servers really send (see the private ``_openai_chat_*`` modules for each
half). OpenRouter's ``reasoning_details`` (and the ``reasoning`` / ``reasoning_content`` strings
other servers use) are kept exactly on a `ReasoningPart` and sent back only to this wire.

Owns the codec surface every wire shares: `encode`, `encode_request`, `decode_request`,
`decode_response`, `encode_response`, `encode_stream`, `stream_decoder`, `decode_stream` and
`decode_error`. Pure functions: no HTTP, no vendor SDK; must not import transport or client code.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from toolwire.codecs.base import drive_stream, provider_error, retry_after_from
from toolwire.codecs.openai_chat.parts import (
    STOP_REASONS,
    WIRE,
    decode_body,
    encode_usage,
    finish_reason_of,
    mapping,
    name_map,
    plain,
    reply_extras,
    reply_id,
    reply_message,
    string,
)
from toolwire.codecs.openai_chat.request import check_body, decode_request, encode
from toolwire.codecs.openai_chat.stream import ChatStreamDecoder, encode_stream, error_from_chunk
from toolwire.errors import ContextLengthError, ProviderError
from toolwire.events import StreamEvent
from toolwire.transcript import Reply, Request

__all__ = [
    "STOP_REASONS",
    "WIRE",
    "ChatStreamDecoder",
    "check_body",
    "decode_error",
    "decode_request",
    "decode_response",
    "decode_stream",
    "encode",
    "encode_error",
    "encode_request",
    "encode_response",
    "encode_stream",
    "stream_decoder",
]


def encode_request(request: Request) -> dict[str, Any]:
    """The request body alone (see `encode` for the notes)."""
    return encode(request).body


def decode_response(body: Mapping[str, Any], *, request: Request | None = None) -> Reply:
    """A reply body as a `Reply`; with ``request``, tool names map back to the user's names.

    A body holding only an ``error`` (some gateways answer 200 with one) raises that error.
    """
    if body.get("error") is not None and not body.get("choices"):
        raise error_from_chunk(body)
    return decode_body(body, request)


def encode_response(reply: Reply, *, request: Request | None = None) -> dict[str, Any]:
    """A `Reply` as the non-streamed body a Chat Completions server returns."""
    names = name_map(request.tools) if request is not None else None
    top, choice_extras = reply_extras(reply)
    return {
        "id": reply_id(reply),
        "object": "chat.completion",
        "created": 0,
        "model": reply.model or "",
        **top,
        "choices": [{
            "index": 0,
            "message": reply_message(reply, names),
            "finish_reason": finish_reason_of(reply),
            "logprobs": None,
            **choice_extras,
        }],
        "usage": encode_usage(reply.usage),
    }


def stream_decoder(*, request: Request | None = None) -> ChatStreamDecoder:
    """An incremental decoder: ``feed(bytes) -> events``, then ``finish() -> Reply``."""
    return ChatStreamDecoder(request=request)


def decode_stream(
    chunks: Iterable[bytes], *, request: Request | None = None
) -> Iterator[StreamEvent]:
    """Stream events for the chunks, ending with `StreamEnd`."""
    return drive_stream(ChatStreamDecoder(request=request), chunks)


def _parse(body: Any) -> Any:
    if isinstance(body, bytes | bytearray):
        body = bytes(body).decode("utf-8", errors="replace")
    if isinstance(body, str):
        try:
            return json.loads(body)
        except json.JSONDecodeError:
            return body
    return plain(body)


def decode_error(
    status: int, body: Any, headers: Mapping[str, str] | None = None
) -> ProviderError:
    """The typed error for an HTTP error reply (OpenAI's or OpenRouter's shape, or plain text)."""
    data = _parse(body)
    message = ""
    kind: str | None = None
    code: Any = None
    if isinstance(data, Mapping):
        err = data.get("error")
        if isinstance(err, Mapping):
            meta = mapping(err.get("metadata"))
            code = err.get("code")
            message = string(err.get("message"))
            kind = next((v for v in (err.get("type"), code, meta.get("error_type"))
                         if isinstance(v, str) and v), None)
            raw = meta.get("raw")
            if isinstance(raw, str) and raw and raw not in message:
                message = f"{message} ({raw})" if message else raw
        elif isinstance(err, str):
            message = err
        elif isinstance(data.get("message"), str):
            message = data["message"]
            kind = data.get("type") if isinstance(data.get("type"), str) else None
        elif data.get("detail") is not None:
            detail = data["detail"]
            message = detail if isinstance(detail, str) else json.dumps(detail)
    elif isinstance(data, str):
        message = data.strip()[:1000]
    message = message or f"HTTP {status} with no error message"
    retry_after = retry_after_from(headers)
    error = provider_error(status, message, wire=WIRE, error_type=kind, body=data,
                           retry_after=retry_after)
    if (isinstance(code, str) and "context_length" in code
            and not isinstance(error, ContextLengthError)):
        error = ContextLengthError(message, status=status, error_type=kind, wire=WIRE, body=data,
                                   retry_after=retry_after)
    if "insufficient_quota" in (kind, code):
        error.retryable = False  # out of credit: waiting will not help
    return error

StreamDecoder = ChatStreamDecoder


_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error",
                404: "invalid_request_error", 429: "rate_limit_exceeded", 500: "server_error",
                503: "server_error"}


def encode_error(status: int, message: str) -> dict[str, Any]:
    """An error body as this wire's server sends it for ``status``."""
    return {"error": {"message": message, "type": _ERROR_TYPES.get(status, "server_error"),
                      "param": None, "code": "rate_limit_exceeded" if status == 429 else None}}
