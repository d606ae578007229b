"""gemini-generate whole replies both ways, their stop reasons and usage, and error bodies.

Owns: the finish- and block-reason maps and `STOP_REASONS`, usage counts, `decode_response` /
`encode_response` (a whole ``GenerateContentResponse``), and `decode_error` / `encode_error`.
Parts are `parts`'s. Must not import ``request``, ``stream``, transport, client or any vendor
SDK.

What a reply keeps in ``Reply.provider_data["gemini-generate"]``, so that rendering it again
gives the same body: ``response`` (top-level keys not otherwise read, ``promptFeedback``
included), ``candidate`` (``finishMessage``, ``safetyRatings``, ``index``, ...),
``usageMetadata`` (usage keys other than the counted ones) and ``otherCandidates``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.codecs import google_shared as shared
from toolwire.codecs.base import wrong_shape as wrong
from toolwire.codecs.gemini_generate.parts import WIRE, PartEncoder, as_object, decode_parts, own
from toolwire.codecs.google_shared import as_list, encode_error, request_names
from toolwire.errors import ProviderError, WireFormatError
from toolwire.transcript import JSON, Message, Reply, Request, StopReason, Usage

FINISH_REASONS: dict[str, StopReason] = {
    "FINISH_REASON_UNSPECIFIED": "other",
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "LANGUAGE": "other",
    "OTHER": "other",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "MALFORMED_FUNCTION_CALL": "tool_call_failed",
    "IMAGE_SAFETY": "content_filter",
    "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "IMAGE_OTHER": "other",
    "NO_IMAGE": "other",
    "IMAGE_RECITATION": "content_filter",
    "UNEXPECTED_TOOL_CALL": "tool_call_failed",
    "TOO_MANY_TOOL_CALLS": "tool_call_failed",
    "MISSING_THOUGHT_SIGNATURE": "error",
    "MALFORMED_RESPONSE": "error",
    "ESCALATION": "other",
    "PUP_LIMITED_DISABLED": "other",
    "CONTINUATION": "pause_turn",
    "MODEL_ARMOR": "content_filter",
}
"""``candidates[].finishReason`` -> normalised stop (before the tool-call rule)."""

BLOCK_REASONS: dict[str, StopReason] = {
    "BLOCK_REASON_UNSPECIFIED": "refusal",
    "BLOCKED_REASON_UNSPECIFIED": "refusal",
    "SAFETY": "content_filter",
    "OTHER": "refusal",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "MODEL_ARMOR": "content_filter",
    "JAILBREAK": "content_filter",
}
"""``promptFeedback.blockReason`` (the prompt was refused, no candidates) -> stop."""

STOP_REASONS: dict[str, StopReason] = {
    **{k: v for k, v in BLOCK_REASONS.items() if k not in FINISH_REASONS},
    **FINISH_REASONS,
}
"""Every ``finishReason`` and ``promptFeedback.blockReason`` value -> normalised stop.

