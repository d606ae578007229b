"""OpenAI Chat Completions: whole reply bodies, both ways, and error bodies.

Owns the stop-reason map `STOP_REASONS` (and the finish reason written back for each stop), usage,
`decode_response` (a reply body as a `Reply`; the stream decoder assembles such a body and reads it
with the same `decode_body`, so both paths agree), `encode_response`, and error bodies:
`decode_error` (an HTTP error reply as a typed error), `error_from_chunk` (an ``error`` object
inside a 200 body or a stream); the error body it sends is `toolwire.codecs.openai_shared`'s. Pure
functions over JSON: imports only the transcript, errors, `toolwire.codecs.base` and the chat
`parts`; no HTTP, no vendor SDK.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from toolwire.codecs.base import (
    NameMap,
    error_body,
    provider_error,
    retry_after_from,
    wrong_shape,
)
from toolwire.codecs.openai_chat.parts import (
    WIRE,
    ReplyNames,
    assistant_parts,
    encode_call,
    is_refusal,
    mapping,
    name_map,
    plain,
    real_id,
    reply_seed,
    string,
    wire_data,
)
from toolwire.codecs.openai_chat.reasoning import (
    content_item,
    merge_reasoning,
    reasoning_payload,
)
from toolwire.errors import ContextLengthError, ProviderError, StreamError
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
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
    "error": "error",
    # values seen from compatible servers
    "eos": "end_turn",
    "eos_token": "end_turn",
    "end_turn": "end_turn",
    "stop_sequence": "stop_sequence",
    "max_tokens": "max_tokens",
    "tool_use": "tool_calls",
    "refusal": "refusal",
    "abort": "error",
    "cancelled": "error",
    "model_context_window_exceeded": "context_window_exceeded",
}

# A call whose arguments do not parse counts as cut off only when the reply says it hit the
# token limit. Broken JSON under any other signal (including a server that reports
# "tool_calls" for a cut-off call) goes back to the model as an error result it can fix.
_LIMIT_STOPS = frozenset({"length", "max_tokens"})

# top-level reply keys read into Reply fields (or meaningless per chunk)
_REPLY_KEYS = frozenset({"id", "object", "created", "model", "choices", "usage", "error",
                         "obfuscation"})


def as_int(value: Any) -> int:
    if type(value) is int:
        return value
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    return 0


# --------------------------------------------------------------------------- usage


def decode_usage(raw: Any) -> Usage:
    if raw is None or not isinstance(raw, Mapping):
        return Usage()
    get = raw.get
    prompt = get("prompt_tokens_details")
    if prompt is None or not isinstance(prompt, Mapping):
        prompt = {}
    completion = get("completion_tokens_details")
    if completion is None or not isinstance(completion, Mapping):
        completion = {}
    # where servers put the tokens read from their cache: OpenAI in prompt_tokens_details,
    # DeepSeek as prompt_cache_hit_tokens, vLLM as num_cached_tokens, Moonshot as cached_tokens
    cached = (as_int(prompt.get("cached_tokens")) or as_int(get("prompt_cache_hit_tokens"))
              or as_int(get("num_cached_tokens")) or as_int(get("cached_tokens")))
    cost = get("cost")
    return Usage(
        input_tokens=as_int(get("prompt_tokens")),
        output_tokens=as_int(get("completion_tokens")),
        cache_read_tokens=cached,
        cache_write_tokens=as_int(prompt.get("cache_write_tokens")),
        reasoning_tokens=as_int(completion.get("reasoning_tokens")),
        cost=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
    )


def encode_usage(usage: Usage) -> dict[str, Any]:
    prompt: dict[str, Any] = {"cached_tokens": usage.cache_read_tokens}
    if usage.cache_write_tokens:
        prompt["cache_write_tokens"] = usage.cache_write_tokens
    out: dict[str, Any] = {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": prompt,
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }
    if usage.cost is not None:
        out["cost"] = usage.cost
    return out


# --------------------------------------------------------------------------- whole replies


def decode_stop(raw: str | None, parts: Sequence[Part]) -> tuple[StopReason, bool]:
    """Normalised stop and whether a call was cut off: the content decides, not the signal."""
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    if calls:
        if raw in _LIMIT_STOPS and any(c.parse_error is not None for c in calls):
            return "max_tokens", True
        return "tool_calls", False
    if not raw:
        return "end_turn", False
    stop = STOP_REASONS.get(raw, "other")
    refused = any(isinstance(p, TextPart) and is_refusal(p) for p in parts)
    if stop == "end_turn" and refused:
        return "refusal", False
    return stop, False


def pick_choice(body: Mapping[str, Any]) -> Mapping[str, Any]:
    choices = body.get("choices")
    if type(choices) is not list:
        if choices is None:
            return {}
        raise wrong_shape("choices", "a list of choices", choices)
    for choice in choices:
        if (type(choice) is dict or isinstance(choice, Mapping)) and choice.get("index", 0) == 0:
            return choice
    first = choices[0] if choices else {}
    if not isinstance(first, Mapping):
        raise wrong_shape("choices[0]", "an object (a choice)", first)
    return first


def decode_body(body: Mapping[str, Any], request: Request | None) -> Reply:
    """A whole (non-streamed) reply body as a `Reply`."""
    names = ReplyNames(request.tools) if request is not None else None
    choice = pick_choice(body)
    message = choice.get("message")
    if type(message) is not dict and not isinstance(message, Mapping):
        if message is not None:
            raise wrong_shape("choices[0].message", "an object (the message)", message)
        message = {}
    parts = assistant_parts(message, seed=reply_seed(body), names=names,
                            where="choices[0].message")
    raw = choice.get("finish_reason")
    raw_stop = raw if isinstance(raw, str) else None
    stop, truncated = decode_stop(raw_stop, parts)
    extras = {} if body.keys() <= _REPLY_KEYS else {
        k: plain(v, k) for k, v in body.items() if k not in _REPLY_KEYS and v is not None}
    for key in ("native_finish_reason", "error"):
        if key in choice and choice[key] is not None:
            extras[key] = plain(choice[key], ("choices", 0, key))
    model = body.get("model")
    return Reply(
        message=Message(role="assistant", parts=tuple(parts)),
        stop=stop,
        raw_stop=raw_stop,
        usage=decode_usage(body.get("usage")),
        model=model if isinstance(model, str) and model else None,
        id=real_id(body.get("id")),
        truncated_call=truncated,
        provider_data={WIRE: extras} if extras else None,
    )


FINISH_FOR: dict[StopReason, str] = {
    "end_turn": "stop",
    "tool_calls": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "refusal": "stop",
    "content_filter": "content_filter",
    "context_window_exceeded": "length",
    "tool_call_failed": "stop",
    "error": "error",
    "other": "stop",
}


def finish_reason_of(reply: Reply) -> str:
    return reply.raw_stop if reply.raw_stop is not None else FINISH_FOR[reply.stop]


def reply_id(reply: Reply) -> str:
    if reply.id is not None:
        return reply.id
    digest = hashlib.sha256(repr(reply.message).encode()).hexdigest()[:24]
    return f"chatcmpl-{digest}"


def reply_extras(reply: Reply) -> tuple[dict[str, Any], dict[str, Any]]:
    """Provider data of a reply split into (top-level keys, choice keys)."""
    extras: dict[str, Any] = plain(wire_data(reply.provider_data) or {})
    choice: dict[str, Any] = {k: extras.pop(k) for k in ("native_finish_reason", "error")
                              if k in extras}
    return extras, choice


def reply_message(reply: Reply, names: NameMap | None) -> dict[str, Any]:
    """The ``message`` object of a reply body."""
    text: list[str] = []
    refusal: list[str] = []
    calls: list[dict[str, Any]] = []
    message: dict[str, Any] = {"role": "assistant"}
    reasoning: dict[str, Any] = {}
    items: list[dict[str, Any]] = []  # content as a list, once reasoning came as an item of it
    for part in reply.message.parts:
        if isinstance(part, TextPart):
            (refusal if is_refusal(part) else text).append(part.text)
            if items and not is_refusal(part):
                items.append({"type": "text", "text": part.text})
        elif (item := content_item(part)) is not None:
            if text and not items:
                items.append({"type": "text", "text": "".join(text)})
            items.append(item)
        elif isinstance(part, ReasoningPart):
            payload = reasoning_payload(part)
            if payload is not None:
                merge_reasoning(reasoning, payload)
            elif part.text:
                merge_reasoning(reasoning, {"reasoning": part.text})
        elif isinstance(part, ToolCallPart):
            calls.append(encode_call(part, names.wire(part.name) if names else part.name))
        elif isinstance(part, OpaquePart) and part.wire == WIRE and part.kind == "custom_tool_call":
            calls.append(plain(part.payload))
    message["content"] = items if items else "".join(text) if text else None
    message["refusal"] = "".join(refusal) if refusal else None
    message.update(reasoning)
    if calls:
        message["tool_calls"] = calls
    return message


# --------------------------------------------------------------------------- the front


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


# --------------------------------------------------------------------------- errors


def decode_error(
    status: int, body: Any, headers: Mapping[str, str] | None = None
) -> ProviderError:
    """The typed error for an HTTP error reply (OpenAI's or OpenRouter's shape, or plain text)."""
    data, _ = error_body(body)
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


def error_from_chunk(chunk: Mapping[str, Any]) -> ProviderError:
    """The error an ``error`` chunk stands for: typed when it says what kind, else StreamError."""
    raw = chunk.get("error")
    err = raw if isinstance(raw, Mapping) else {"message": str(raw)}
    message = string(err.get("message"), "the stream reported an error")
    meta = mapping(err.get("metadata"))
    code = err.get("code")
    kind = next((v for v in (meta.get("error_type"), err.get("type"), code)
                 if isinstance(v, str) and v), None)
    status: int | None = None
    if isinstance(code, int) and not isinstance(code, bool) and 400 <= code < 600:
        status = code
    elif kind is not None:
        lowered = kind.lower()
        if "rate_limit" in lowered:
            status = 429
        elif "overloaded" in lowered:
            status = 529
        elif "context_length" in lowered:
            status = 400
    if status is None:
        return StreamError(message, error_type=kind, wire=WIRE, body=plain(chunk))
    return provider_error(status, message, wire=WIRE, error_type=kind, body=plain(chunk))
