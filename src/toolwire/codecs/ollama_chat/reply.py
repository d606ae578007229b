"""Ollama native chat: whole reply bodies both ways, stop reasons, usage and error bodies.

Owns `decode_response` and `encode_response`, the ``done_reason`` map (`STOP_REASONS`; calls,
not ``done_reason``, say a turn called tools), the usage counts, the assembly of a `Reply` from
a message and the final body or stream line (`build_reply`), and error bodies
(`decode_error`, `encode_error`, `message_and_type`). Pure: imports only the transcript, the
error tree, the codec base and this wire's ``parts``; no HTTP, no vendor SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolwire.codecs.base import (
    error_body,
    provider_error,
    retry_after_from,
    token_count,
)
from toolwire.codecs.ollama_chat.parts import (
    WIRE,
    Seeder,
    decode_assistant,
    encode_assistant,
    mapping,
    names_for,
    own,
    unknown_keys,
    with_extras,
    wrap_own,
)
from toolwire.errors import ProviderError, WireFormatError
from toolwire.transcript import (
    Message,
    Reply,
    Request,
    StopReason,
    ToolCallPart,
    Usage,
)

STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "load": "other",
    "unload": "other",
}

_RAW_STOP: dict[str, str] = {"max_tokens": "length"}  # every other stop is sent as "stop"

REPLY_KEYS = frozenset({"model", "message", "done", "done_reason", "prompt_eval_count",
                         "eval_count"})


# --------------------------------------------------------------------------- stop and usage


def decode_stop(calls: tuple[ToolCallPart, ...], raw: str | None) -> tuple[StopReason, bool]:
    """The normalised stop and whether a call was cut off; calls decide, not done_reason."""
    if calls:
        # Broken arguments token_count as cut off only when the reply says it hit the token limit;
        # otherwise they go back to the model as an error result it can fix.
        if raw == "length" and any(c.parse_error is not None for c in calls):
            return "max_tokens", True
        return "tool_calls", False
    if raw is None:
        return "end_turn", False
    return STOP_REASONS.get(raw, "other"), False


def build_reply(message: Message, final: Mapping[str, Any], model: Any,
                extras: dict[str, Any]) -> Reply:
    """The reply from its message and the final body (or final stream line)."""
    raw = final.get("done_reason")
    raw_stop = raw if isinstance(raw, str) and raw else None
    stop, truncated = decode_stop(message.tool_calls, raw_stop)
    usage = Usage(input_tokens=token_count(final.get("prompt_eval_count")),
                  output_tokens=token_count(final.get("eval_count")))
    return Reply(message=message, stop=stop, raw_stop=raw_stop, usage=usage,
                 model=model if isinstance(model, str) else None, truncated_call=truncated,
                 provider_data=wrap_own(extras))


def _final_fields(reply: Reply) -> dict[str, Any]:
    out: dict[str, Any] = {"done": True,
                           "done_reason": reply.raw_stop or _RAW_STOP.get(reply.stop, "stop")}
    if reply.usage.input_tokens:
        out["prompt_eval_count"] = reply.usage.input_tokens
    if reply.usage.output_tokens:
        out["eval_count"] = reply.usage.output_tokens
    return out


# --------------------------------------------------------------------------- whole replies


def decode_response(body: Mapping[str, Any], *, request: Request | None = None) -> Reply:
    """A whole (non-streamed) reply; with ``request``, tool names are mapped back to the user's."""
    body = mapping(body, "reply body")
    if "message" not in body:
        if "error" in body:
            raise decode_error(200, body)
        raise WireFormatError("an /api/chat reply has no 'message'")
    seeder = Seeder(body.get("model"), body.get("created_at"))
    message = decode_assistant(body["message"], seeder, names_for(request))
    return build_reply(message, body, body.get("model"), unknown_keys(body, REPLY_KEYS))


def encode_response(reply: Reply, *, request: Request | None = None) -> dict[str, Any]:
    """A reply as the server's non-streamed body."""
    extras = dict(own(reply.provider_data))
    body: dict[str, Any] = {}
    if reply.model is not None:
        body["model"] = reply.model
    if "created_at" in extras:
        body["created_at"] = extras.pop("created_at")
    body["message"] = encode_assistant(reply.message, None, names_for(request), None,
                                        keep_generated_id=True)
    body.update(_final_fields(reply))
    return with_extras(body, extras)


# --------------------------------------------------------------------------- errors


def decode_error(status: int, body: Any, headers: Mapping[str, str] | None = None
                 ) -> ProviderError:
    """The typed error for an error reply (``{"error": "<message>"}``)."""
    message, kind, parsed = message_and_type(body, status)
    return provider_error(status, message, wire=WIRE, error_type=kind, body=parsed,
                          retry_after=retry_after_from(headers))


def encode_error(status: int, message: str) -> dict[str, Any]:
    """An error body as this wire's server sends it (the same shape for every status)."""
    return {"error": message}


def message_and_type(body: Any, status: int) -> tuple[str, str | None, Any]:
    """Message, error type and parsed body of ``{"error": "..."}`` (or the /v1 object form)."""
    body, text = error_body(body)
    if isinstance(body, str):
        return (text.strip() or f"HTTP {status}"), None, body
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, str):
            return error, None, body
        if isinstance(error, Mapping):  # the OpenAI-style shape of the /v1 layer
            kind = error.get("type")
            return (str(error.get("message") or f"HTTP {status}"),
                    kind if isinstance(kind, str) else None, body)
    return f"HTTP {status}", None, body
