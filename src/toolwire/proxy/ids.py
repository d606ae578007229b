"""Tool-call ids across two wires, with no state kept between requests.

Owns `to_client`, `from_client`, `reply_for_client` and `request_for_upstream`. An id the
upstream gave that the client's wire accepts as it is goes to the client unchanged. One it does
not accept (a character outside the wire's set, or longer than the wire allows) goes as
``twx_`` followed by the id in unpadded URL-safe base64, which every wire's id rules accept
(letters, digits, ``_`` and ``-``), so that when the client sends it back in its history the
upstream gets its own id again. An id too long even for that goes as ``twh_`` and a digest of
it: the same id every turn, though not the upstream's own (its calls and results still pair).

Nothing here is stored: the same upstream id maps to the same client id in every process, so
several proxies behind one load balancer agree.

Must not import: a codec module, the transport or anything that does I/O.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re

from toolwire.codecs.registry import get_wire
from toolwire.transcript import Message, Reply, Request, ToolCallPart, ToolResultPart, replace

ENCODED = "twx_"
"""The prefix of an upstream id written in base64 for the client's wire."""
HASHED = "twh_"
"""The prefix of an upstream id too long to carry whole: a digest of it."""

MAX_LENGTH = {"openai-chat": 40, "bedrock-converse": 64}
"""The longest call id each wire accepts, where it limits them (OpenAI's Chat Completions
refuses a ``tool_call_id`` over 40 characters; Bedrock's pattern stops at 64)."""

_SAFE = re.compile(r"[A-Za-z0-9_-]+")


def _fits(call_id: str, wire: str) -> bool:
    if not call_id or len(call_id) > MAX_LENGTH.get(wire, 256):
        return False
    pattern = get_wire(wire).rules.id_pattern
    return pattern is None or pattern.fullmatch(call_id) is not None


def to_client(call_id: str, wire: str) -> str:
    """The id the client (speaking ``wire``) gets for the upstream's ``call_id``."""
    if _fits(call_id, wire) and not call_id.startswith((ENCODED, HASHED)):
        return call_id
    packed = ENCODED + base64.urlsafe_b64encode(call_id.encode()).decode().rstrip("=")
    if _fits(packed, wire):
        return packed
    digest = hashlib.sha256(call_id.encode()).digest()
    hashed = HASHED + base64.urlsafe_b64encode(digest).decode().rstrip("=")
    return hashed[: MAX_LENGTH.get(wire, len(hashed))]


def from_client(call_id: str) -> str:
    """The upstream's own id for an id the client sends back (`to_client` undone); any other
    id is returned as it is."""
    if not call_id.startswith(ENCODED) or not _SAFE.fullmatch(call_id[len(ENCODED):]):
        return call_id
    text = call_id[len(ENCODED):]
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return call_id


def _message_ids(message: Message, wire: str | None) -> Message:
    parts = []
    changed = False
    for part in message.parts:
        if isinstance(part, ToolCallPart):
            new = to_client(part.id, wire) if wire is not None else from_client(part.id)
            if new != part.id:
                part, changed = replace(part, id=new), True
        elif isinstance(part, ToolResultPart):
            new = to_client(part.call_id, wire) if wire is not None else from_client(part.call_id)
            if new != part.call_id:
                part, changed = replace(part, call_id=new), True
        parts.append(part)
    return replace(message, parts=tuple(parts)) if changed else message


def reply_for_client(reply: Reply, wire: str) -> Reply:
    """``reply`` with every call id as the client's ``wire`` gets it (`to_client`)."""
    message = _message_ids(reply.message, wire)
    return reply if message is reply.message else replace(reply, message=message)


def request_for_upstream(request: Request) -> Request:
    """``request`` with every id the client sent back as the upstream gave it (`from_client`)."""
    messages = tuple(_message_ids(m, None) for m in request.messages)
    if all(a is b for a, b in zip(messages, request.messages, strict=True)):
        return request
    return replace(request, messages=messages)


__all__ = ["ENCODED", "HASHED", "MAX_LENGTH", "from_client", "reply_for_client",
           "request_for_upstream", "to_client"]
