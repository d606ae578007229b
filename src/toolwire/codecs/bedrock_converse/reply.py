"""Bedrock Converse: whole replies both ways, stop reasons, usage and error bodies.

Owns `decode_response` and `encode_response` (``{"output": {"message"}, "stopReason", "usage",
"metrics"}`` <-> `Reply`), the ``stopReason`` map (`STOP_REASONS`), the usage arithmetic (the
prompt total counts cache reads and writes; whether ``inputTokens`` already holds them is read
from ``totalTokens``), and error bodies (`decode_error`, `encode_error`, `ERROR_STATUS`: the
status each exception type comes with; the type arrives in the ``x-amzn-ErrorType`` header or
the body's ``__type``). Pure functions over JSON. Imports only `toolwire.transcript`,
`toolwire.errors`, `toolwire.codecs.base` and this wire's ``parts``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.codecs.base import (
    AWS_RETRIED,
    aws_error_type,
    error_body,
    provider_error,
    retry_after_from,
    status_in_words,
)
from toolwire.codecs.bedrock_converse.parts import (
    WIRE,
    IdRewriter,
    Names,
    call_block,
    content_seed,
    name_map,
    obj,
    opaque_block,
    parts_from_blocks,
    reasoning_block,
    text_block,
)
from toolwire.errors import ProviderError
from toolwire.transcript import (
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    Reply,
    Request,
    StopReason,
    TextPart,
    ToolCallPart,
    Usage,
)

STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_calls",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
    "malformed_model_output": "error",
    "malformed_tool_use": "tool_call_failed",
    "model_context_window_exceeded": "context_window_exceeded",
}
"""Every ``stopReason`` the API sends, normalised. Unknown values decode as ``"other"``."""

_STOP_TO_WIRE = {v: k for k, v in reversed(STOP_REASONS.items())} | {
    "tool_calls": "tool_use", "content_filter": "content_filtered", "refusal": "content_filtered"}
_CUT_OFF = ("max_tokens", "model_context_window_exceeded")
_REPLY_KEYS = frozenset({"output", "stopReason", "usage", "metrics"})
_USAGE_KEYS = frozenset({"inputTokens", "outputTokens", "totalTokens", "cacheReadInputTokens",
                         "cacheWriteInputTokens"})


# --------------------------------------------------------------------------- usage and stop


def _count(raw: Mapping[str, Any], key: str) -> int:
    value = raw.get(key)
    return value if type(value) is int and value >= 0 else 0


def decode_usage(raw: Any) -> Usage:
    if not isinstance(raw, Mapping):
        return Usage()
    given, output = _count(raw, "inputTokens"), _count(raw, "outputTokens")
    read, write = _count(raw, "cacheReadInputTokens"), _count(raw, "cacheWriteInputTokens")
    total = raw.get("totalTokens")
    prompt = given + read + write  # inputTokens without the cache, as Anthropic counts
    if type(total) is int and total == given + output and (read or write):
        prompt = given  # this total says inputTokens already held the cache counts
    return Usage(input_tokens=prompt, output_tokens=output, cache_read_tokens=read,
                 cache_write_tokens=write)


def usage_body(usage: Usage, extras: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "inputTokens": max(0, usage.input_tokens - usage.cache_read_tokens
                           - usage.cache_write_tokens),
        "outputTokens": usage.output_tokens,
        "totalTokens": usage.input_tokens + usage.output_tokens,
    }
    if usage.cache_read_tokens or usage.cache_write_tokens:
        out["cacheReadInputTokens"] = usage.cache_read_tokens
        out["cacheWriteInputTokens"] = usage.cache_write_tokens
    if isinstance(extras, Mapping):
        out.update({k: copy.deepcopy(v) for k, v in extras.items() if k not in out})
    return out


def decode_stop(raw: Any, parts: Sequence[Part]) -> tuple[StopReason, bool]:
    """The normalised stop, and whether a call was cut off by a limit."""
    known: StopReason | None = STOP_REASONS.get(raw) if isinstance(raw, str) else None
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    if calls and raw in _CUT_OFF:
        broken = any(c.parse_error is not None or c.arguments is None for c in calls)
        if broken or isinstance(parts[-1], ToolCallPart):
            return (known or "max_tokens"), True
    if calls and known != "tool_call_failed":
        return "tool_calls", False
    if raw is None or known == "tool_calls":
        return "end_turn", False
    return (known or "other"), False


def stop_to_wire(reply: Reply) -> str:
    if reply.raw_stop in STOP_REASONS:
        return reply.raw_stop
    if reply.message.tool_calls and not reply.truncated_call:
        return "tool_use"
    return _STOP_TO_WIRE.get(reply.stop, "end_turn")


# --------------------------------------------------------------------------- whole replies


def _seed(content: Any) -> str:
    """The seed of generated call ids: hashed only when a call came without its id."""
    for block in content if type(content) is list else ():
        call = block.get("toolUse") if type(block) is dict else None
        if type(call) is dict and not call.get("toolUseId"):
            return content_seed(content)
    return ""


def decode_reply(body: Mapping[str, Any], *, nm: Names) -> Reply:
    body = obj(body, "the reply")
    output = obj({} if body.get("output") is None else body["output"], "output")
    message = obj({} if output.get("message") is None else output["message"], "output",
                  "message")
    content = message.get("content")
    parts = parts_from_blocks(content, nm=nm, seed=_seed(content),
                              path=("output", "message", "content"))
    raw = body.get("stopReason")
    stop, truncated = decode_stop(raw, parts)
    extras = {k: copy.deepcopy(v) for k, v in body.items()
              if k not in _REPLY_KEYS and v is not None}
    usage = body.get("usage")
    if isinstance(usage, Mapping) and not usage.keys() <= _USAGE_KEYS:
        extras["usage"] = {k: copy.deepcopy(v) for k, v in usage.items() if k not in _USAGE_KEYS}
    return Reply(
        message=Message(role="assistant", parts=tuple(parts)),
        stop=stop,
        raw_stop=raw if isinstance(raw, str) else None,
        usage=decode_usage(usage),
        truncated_call=truncated,
        provider_data={WIRE: extras} if extras else None,
    )


def reply_blocks(reply: Reply, *, nm: Names) -> list[dict[str, Any]]:
    """A reply's parts as the blocks the API would have sent (others' blocks left out)."""
    ids = IdRewriter(None)
    blocks: list[dict[str, Any]] = []
    for part in reply.message.parts:
        block: dict[str, Any] | None = None
        if isinstance(part, ReasoningPart):
            block = reasoning_block(part) or {"reasoningContent": {
                "reasoningText": {"text": part.text}}}
        elif isinstance(part, TextPart):
            block = text_block(part)
        elif isinstance(part, ToolCallPart):
            block = call_block(part, nm=nm, ids=ids, notes=None)
        elif isinstance(part, OpaquePart):
            block = opaque_block(part)
        if block is not None:
            blocks.append(block)
    return blocks


def reply_extras(reply: Reply) -> dict[str, Any]:
    data = (reply.provider_data or {}).get(WIRE)
    return copy.deepcopy(dict(data)) if isinstance(data, Mapping) else {}


def encode_reply(reply: Reply, *, nm: Names) -> dict[str, Any]:
    extras = reply_extras(reply)
    body: dict[str, Any] = {
        "output": {"message": {"role": "assistant", "content": reply_blocks(reply, nm=nm)}},
        "stopReason": stop_to_wire(reply),
        "usage": usage_body(reply.usage, extras.pop("usage", None)),
        "metrics": {"latencyMs": 0},
    }
    body.update(extras)
    return body


def decode_response(body: Mapping[str, Any], *, request: Request | None = None) -> Reply:
    """A Converse reply body as a `Reply`; with ``request``, tool names map back.

    An AWS error body sent with a success status (``{"message": ...}`` and no ``output``)
    raises its typed error, with the status its words are sent with.
    """
    if "output" not in body:
        said = body.get("message", body.get("Message"))
        if isinstance(said, str):
            raise decode_error(status_in_words(said), {"message": said})
    return decode_reply(body, nm=name_map(request))


def encode_response(reply: Reply, *, request: Request | None = None) -> dict[str, Any]:
    """A `Reply` as the Converse API's reply body."""
    return encode_reply(reply, nm=name_map(request))


