"""The ``anthropic-messages`` codec: canonical values <-> Anthropic's ``POST /v1/messages``.

Owns this wire's public codec surface: request encode/decode (with notes for every change
made to fit the wire), reply decode/encode, the SSE stream both ways, and error bodies. The
work is split over private modules: ``_anthropic_blocks`` (content blocks, ids, usage, stop
reasons, whole replies), ``_anthropic_request`` (request bodies), ``_anthropic_schema`` (tool
schema rewrites) and ``_anthropic_stream`` (events). Pure functions over JSON: must not import
HTTP, transports, clients or any vendor SDK.

Wire rules kept here: tool arguments travel as objects; thinking and redacted-thinking blocks
are kept whole in ``ReasoningPart.provider_data["anthropic-messages"]`` and sent back
verbatim and in order; server-tool blocks become `OpaquePart`; tool results go first in the
next user message with ``is_error``; ``max_tokens`` is required; tool names must match
``^[a-zA-Z0-9_-]{1,128}$`` and ids ``^[a-zA-Z0-9_-]+$`` (others are mapped, with a note).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from toolwire.codecs.anthropic_messages import parts as _blocks
from toolwire.codecs.anthropic_messages.request import (
    DEFAULT_MAX_TOKENS,
    check_body,
    decode_request,
    encode,
)
from toolwire.codecs.anthropic_messages.stream import ERROR_STATUS, StreamDecoder, encode_stream
from toolwire.codecs.base import drive_stream, provider_error, retry_after_from
from toolwire.errors import ProviderError
from toolwire.events import StreamEvent
from toolwire.transcript import Reply, Request, StopReason

WIRE: str = _blocks.WIRE
STOP_REASONS: dict[str, StopReason] = dict(_blocks.STOP_REASONS)

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "ERROR_STATUS",
    "STOP_REASONS",
    "WIRE",
    "StreamDecoder",
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
    """The request body alone; use `encode` to also get the notes on what was changed."""
    return encode(request).body


def decode_response(body: Mapping[str, Any], *, request: Request | None = None) -> Reply:
    """A non-streamed reply body as a `Reply`; with ``request``, tool names map back."""
    return _blocks.decode_reply(body, nm=_blocks.ToolNames(request))


def encode_response(reply: Reply, *, request: Request | None = None) -> dict[str, Any]:
    """A `Reply` as the API's non-streamed reply body."""
    model = request.model if request is not None else ""
    return _blocks.encode_reply(reply, nm=_blocks.name_map(request), model=model)


def stream_decoder(*, request: Request | None = None) -> StreamDecoder:
    return StreamDecoder(request=request)


def decode_stream(
    chunks: Iterable[bytes], *, request: Request | None = None
) -> Iterator[StreamEvent]:
    """Events as the bytes arrive, ending with ``StreamEnd(reply)``."""
    return drive_stream(StreamDecoder(request=request), chunks)


def decode_error(status: int, body: Any, headers: Mapping[str, str] | None = None) -> ProviderError:
    """The typed error for an error response: ``{"type":"error","error":{"type","message"}}``."""
    parsed: Any = body
    if isinstance(parsed, bytes | bytearray):
        parsed = parsed.decode("utf-8", errors="replace")
    if isinstance(parsed, str):
        with contextlib.suppress(json.JSONDecodeError):
            parsed = json.loads(parsed)
    error_type: str | None = None
    message = ""
    if isinstance(parsed, Mapping):
        err = parsed.get("error")
        if isinstance(err, Mapping):
            kind = err.get("type")
            error_type = kind if isinstance(kind, str) else None
            message = str(err.get("message") or "")
        elif isinstance(err, str):
            message = err
        message = message or str(parsed.get("message") or "")
    elif isinstance(parsed, str):
        message = parsed.strip()[:500]
    if not message:
        message = f"HTTP {status}" + (f" ({error_type})" if error_type else "")
    error = provider_error(status, message, wire=WIRE, error_type=error_type, body=parsed,
                           retry_after=retry_after_from(headers))
    should_retry = {k.lower(): v for k, v in (headers or {}).items()}.get("x-should-retry")
    if should_retry in ("true", "false"):
        error.retryable = should_retry == "true"
    return error


_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 429: "rate_limit_error", 500: "api_error",
                529: "overloaded_error"}


def encode_error(status: int, message: str) -> dict[str, Any]:
    """An error body as this wire's server sends it for ``status``."""
    return {"type": "error", "error": {"type": _ERROR_TYPES.get(status, "api_error"),
                                       "message": message},
            "request_id": "req_emulator"}
