"""gemini-interactions whole replies both ways (an ``Interaction``), their stop reasons and
usage, and error bodies.

Owns: `STOP_REASONS` and `decode_stop` (an interaction's ``status`` -> normalised stop),
`decode_usage` (its usage counts), `decode_response` / `encode_response` and `decode_error` /
`encode_error` (Google's error body, ``{"error": {code, message, status}}``). Steps are
`parts`'. Must not import ``request``,
``stream``, transport, client or any vendor SDK.

An interaction's ``steps`` may hold the turn's input too; the reply is the steps after the last
``user_input`` or ``function_result`` step. What a reply keeps in
``Reply.provider_data["gemini-interactions"]``: the top-level keys not otherwise read
(``created``, ``updated``, ...), so that rendering it again gives the same body. Its message
keeps the interaction's id (``{"interaction": id}``) when the request asked the server to
store it, for the next request to continue from.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from toolwire.codecs import google_shared as shared
from toolwire.codecs.base import dumps, token_count
from toolwire.codecs.base import wrong_shape as wrong
from toolwire.codecs.gemini_interactions import as_list
from toolwire.codecs.gemini_interactions.parts import (
    INTERACTION,
    TURN_STEPS,
    WIRE,
    StepEncoder,
    decode_output,
    own,
)
from toolwire.codecs.google_shared import encode_error, request_names
from toolwire.errors import ProviderError, WireFormatError
from toolwire.transcript import Message, Reply, Request, StopReason, Usage

STOP_REASONS: dict[str, StopReason] = {
    "completed": "end_turn",
    "requires_action": "tool_calls",
    "incomplete": "max_tokens",
    "budget_exceeded": "max_tokens",
    "failed": "error",
    "cancelled": "other",
    "in_progress": "other",
    "queued": "other",
    "idle": "other",
    "requires_continuation": "pause_turn",
}
"""An interaction's ``status`` -> normalised stop (a reply holding calls asks for tools)."""

_STATUS_FOR_STOP: dict[str, str] = {
    "end_turn": "completed", "tool_calls": "requires_action", "stop_sequence": "completed",
    "max_tokens": "incomplete", "pause_turn": "requires_continuation", "error": "failed",
    "tool_call_failed": "failed", "context_window_exceeded": "failed", "other": "completed",
    "refusal": "completed", "content_filter": "completed",
}
READ_KEYS = ("id", "status", "model", "steps", "usage")
"""The top-level reply keys read into a `Reply`; the others ride in its provider data."""


def _count(usage: Mapping[str, Any], key: str) -> int:
    return max(token_count(usage.get(key)), 0)


def decode_usage(value: Any) -> Usage:
    """An ``Usage`` object as canonical counts (output counts thoughts, as billed)."""
    if not isinstance(value, Mapping):
        return Usage()
    thoughts = _count(value, "total_thought_tokens")
    return Usage(
        input_tokens=_count(value, "total_input_tokens") + _count(value, "total_tool_use_tokens"),
        output_tokens=_count(value, "total_output_tokens") + thoughts,
        cache_read_tokens=_count(value, "total_cached_tokens"),
        reasoning_tokens=thoughts,
    )


def usage_body(usage: Usage) -> dict[str, int]:
    """Canonical counts as this wire's ``usage``."""
    out = usage.output_tokens - usage.reasoning_tokens
    body = {"total_input_tokens": usage.input_tokens, "total_output_tokens": max(out, 0),
            "total_tokens": usage.input_tokens + usage.output_tokens}
    if usage.reasoning_tokens:
        body["total_thought_tokens"] = usage.reasoning_tokens
    if usage.cache_read_tokens:
        body["total_cached_tokens"] = usage.cache_read_tokens
    return body


def output_steps(steps: list[Any]) -> list[Any]:
    """The model's steps of the last turn: those after the last step the client sent."""
    last = -1
    for n, step in enumerate(steps):
        kind = step.get("type") if isinstance(step, Mapping) else None
        if isinstance(kind, str) and kind in TURN_STEPS:
            last = n
    return steps[last + 1:]


def decode_stop(status: str | None, message: Message) -> StopReason:
    """An interaction's ``status`` as a stop reason: a reply holding calls asks for tools, and
    one that asks for action without any call has ended its turn."""
    if message.tool_calls:
        return "tool_calls"
    stop = STOP_REASONS.get(status or "completed", "other")
    return "end_turn" if stop == "tool_calls" else stop


def stored(request: Request | None) -> bool:
    """Whether a request asked the server to store its interaction."""
    options = own(request.provider_options) if request is not None else None
    return bool(options and options.get("store") is True)


def decode_response(body: Mapping[str, Any], *, request: Request | None = None) -> Reply:
    """A whole ``Interaction`` as a canonical `Reply`."""
    if not isinstance(body, Mapping):
        raise WireFormatError(f"an interaction is a JSON object, not {type(body).__name__}")
    if "error" in body and "steps" not in body and "status" not in body:
        raise decode_error(0, body)
    status = body.get("status")
    if status is not None and not isinstance(status, str):
        raise wrong("status", "a string", status)
    steps = output_steps(as_list(body.get("steps"), "steps", "a list of steps"))
    rid = body.get("id")
    rid = rid if isinstance(rid, str) and rid else None
    parts = decode_output(steps, "steps", request_names(request), rid or "interaction")
    keep = {INTERACTION: rid} if rid and stored(request) else None
    message = Message(role="assistant", parts=tuple(parts),
                      provider_data={WIRE: keep} if keep else None)
    stop = decode_stop(status, message)
    extras = {k: v for k, v in body.items() if k not in READ_KEYS}
    model = body.get("model")
    return Reply(message=message, stop=stop, raw_stop=status, usage=decode_usage(body.get("usage")),
                 model=model if isinstance(model, str) else None, id=rid,
                 provider_data={WIRE: extras} if extras else None)


def interaction_id(reply: Reply, steps: list[Any], request: Request | None) -> str:
    """The reply's interaction id (one made from its steps and the history's length when it
    has none, so that two turns of one conversation get two ids)."""
    if reply.id:
        return reply.id
    turn = len(request.messages) if request is not None else 0
    seed = f"{turn}\x00{dumps(steps)}".encode()
    return "v1_" + hashlib.sha256(seed).hexdigest()[:24]


def encode_response(reply: Reply, *, request: Request | None = None) -> dict[str, Any]:
    """A reply as the ``Interaction`` this API answers with."""
    names = request_names(request)
    encoder = StepEncoder(names, [t.name for t in request.tools] if request else [], [])
    steps = encoder.model_steps(reply.message, "reply")
    status = "requires_action" if reply.tool_calls else _STATUS_FOR_STOP.get(reply.stop,
                                                                             "completed")
    body: dict[str, Any] = {"id": interaction_id(reply, steps, request), "status": status}
    if reply.model or request is not None:
        body["model"] = reply.model or (request.model if request else "")
    body["steps"] = steps
    body["usage"] = usage_body(reply.usage)
    body.update(own(reply.provider_data) or {})
    return body


# --------------------------------------------------------------------------- errors


def decode_error(status: int, body: Any, headers: Mapping[str, str] | None = None) -> ProviderError:
    """The typed error for Google's error body ``{"error": {code, message, status, details}}``
    (`toolwire.codecs.google_shared.decode_error`, shared with gemini-generate)."""
    return shared.decode_error(status, body, headers, wire=WIRE)


__all__ = ["READ_KEYS", "STOP_REASONS", "decode_error", "decode_response", "decode_stop",
           "decode_usage", "encode_error", "encode_response", "interaction_id", "output_steps",
           "stored", "usage_body"]