# --------------------------------------------------------------------------- errors

ERROR_STATUS: dict[str, int] = {
    "ValidationException": 400,
    "ServiceQuotaExceededException": 400,
    "AccessDeniedException": 403,
    "UnrecognizedClientException": 403,
    "ResourceNotFoundException": 404,
    "ModelTimeoutException": 408,
    "ModelErrorException": 424,
    "ModelStreamErrorException": 424,
    "ThrottlingException": 429,
    "ModelNotReadyException": 429,
    "InternalServerException": 500,
    "ServiceUnavailableException": 503,
}
"""The HTTP status each exception type comes with (also for exceptions inside a stream)."""

_TYPES = {400: "ValidationException", 401: "UnrecognizedClientException",
          403: "AccessDeniedException", 404: "ResourceNotFoundException",
          408: "ModelTimeoutException", 424: "ModelErrorException", 429: "ThrottlingException",
          500: "InternalServerException", 503: "ServiceUnavailableException"}


def error_type_of(raw: Any) -> str | None:
    """The error type AWS wrote in a header, a body or a stream (`aws_error_type`)."""
    return aws_error_type(raw)


def decode_error(status: int, body: Any, headers: Mapping[str, str] | None = None) -> ProviderError:
    """The typed error for an error reply: ``{"message"}`` with the type in a header or body."""
    parsed, _ = error_body(body)
    lower = {str(k).lower(): v for k, v in (headers or {}).items()}
    error_type = error_type_of(lower.get("x-amzn-errortype"))
    message = ""
    if isinstance(parsed, Mapping):
        error_type = error_type or error_type_of(parsed.get("__type")) or error_type_of(
            parsed.get("code"))
        text = parsed.get("message", parsed.get("Message"))
        message = text if isinstance(text, str) else ""
    elif isinstance(parsed, str):
        message = parsed.strip()[:500]
    if not message:
        message = f"HTTP {status}" + (f" ({error_type})" if error_type else "")
    error = provider_error(status, message, wire=WIRE, error_type=error_type, body=parsed,
                           retry_after=retry_after_from(headers))
    if error_type in AWS_RETRIED:
        error.retryable = True
    return error


def encode_error(status: int, message: str) -> dict[str, Any]:
    """An error body as Bedrock sends it for ``status`` (the type also in ``__type``)."""
    return {"message": message, "__type": _TYPES.get(status, "InternalServerException")}
