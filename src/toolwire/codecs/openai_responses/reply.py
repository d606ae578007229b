"""OpenAI Responses: whole reply bodies, both ways, and error bodies.

Owns: the stop-reason map (the wire has no finish reason: it is derived from ``status``,
``incomplete_details`` and the items present), usage, the whole-reply conversions
(`decode_response`, `encode_response`) and error bodies (`decode_error`; the error body it
sends is `toolwire.codecs.openai_shared`'s).
Imports only the transcript, errors, `toolwire.codecs.base` and the Responses `parts` and
`schema`; must not import the wire's request or stream modules, transport, client or any
vendor SDK.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolwire.codecs.base import (
    NameMap,
    error_body,
    provider_error,
    retry_after_from,
    status_in_words,
    token_count,
)
from toolwire.codecs.openai_responses.parts import (
    RESPONSE,
    WIRE,
    Item,
    content_seed,
    continues,
    has_refusal,
    made_id,
    name_map,
    own,
    part_from_item,
    render_part,
)
from toolwire.codecs.openai_responses.schema import encode_choice, encode_tool
from toolwire.errors import ProviderError, WireFormatError
from toolwire.transcript import (
    Message,
    Part,
    Reply,
    Request,
    StopReason,
    TextPart,
    ToolCallPart,
    Usage,
)

STOP_REASONS: dict[str, StopReason] = {
    "completed": "end_turn",
    "max_output_tokens": "max_tokens",
    "content_filter": "content_filter",
    "incomplete": "other",
    "failed": "error",
    "cancelled": "other",
    "in_progress": "other",
    "queued": "other",
}
"""Raw stop values: the ``status``, or the ``incomplete_details.reason`` of incomplete replies."""

_STATUS_FOR_STOP: dict[str, str] = {
    "max_tokens": "max_output_tokens",
    "content_filter": "content_filter",
    "error": "failed",
    "context_window_exceeded": "failed",
    "tool_call_failed": "failed",
}


def unwrap(body: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``response`` object, also when given a stream event or a wrapper holding it."""
    inner = body.get("response")
    if isinstance(inner, dict) and body.get("object") != "response":
        return inner
    return body


def decode_usage(raw: Any) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    inp = raw.get("input_tokens_details") or {}
    out = raw.get("output_tokens_details") or {}
    cost = raw.get("cost")
    return Usage(
        input_tokens=token_count(raw.get("input_tokens")),
        output_tokens=token_count(raw.get("output_tokens")),
        cache_read_tokens=token_count(inp.get("cached_tokens")) if isinstance(inp, dict) else 0,
        cache_write_tokens=(token_count(inp.get("cache_write_tokens"))
                            if isinstance(inp, dict) else 0),
        reasoning_tokens=token_count(out.get("reasoning_tokens")) if isinstance(out, dict) else 0,
        cost=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
    )


def encode_usage(usage: Usage) -> dict[str, Any]:
    body: dict[str, Any] = {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {
            "cached_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
        },
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.total_tokens,
    }
    if usage.cost is not None:
        body["cost"] = usage.cost
    return body


def raw_stop_of(body: Mapping[str, Any]) -> str | None:
    status = body.get("status")
    if not isinstance(status, str):
        return None
    details = body.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    if status == "incomplete" and isinstance(reason, str) and reason:
        return reason
    return status


def decode_response(
    body: Mapping[str, Any] | str | bytes, *, request: Request | None = None
) -> Reply:
    """A Responses ``response`` object as a canonical reply, items kept in output order.

    Text is accepted too (some proxies send keep-alive whitespace before the JSON).
    """
    if isinstance(body, (str, bytes)):
        parsed = json.loads(body)
        if not isinstance(parsed, dict):
            raise WireFormatError("a Responses reply must be a JSON object")
        body = parsed
    body = unwrap(body)
    if isinstance(body.get("error"), dict) and "output" not in body and "status" not in body:
        raise error_in_reply(body)  # an error body, not a (failed) response object
    names = name_map(request.tools) if request is not None else NameMap()
    output = body.get("output")
    if output is None:
        output = []
    elif not isinstance(output, list):
        raise WireFormatError(f"output: expected a list of items, got {type(output).__name__}")
    for index, item in enumerate(output):
        if not isinstance(item, dict):
            raise WireFormatError(f"output[{index}]: expected an object (an output item), got "
                                  f"{type(item).__name__}")
    reply_id = body.get("id") if isinstance(body.get("id"), str) and body.get("id") else None
    seed = reply_id or content_seed(output)
    parts: list[Part] = []
    refused = False
    calls = 0
    for index, item in enumerate(output):
        part = part_from_item(item, names, index, seed=seed, call_index=calls)
        if isinstance(part, ToolCallPart):
            calls += 1
        elif isinstance(part, TextPart) and has_refusal(item):
            refused = True
        parts.append(part)
    raw_stop = raw_stop_of(body)
    stop, truncated = decode_stop(parts, raw_stop, refused)
    error = body.get("error")
    model = body.get("model")
    keep = {RESPONSE: reply_id} if reply_id and request is not None and continues(
        request.provider_options) else None  # the next request continues it
    return Reply(
        message=Message(role="assistant", parts=tuple(parts),
                        provider_data={WIRE: keep} if keep else None),
        stop=stop,
        raw_stop=raw_stop,
        usage=decode_usage(body.get("usage")),
        model=model if isinstance(model, str) and model else None,
        id=reply_id,
        truncated_call=truncated,
        provider_data={WIRE: {"error": error}} if error else None,
    )


