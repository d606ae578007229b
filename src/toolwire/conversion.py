"""Conversations across wires: a request body in one format, the same conversation in another.

Owns `convert`, `Conversion` and `detect_wire`. Conversion goes through the canonical form:
decode with the source codec, encode with the target codec. Everything the target cannot carry
is listed in ``Conversion.losses`` (reasoning and provider blocks that only the source wire
understands, ids rewritten to the target's character set, tool names mapped, schema keywords
removed), never dropped silently. Ids are rewritten consistently, so calls and results still
pair up.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from toolwire.codecs import Note, get_codec
from toolwire.errors import WireFormatError
from toolwire.transcript import Request

BodyKind = Literal["request", "response", "stream"]


class Conversion(msgspec.Struct, frozen=True, kw_only=True):
    """A request body in the target wire, and what could not carry over."""

    body: dict[str, Any]
    source: str
    target: str
    request: Request
    losses: tuple[Note, ...]


def convert(body: Mapping[str, Any], source: str, target: str) -> Conversion:
    """The conversation in ``body`` (a request in wire ``source``) as a request in ``target``."""
    decoder, encoder = get_codec(source), get_codec(target)  # ValueError naming the wires
    try:
        request = decoder.decode_request(body)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise WireFormatError(
            f"this body is not a request in the {source} format ({type(exc).__name__}: {exc})"
        ) from exc
    encoded = encoder.encode(request)
    losses = encoded.notes
    options = request.provider_options.get(source) if request.provider_options else None
    if options and source != target and isinstance(options, Mapping):
        # One loss per setting, in place of a codec's single note for the whole mapping.
        whole = f"provider_options[{source!r}]"
        losses = tuple(
            [n for n in losses if not (n.kind == "field_dropped" and n.subject == whole)]
            + [Note(kind="field_dropped", subject=str(key),
                    detail=f"set for {source} only; not sent to {target}") for key in options])
    return Conversion(body=encoded.body, source=source, target=target, request=request,
                      losses=losses)


def _blocks(messages: Any) -> set[str]:
    kinds: set[str] = set()
    for m in messages if isinstance(messages, list) else ():
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, list):
            kinds.update(b.get("type", "") for b in content if isinstance(b, dict))
    return kinds


def _chat_flavour(body: Mapping[str, Any]) -> str:
    """Anthropic, Ollama or OpenAI chat, for a body with ``messages``."""
    messages = body.get("messages")
    if _blocks(messages) & {"tool_use", "tool_result", "thinking", "redacted_thinking"}:
        return "anthropic-messages"
    if "system" in body or any("input_schema" in t for t in body.get("tools") or ()
                               if isinstance(t, dict)):
        return "anthropic-messages"
    if any(k in body for k in ("options", "think", "keep_alive", "format")):
        return "ollama-chat"
    for m in messages if isinstance(messages, list) else ():
        if not isinstance(m, dict):
            continue
        if "tool_name" in m or "thinking" in m or "images" in m:
            return "ollama-chat"
        for call in m.get("tool_calls") or ():
            args = call.get("function", {}).get("arguments") if isinstance(call, dict) else None
            if isinstance(args, dict):
                return "ollama-chat"
    return "openai-chat"


def detect_wire(body: Any) -> tuple[str, BodyKind]:
    """Which wire a body is in, and whether it is a request, a reply or raw stream text.

    Raises `WireFormatError` when the body matches no wire.
    """
    if isinstance(body, bytes | str):
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        return _detect_stream(text), "stream"
    if not isinstance(body, Mapping):
        raise WireFormatError(f"expected a JSON object, got {type(body).__name__}")
    if "contents" in body:
        return "gemini-generate", "request"
    if "candidates" in body or "promptFeedback" in body:
        return "gemini-generate", "response"
    if body.get("object") == "response" or ("output" in body and "status" in body):
        return "openai-responses", "response"
    if "input" in body or "instructions" in body:
        return "openai-responses", "request"
    if "choices" in body:
        return "openai-chat", "response"
    if body.get("type") == "message" and "content" in body:
        return "anthropic-messages", "response"
    if "done" in body and "message" in body:
        return "ollama-chat", "response"
    if "messages" in body:
        return _chat_flavour(body), "request"
    raise WireFormatError(
        "this JSON is not a request or reply of any known wire: expected keys such as "
        "'messages', 'input', 'contents', 'choices', 'content', 'output' or 'candidates'"
    )


def _detect_stream(text: str) -> str:
    head = text.lstrip()[:4000]
    if "event: message_start" in head or '"type":"message_start"' in head.replace(" ", ""):
        return "anthropic-messages"
    if "event: response." in head or '"type":"response.' in head.replace(" ", ""):
        return "openai-responses"
    if "chat.completion.chunk" in head or "data: [DONE]" in text:
        return "openai-chat"
    if '"candidates"' in head:
        return "gemini-generate"
    if head.startswith("{") and '"done"' in head:
        return "ollama-chat"
    raise WireFormatError("this text is not a stream of any known wire")
