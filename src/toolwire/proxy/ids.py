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
import functools
import hashlib
import re
from collections.abc import Callable

from toolwire.codecs.record import WireRules
from toolwire.codecs.registry import get_wire
from toolwire.transcript import (
    Message,
    Part,
    Reply,
    Request,
    ToolCallPart,
    ToolResultPart,
    replace,
)

ENCODED = "twx_"
"""The prefix of an upstream id written in base64 for the client's wire."""
HASHED = "twh_"
"""The prefix of an upstream id too long to carry whole: a digest of it."""

_UNLIMITED = 256
"""The longest id kept whole for a wire whose record sets no limit (``id_max_length``)."""

_SAFE = re.compile(r"[A-Za-z0-9_-]+")


def longest(wire: str) -> int:
    """The longest call id the client's ``wire`` gets whole (its record's ``id_max_length``;
    OpenAI's Chat Completions refuses a ``tool_call_id`` over 40 characters)."""
    return get_wire(wire).rules.id_max_length or _UNLIMITED


def _fits(call_id: str, rules: WireRules) -> bool:
    if not call_id or len(call_id) > (rules.id_max_length or _UNLIMITED):
        return False
    return rules.id_pattern is None or rules.id_pattern.fullmatch(call_id) is not None


def to_client(call_id: str, wire: str) -> str:
    """The id the client (speaking ``wire``) gets for the upstream's ``call_id``."""
    rules = get_wire(wire).rules
    if _fits(call_id, rules) and not call_id.startswith((ENCODED, HASHED)):
        return call_id
    packed = ENCODED + base64.urlsafe_b64encode(call_id.encode()).decode().rstrip("=")
    if _fits(packed, rules):
        return packed
    digest = hashlib.sha256(call_id.encode()).digest()
    hashed = HASHED + base64.urlsafe_b64encode(digest).decode().rstrip("=")
    return hashed[: rules.id_max_length or len(hashed)]


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


def each_part(message: Message, change: Callable[[Part], Part]) -> Message:
    """``message`` with ``change`` made to each of its parts (the same value when no part
    changed)."""
    parts = tuple(change(part) for part in message.parts)
    if all(a is b for a, b in zip(parts, message.parts, strict=True)):
        return message
    return replace(message, parts=parts)


def each_message(request: Request, change: Callable[[Part], Part]) -> Request:
    """``request`` with ``change`` made to each part of each message."""
    messages = tuple(each_part(m, change) for m in request.messages)
    if all(a is b for a, b in zip(messages, request.messages, strict=True)):
        return request
    return replace(request, messages=messages)


def _ids(wire: str | None) -> Callable[[Part], Part]:
    mapped = functools.partial(to_client, wire=wire) if wire is not None else from_client

    def change(part: Part) -> Part:
        if isinstance(part, ToolCallPart):
            new = mapped(part.id)
            return part if new == part.id else replace(part, id=new)
        if isinstance(part, ToolResultPart):
            new = mapped(part.call_id)
            return part if new == part.call_id else replace(part, call_id=new)
        return part

    return change


def reply_for_client(reply: Reply, wire: str) -> Reply:
    """``reply`` with every call id as the client's ``wire`` gets it (`to_client`)."""
    message = each_part(reply.message, _ids(wire))
    return reply if message is reply.message else replace(reply, message=message)


def holds(request: Request, kinds: type | tuple[type, ...]) -> bool:
    """Whether a part of one of ``request``'s messages is one of ``kinds``."""
    return any(isinstance(p, kinds) for m in request.messages for p in m.parts)


def request_for_upstream(request: Request) -> Request:
    """``request`` with every id the client sent back as the upstream gave it (`from_client`)."""
    if not holds(request, (ToolCallPart, ToolResultPart)):  # no id to give back: as it came
        return request
    return each_message(request, _ids(None))


__all__ = ["ENCODED", "HASHED", "each_message", "each_part", "from_client", "holds", "longest",
           "reply_for_client", "request_for_upstream", "to_client"]