def decode_stop(parts: list[Part], raw_stop: str | None, refused: bool) -> tuple[StopReason, bool]:
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    if calls:
        # Broken arguments count as cut off only when the reply says it hit the token limit;
        # otherwise they go back to the model as an error result it can fix.
        if raw_stop == "max_output_tokens" and any(c.parse_error is not None for c in calls):
            return "max_tokens", True
        return "tool_calls", False
    stop: StopReason = "end_turn" if raw_stop is None else STOP_REASONS.get(raw_stop, "other")
    if stop == "end_turn" and refused:
        stop = "refusal"
    return stop, False


def _status(reply: Reply) -> tuple[str, dict[str, Any] | None]:
    raw = reply.raw_stop
    if raw not in STOP_REASONS:
        raw = _STATUS_FOR_STOP.get(reply.stop, "completed")
        if reply.truncated_call:
            raw = "max_output_tokens"
    if raw in ("max_output_tokens", "content_filter"):
        return "incomplete", {"reason": raw}
    return str(raw), None


def render_output(reply: Reply, names: NameMap) -> list[Item]:
    output: list[Item] = []
    for part in reply.message.parts:
        item = render_part(part, names, len(output))
        if item is not None:
            output.append(item)
    return output


def encode_response(reply: Reply, *, request: Request | None = None) -> dict[str, Any]:
    """A canonical reply as the wire's non-streamed ``response`` object."""
    names = name_map(request.tools) if request is not None else NameMap()
    output = render_output(reply, names)
    status, details = _status(reply)
    data = own(reply.provider_data)
    error = data.get("error") if isinstance(data, dict) else None
    choice = request.tool_choice if request is not None else None
    return {
        "id": reply.id or made_id("resp", 0, content_seed(output)),
        "object": "response",
        "created_at": 0,
        "status": status,
        "error": error,
        "incomplete_details": details,
        "instructions": request.system if request is not None else None,
        "model": reply.model or "",
        "output": output,
        "parallel_tool_calls": choice.parallel is not False if choice is not None else True,
        "tool_choice": encode_choice(choice, names) if choice is not None else "auto",
        "tools": [encode_tool(t, names) for t in request.tools] if request is not None else [],
        "usage": encode_usage(reply.usage),
    }


# --------------------------------------------------------------------------- errors


def error_in_reply(body: Mapping[str, Any]) -> ProviderError:
    """The typed error for a body that is an ``error`` object and no response (sent with a
    success status): the status is the one its code is sent with."""
    err = body["error"]
    label = " ".join(str(err.get(k) or "") for k in ("code", "type"))
    return decode_error(status_in_words(label), body)


def decode_error(
    status: int, body: Any, headers: Mapping[str, str] | None = None
) -> ProviderError:
    """The typed error for an HTTP error reply ``{"error": {message, type, param, code}}``."""
    parsed, text = error_body(body)
    text = text.strip()
    if isinstance(parsed, str):
        parsed = None
    err = parsed.get("error") if isinstance(parsed, dict) else None
    if not isinstance(err, dict):
        err = parsed if isinstance(parsed, dict) and "message" in parsed else {"message": err}
    message = err.get("message")
    if not isinstance(message, str) or not message:
        message = text or f"HTTP {status} with no error message"
    kind, code = err.get("type"), err.get("code")
    error_type = kind if isinstance(kind, str) and kind else code if isinstance(code, str) else None
    if isinstance(code, str) and "context_length" in code:
        error_type = code
    return provider_error(status, message, wire=WIRE, error_type=error_type,
                          body=parsed if parsed is not None else text,
                          retry_after=retry_after_from(headers))