A blocked prompt (no candidates) reads its block reason with ``BLOCK_REASONS`` instead, where
``OTHER`` is a refusal rather than ``other``.
"""

# Replies requested with ``$alt=json;enum-encoding=int`` carry enum numbers.
_FINISH_BY_NUMBER = {
    0: "FINISH_REASON_UNSPECIFIED", 1: "STOP", 2: "MAX_TOKENS", 3: "SAFETY", 4: "RECITATION",
    5: "OTHER", 6: "LANGUAGE", 7: "BLOCKLIST", 8: "PROHIBITED_CONTENT", 9: "SPII",
    10: "MALFORMED_FUNCTION_CALL", 11: "IMAGE_SAFETY", 12: "UNEXPECTED_TOOL_CALL",
    13: "TOO_MANY_TOOL_CALLS", 14: "IMAGE_PROHIBITED_CONTENT", 15: "IMAGE_OTHER",
    16: "NO_IMAGE", 17: "IMAGE_RECITATION",
}
_BLOCK_BY_NUMBER = {
    0: "BLOCK_REASON_UNSPECIFIED", 1: "SAFETY", 2: "OTHER", 3: "BLOCKLIST",
    4: "PROHIBITED_CONTENT", 5: "IMAGE_SAFETY",
}
_FINISH_FOR_STOP: dict[str, str] = {
    "end_turn": "STOP", "tool_calls": "STOP", "stop_sequence": "STOP",
    "max_tokens": "MAX_TOKENS", "content_filter": "SAFETY",
    "tool_call_failed": "MALFORMED_FUNCTION_CALL", "pause_turn": "CONTINUATION",
    "context_window_exceeded": "OTHER", "error": "MALFORMED_RESPONSE", "other": "OTHER",
    "refusal": "OTHER",
}
_COUNTED = ("promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount",
            "cachedContentTokenCount", "totalTokenCount")
READ_KEYS = ("candidates", "usageMetadata", "modelVersion", "responseId")
"""The top-level reply keys read into a `Reply`; the others ride in its provider data."""


def _enum_name(value: JSON, numbers: Mapping[int, str]) -> str | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return numbers.get(value, str(value))
    return str(value)


def _count(meta: Mapping[str, JSON], key: str) -> int:
    try:
        return int(meta.get(key) or 0)
    except (TypeError, ValueError):
        return 0


def decode_usage(meta: JSON) -> Usage:
    if not isinstance(meta, (dict, Mapping)):
        return Usage()
    thoughts = _count(meta, "thoughtsTokenCount")
    return Usage(
        input_tokens=_count(meta, "promptTokenCount") + _count(meta, "toolUsePromptTokenCount"),
        output_tokens=_count(meta, "candidatesTokenCount") + thoughts,
        cache_read_tokens=_count(meta, "cachedContentTokenCount"),
        reasoning_tokens=thoughts,
    )


def decode_stop(raw: str | None, blocked: bool, message: Message) -> tuple[StopReason, bool]:
    if blocked:
        return BLOCK_REASONS.get(raw or "", "refusal"), False
    calls = message.tool_calls
    if calls:
        if raw == "MAX_TOKENS" and any(c.parse_error is not None for c in calls):
            return "max_tokens", True
        return "tool_calls", False
    if raw is None:
        return "end_turn", False
    return FINISH_REASONS.get(raw, "other"), False


def decode_response(body: Mapping[str, Any], *, request: Request | None = None) -> Reply:
    """A whole ``generateContent`` reply as a canonical `Reply` (first candidate)."""
    if not isinstance(body, (dict, Mapping)):
        raise WireFormatError(f"a Gemini reply is a JSON object, not {type(body).__name__}")
    if "error" in body and "candidates" not in body:
        raise decode_error(0, body)
    candidates = as_list(body.get("candidates"), "candidates", "a list of candidates")
    for i, listed in enumerate(candidates):
        if not isinstance(listed, (dict, Mapping)):
            raise wrong(f"candidates[{i}]", "an object (a candidate)", listed)
    cand: Mapping[str, JSON] = candidates[0] if candidates else {}
    content = as_object(cand.get("content"), "candidates[0].content")
    parts = content.get("parts") if content else None  # parts are read leniently
    if parts is not None and not isinstance(parts, list):
        raise wrong("candidates[0].content.parts", "a list of parts", parts)
    response_id = body.get("responseId")
    message = Message(role="assistant", parts=tuple(decode_parts(
        parts, names=request_names(request), seed=str(response_id or ""))))
    feedback = body.get("promptFeedback")
    blocked = not candidates and isinstance(feedback, Mapping) and "blockReason" in feedback
    if blocked:
        assert isinstance(feedback, Mapping)
        raw = _enum_name(feedback.get("blockReason"), _BLOCK_BY_NUMBER)
    else:
        raw = _enum_name(cand.get("finishReason"), _FINISH_BY_NUMBER)
    stop, truncated = decode_stop(raw, blocked, message)
    data: dict[str, JSON] = {}
    response_extra = {k: v for k, v in body.items() if k not in READ_KEYS}
    candidate_extra = {k: v for k, v in cand.items() if k not in ("content", "finishReason")}
    meta = body.get("usageMetadata")
    usage_extra = ({k: v for k, v in meta.items() if k not in _COUNTED}
                   if isinstance(meta, (dict, Mapping)) else {})
    for key, value in (("response", response_extra), ("candidate", candidate_extra),
                       ("usageMetadata", usage_extra), ("otherCandidates", candidates[1:])):
        if value:
            data[key] = value
    model = body.get("modelVersion")
    return Reply(
        message=message,
        stop=stop,
        raw_stop=raw,
        usage=decode_usage(meta),
        model=str(model) if model is not None else None,
        id=str(response_id) if response_id is not None else None,
        truncated_call=truncated,
        provider_data={WIRE: data} if data else None,
    )


def encode_response(reply: Reply, *, request: Request | None = None) -> dict[str, Any]:
    """A canonical reply as Gemini's non-streamed reply body."""
    names = request_names(request)
    tool_names = [t.name for t in request.tools] if request is not None else []
    parts = PartEncoder(names, tool_names, for_reply=True).content(
        reply.message.parts, None, model=True)
    data = own(reply.provider_data) or {}
    response_extra = dict(data.get("response") or {})
    feedback = response_extra.get("promptFeedback")
    has_block = isinstance(feedback, Mapping) and "blockReason" in feedback
    body: dict[str, Any] = {}
    if not parts and (has_block or reply.stop == "refusal"):
        if not has_block:
            reason = reply.raw_stop if reply.raw_stop in BLOCK_REASONS else "OTHER"
            response_extra["promptFeedback"] = {"blockReason": reason}
    else:
        cand: dict[str, Any] = {}
        if parts:
            cand["content"] = {"role": "model", "parts": parts}
        raw = reply.raw_stop
        cand["finishReason"] = raw if raw in FINISH_REASONS else _FINISH_FOR_STOP[reply.stop]
        cand.update(data.get("candidate") or {})
        body["candidates"] = [cand, *(data.get("otherCandidates") or [])]
    usage_extra = dict(data.get("usageMetadata") or {})
    u = reply.usage
    usage: dict[str, Any] = {
        "promptTokenCount": u.input_tokens - _count(usage_extra, "toolUsePromptTokenCount"),
        "candidatesTokenCount": u.output_tokens - u.reasoning_tokens,
    }
    if u.reasoning_tokens:
        usage["thoughtsTokenCount"] = u.reasoning_tokens
    if u.cache_read_tokens:
        usage["cachedContentTokenCount"] = u.cache_read_tokens
    usage["totalTokenCount"] = u.input_tokens + u.output_tokens
    usage.update(usage_extra)
    body["usageMetadata"] = usage
    if reply.model is not None:
        body["modelVersion"] = reply.model
    if reply.id is not None:
        body["responseId"] = reply.id
    body.update(response_extra)
    return body


# --------------------------------------------------------------------------- errors


def decode_error(status: int, body: Any, headers: Mapping[str, str] | None = None) -> ProviderError:
    """The typed error for a Gemini error body ``{"error": {code, message, status, details}}``
    (`toolwire.codecs.google_shared.decode_error`, which the Interactions wire reads with too).
    """
    return shared.decode_error(status, body, headers, wire=WIRE)


__all__ = ["BLOCK_REASONS", "FINISH_REASONS", "READ_KEYS", "STOP_REASONS", "decode_error",
           "decode_response", "decode_stop", "decode_usage", "encode_error", "encode_response"]
