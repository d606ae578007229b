"""An upstream's signed or encrypted reasoning, carried inside the client's transcript.

Owns `reply_for_client` and `request_for_upstream`. Reasoning a provider signs (Anthropic's
thinking signature, Bedrock's) or encrypts (the Responses API's ``encrypted_content``) must come
back to it unchanged on the next turn, or a run with reasoning breaks. When the client speaks
another wire, the proxy seals the upstream's own reasoning block (its wire and the block as it
came, as ``twr1.`` and URL-safe base64 JSON) into the client wire's own opaque field for
reasoning:

================  ================================================
client wire       where the sealed block rides
================  ================================================
Anthropic         a ``thinking`` block's ``signature``
Responses         a ``reasoning`` item's ``encrypted_content``
Bedrock Converse  ``reasoningContent.reasoningText.signature``
Gemini            a thought part's ``thoughtSignature`` (base64 of the sealed text)
================  ================================================

Clients send these fields back untouched (it is what their SDKs do for the provider's own), so
on the next turn the proxy opens the seal and the upstream gets its block back as it sent it.
Nothing is stored. Chat Completions and Ollama have no such field: there the reasoning reaches
the client as readable text only, and the loss is reported.

Must not import: a codec module, the transport or anything that does I/O.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from toolwire.proxy.ids import each_message, each_part
from toolwire.transcript import JSON, Part, ReasoningPart, Reply, Request, replace

MARK = "twr1."
"""What a sealed block begins with."""


def seal(wire: str, data: JSON) -> str:
    """``data`` (wire ``wire``'s own reasoning block) as one opaque string."""
    text = json.dumps({"wire": wire, "data": data}, ensure_ascii=False, separators=(",", ":"))
    return MARK + base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def open_seal(sealed: str) -> tuple[str, JSON] | None:
    """The wire and block `seal` made ``sealed`` from; None for any other string."""
    if not sealed.startswith(MARK):
        return None
    body = sealed[len(MARK):]
    try:
        found = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(found, dict) or not isinstance(found.get("wire"), str):
        return None
    return found["wire"], found.get("data")


def _envelope(client: str, text: str, sealed: str) -> dict[str, Any] | None:
    """The client wire's own reasoning block holding ``sealed``; None when it has none."""
    if client == "anthropic-messages":
        return {"type": "thinking", "thinking": text, "signature": sealed}
    if client == "openai-responses":
        digest = hashlib.sha256(sealed.encode()).hexdigest()[:32]
        summary = [{"type": "summary_text", "text": text}] if text else []
        return {"type": "reasoning", "id": f"rs_{digest}", "summary": summary,
                "encrypted_content": sealed}
    if client == "bedrock-converse":
        return {"reasoningText": {"text": text, "signature": sealed}}
    if client == "gemini-generate":
        return {"thought": True, "text": text,
                "thoughtSignature": base64.b64encode(sealed.encode()).decode()}
    return None


def _sealed_in(client: str, data: Any) -> str | None:
    """The sealed text in the client wire's reasoning block ``data``, if it holds one."""
    if not isinstance(data, Mapping):
        return None
    found: Any = None
    if client == "anthropic-messages":
        found = data.get("signature")
    elif client == "openai-responses":
        found = data.get("encrypted_content")
    elif client == "bedrock-converse":
        readable = data.get("reasoningText")
        found = readable.get("signature") if isinstance(readable, Mapping) else None
    elif client == "gemini-generate":
        signature = data.get("thoughtSignature")
        if isinstance(signature, str):
            try:
                found = base64.b64decode(signature + "=" * (-len(signature) % 4),
                                         altchars=b"-_" if "-" in signature or "_" in signature
                                         else None).decode()
            except (binascii.Error, ValueError, UnicodeDecodeError):
                found = None
    return found if isinstance(found, str) else None


def reply_for_client(reply: Reply, client: str, upstream: str) -> tuple[Reply, list[str]]:
    """``reply`` with the upstream's reasoning sealed into the client's wire, and a note for
    each reasoning block the client's wire cannot carry."""
    notes: list[str] = []

    def change(part: Part) -> Part:
        if not isinstance(part, ReasoningPart) or part.provider_data is None:
            return part
        own = part.provider_data.get(upstream)
        if own is None or client in part.provider_data:
            return part
        envelope = _envelope(client, part.text, seal(upstream, own))
        if envelope is None:
            notes.append(f"reasoning_dropped: {upstream} reasoning has no field in {client} "
                         "to travel in; the client gets its text only, and the next turn "
                         "goes without it")
            return part
        return replace(part, provider_data={**part.provider_data, client: envelope})

    message = each_part(reply.message, change)
    return (reply if message is reply.message else replace(reply, message=message)), notes


def request_for_upstream(request: Request, client: str) -> Request:
    """``request`` with every sealed reasoning block the client sent back opened: the part
    holds the upstream's own block again, under the upstream's wire."""

    def change(part: Part) -> Part:
        if not isinstance(part, ReasoningPart) or part.provider_data is None:
            return part
        sealed = _sealed_in(client, part.provider_data.get(client))
        opened = open_seal(sealed) if sealed is not None else None
        if opened is None:
            return part
        wire, data = opened
        return replace(part, provider_data={wire: data})

    return each_message(request, change)


__all__ = ["MARK", "open_seal", "reply_for_client", "request_for_upstream", "seal"]
