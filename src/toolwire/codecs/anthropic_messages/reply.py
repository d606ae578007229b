"""Anthropic Messages: whole reply bodies both ways, stop reasons, usage and error bodies.

Owns `decode_response` and `encode_response` (a non-streamed ``message`` body <-> `Reply`),
the ``stop_reason`` map (`STOP_REASONS`) and how a stop is decided when calls were cut off,
the usage arithmetic (prompt = input + cache writes + cache reads, extras kept aside), and
error bodies (`decode_error`, `encode_error`, and `ERROR_STATUS`, the status each
``error.type`` comes with). Pure functions over JSON. Imports only `toolwire.transcript`,
`toolwire.errors`, `toolwire.codecs.base` and this wire's ``parts``; never HTTP, never a
vendor SDK.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.codecs.anthropic_messages.parts import (
    WIRE,
    IdRewriter,
    ToolNames,
    call_block,
    name_map,
    parts_from_blocks,
    reasoning_block,
    reply_seed,
    text_block,
)
from toolwire.codecs.base import (
    AWS_RETRIED,
    aws_error_type,
    error_body,
    provider_error,
    retry_after_from,
    status_in_words,
    token_count,
)
from toolwire.errors import ProviderError, WireFormatError
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
    "pause_turn": "pause_turn",
    "refusal": "refusal",
    "model_context_window_exceeded": "context_window_exceeded",
    "compaction": "pause_turn",  # the server compacted and paused: sent again, it goes on
}
"""Every ``stop_reason`` the API sends, normalised. Unknown values decode as ``"other"``."""

_STOP_TO_WIRE: dict[str, str] = {
    "end_turn": "end_turn",
    "tool_calls": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "pause_turn": "pause_turn",
    "refusal": "refusal",
    "content_filter": "refusal",
    "context_window_exceeded": "model_context_window_exceeded",
}
_CUT_OFF = ("max_tokens", "model_context_window_exceeded")

REPLY_KEYS = frozenset({"id", "type", "role", "model", "content", "stop_reason", "usage"})
_QUIET_REPLY_KEYS = REPLY_KEYS | {"stop_sequence"}  # with stop_sequence null: nothing to keep
USAGE_KEYS = frozenset(
    {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}
)


# --------------------------------------------------------------------------- usage and stop


def decode_usage(raw: Any) -> Usage:
    if type(raw) is not dict and not isinstance(raw, Mapping):
        return Usage()
    get = raw.get
    given = get("input_tokens")
    output = get("output_tokens")
    write = get("cache_creation_input_tokens")
    read = get("cache_read_input_tokens")
    if type(given) is not int or type(output) is not int:
        given, output = token_count(given), token_count(output)
    if write is None and read is None:  # older bodies and some gateways leave both out
        write = read = 0
    else:
        write, read = token_count(write), token_count(read)
    details = get("output_tokens_details")
    thinking = 0
    if details is not None and isinstance(details, Mapping):
        thinking = token_count(details.get("thinking_tokens"))
    by_ttl = get("cache_creation")  # the writes split by lifetime
    long = (token_count(by_ttl.get("ephemeral_1h_input_tokens"))
            if by_ttl is not None and isinstance(by_ttl, Mapping) else 0)
    return Usage(
        input_tokens=given + write + read,
        output_tokens=output,
        cache_read_tokens=read,
        cache_write_tokens=write,
        cache_write_long_tokens=min(long, write),
        reasoning_tokens=thinking,
    )


def usage_extras(raw: Any) -> dict[str, Any]:
    """Usage keys the canonical `Usage` does not carry (service tier, server-tool counts...)."""
    if type(raw) is not dict and not isinstance(raw, Mapping):
        return {}
    out: dict[str, Any] = {}
    for key in raw:
        if key not in USAGE_KEYS:
            out = {k: v for k, v in raw.items()
                   if k not in USAGE_KEYS and k != "output_tokens_details" and v is not None}
            details = raw.get("output_tokens_details")
            if isinstance(details, Mapping) and set(details) - {"thinking_tokens"}:
                out["output_tokens_details"] = dict(details)
            break
    return out


def usage_body(usage: Usage, extras: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "input_tokens": max(0, usage.input_tokens - usage.cache_read_tokens
                            - usage.cache_write_tokens),
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
    }
    if usage.cache_write_long_tokens:
        out["cache_creation"] = {
            "ephemeral_5m_input_tokens": usage.cache_write_tokens - usage.cache_write_long_tokens,
            "ephemeral_1h_input_tokens": usage.cache_write_long_tokens}
    if usage.reasoning_tokens:
        out["output_tokens_details"] = {"thinking_tokens": usage.reasoning_tokens}
    if isinstance(extras, Mapping):
        for k, v in extras.items():
            if k == "output_tokens_details" and isinstance(v, Mapping):
                out[k] = {**v, **out.get(k, {})}
            elif k not in out:
                out[k] = copy.deepcopy(v)
    return out


def decode_stop(raw: Any, parts: Sequence[Part]) -> tuple[StopReason, bool]:
    """The normalised stop and whether a call was cut off by a limit.

    A call counts as cut off when the reply ended on a limit and a call's arguments do not
    parse, or the reply's last block is a call (the limit hit while it was being written).
    """
    known: StopReason | None = STOP_REASONS.get(raw) if isinstance(raw, str) else None
    if known == "tool_calls" and parts and type(parts[-1]) is ToolCallPart:
        return "tool_calls", False  # the common case, decided without a look at every part
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    if calls and raw in _CUT_OFF:
        broken = any(c.parse_error is not None or c.arguments is None for c in calls)
        if broken or isinstance(parts[-1], ToolCallPart):
            return (known or "max_tokens"), True
    if calls:
        return "tool_calls", False
    if raw is None or known == "tool_calls":
        return "end_turn", False  # the content decides: no call, no request for tools
    return (known or "other"), False


def stop_to_wire(reply: Reply) -> str:
    if reply.raw_stop in STOP_REASONS:
        return reply.raw_stop
    if reply.message.tool_calls and not reply.truncated_call:
        return "tool_use"
    return _STOP_TO_WIRE.get(reply.stop, "end_turn")


# --------------------------------------------------------------------------- whole replies


def decode_reply(body: Mapping[str, Any], *, nm: ToolNames) -> Reply:
    if type(body) is not dict and not isinstance(body, Mapping):
        raise WireFormatError(f"{WIRE}: a reply must be a JSON object")
    get = body.get
    if get("type") == "error" or ("content" not in body and _bedrock_error(body)):
        raise error_in_reply(body)
    content = get("content")
    if content is None:
        content = []
    if type(content) is not list and not isinstance(content, list):
        raise WireFormatError(f"{WIRE}: 'content' must be a list of blocks")
    rid = get("id")
    parts = parts_from_blocks(content, nm=nm,
                              seed=rid if type(rid) is str and rid else reply_seed(body))
    raw = get("stop_reason")
    stop: StopReason
    truncated: bool
    if raw == "tool_use" and parts and type(parts[-1]) is ToolCallPart:
        stop, truncated = "tool_calls", False  # the usual tool turn
    else:
        stop, truncated = decode_stop(raw, parts)
    extras: dict[str, Any] | None = None
    if not body.keys() <= _QUIET_REPLY_KEYS or get("stop_sequence") is not None:
        for key, value in body.items():
            if value is not None and key not in REPLY_KEYS:
                if extras is None:
                    extras = {}
                extras[key] = value
    usage = get("usage")
    if type(usage) is not dict or not usage.keys() <= USAGE_KEYS:
        more_usage = usage_extras(usage)
        if more_usage:
            if extras is None:
                extras = {}
            extras["usage"] = more_usage
    model = get("model")
    kept = None  # the container goes with the message: the next request names it
    if extras is not None and isinstance(extras.get("container"), Mapping):
        kept = {WIRE: {"container": extras.pop("container")}}
    return Reply(
        message=Message(role="assistant", parts=tuple(parts), provider_data=kept),
        stop=stop,
        raw_stop=raw if isinstance(raw, str) else None,
        usage=decode_usage(usage),
        model=model if isinstance(model, str) else None,
        id=rid if isinstance(rid, str) else None,
        truncated_call=truncated,
        provider_data={WIRE: extras} if extras else None,
    )


def reply_blocks(reply: Reply, *, nm: ToolNames) -> list[dict[str, Any]]:
    """A reply's parts as the blocks the API would have sent (unsigned thinking for foreign
    reasoning, other wires' opaque blocks left out)."""
    ids = IdRewriter(None)
    blocks: list[dict[str, Any]] = []
    for part in reply.message.parts:
        if isinstance(part, ReasoningPart):
            own = reasoning_block(part)
            blocks.append(own or {"type": "thinking", "thinking": part.text, "signature": ""})
        elif isinstance(part, TextPart):
            blocks.append(text_block(part))
        elif isinstance(part, ToolCallPart):
            blocks.append(call_block(part, nm=nm, ids=ids, notes=None))
        elif (isinstance(part, OpaquePart) and part.wire == WIRE
              and isinstance(part.payload, Mapping)):
            blocks.append(copy.deepcopy(dict(part.payload)))
        # A ToolResultPart never belongs in a reply; there is no block for it.
    return blocks


def reply_id(reply: Reply) -> str:
    if reply.id:
        return reply.id
    digest = hashlib.sha256(repr(reply.message).encode()).hexdigest()[:24]
    return f"msg_{digest}"


def reply_extras(reply: Reply) -> dict[str, Any]:
    data = (reply.provider_data or {}).get(WIRE)
    return dict(data) if isinstance(data, Mapping) else {}


def encode_reply(reply: Reply, *, nm: ToolNames, model: str) -> dict[str, Any]:
    extras = reply_extras(reply)
    body: dict[str, Any] = {
        "id": reply_id(reply),
        "type": "message",
        "role": "assistant",
        "model": reply.model or model,
        "content": reply_blocks(reply, nm=nm),
        "stop_reason": stop_to_wire(reply),
        "stop_sequence": None,
        "usage": usage_body(reply.usage, extras.pop("usage", None)),
    }
    body.update(copy.deepcopy(extras))
    held = reply.message.provider_data
    data = held.get(WIRE) if held is not None else None
    if isinstance(data, Mapping) and "container" in data:
        body["container"] = copy.deepcopy(data["container"])
    return body


def decode_response(body: Mapping[str, Any], *, request: Request | None = None) -> Reply:
    """A non-streamed reply body as a `Reply`; with ``request``, tool names map back."""
    return decode_reply(body, nm=ToolNames(request))


def encode_response(reply: Reply, *, request: Request | None = None) -> dict[str, Any]:
    """A `Reply` as the API's non-streamed reply body."""
    model = request.model if request is not None else ""
    return encode_reply(reply, nm=name_map(request), model=model)


# --------------------------------------------------------------------------- errors


def _bedrock_error(body: Mapping[str, Any]) -> bool:
    """Whether ``body`` is an error in the shape AWS gateways send (``{"message": "..."}``)."""
    said = body.get("message", body.get("Message"))
    return isinstance(said, str) and body.get("type") != "message"


def error_in_reply(body: Mapping[str, Any]) -> ProviderError:
    """The typed error an error body stands for when it came as a reply (with a success
    status): its status is the one its error type is sent with."""
    err = body.get("error")
    kind = err.get("type") if isinstance(err, Mapping) else None
    if isinstance(kind, str):
        return decode_error(ERROR_STATUS.get(kind, 400), body)
    said = str(body.get("message", body.get("Message")))
    return decode_error(status_in_words(said), {**body, "message": said})


def decode_error(status: int, body: Any, headers: Mapping[str, str] | None = None) -> ProviderError:
    """The typed error for an error response: ``{"type":"error","error":{"type","message"}}``."""
    parsed, _ = error_body(body)
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
    lower = {str(k).lower(): v for k, v in (headers or {}).items()}
    aws = aws_error_type(lower.get("x-amzn-errortype")) if error_type is None else None
    error_type = error_type or aws  # Bedrock's InvokeModel names its type in this header
    if not message:
        message = f"HTTP {status}" + (f" ({error_type})" if error_type else "")
    error = provider_error(status, message, wire=WIRE, error_type=error_type, body=parsed,
                           retry_after=retry_after_from(headers))
    should_retry = lower.get("x-should-retry")
    if should_retry in ("true", "false"):
        error.retryable = should_retry == "true"
    elif aws in AWS_RETRIED:
        error.retryable = True
    return error


ERROR_STATUS: dict[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "conflict_error": 409,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
"""The HTTP status each ``error.type`` comes with (used for errors that arrive mid-stream)."""

_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 429: "rate_limit_error", 500: "api_error",
                529: "overloaded_error"}


def encode_error(status: int, message: str) -> dict[str, Any]:
    """An error body as this wire's server sends it for ``status``."""
    return {"type": "error", "error": {"type": _ERROR_TYPES.get(status, "api_error"),
                                       "message": message},
            "request_id": "req_emulator"}
