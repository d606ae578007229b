"""An upstream's signed or encrypted reasoning, carried inside the client's transcript.

Owns `reply_for_client` and `request_for_upstream`. Reasoning a provider signs (Anthropic's
thinking signature, Bedrock's) or encrypts (the Responses API's ``encrypted_content``) must come
back to it unchanged on the next turn, or a run with reasoning breaks. When the client speaks
another wire, the proxy seals the upstream's own reasoning block (its wire and the block as it
came, as ``twr1.`` and URL-safe base64 JSON) into the client wire's own opaque field for
reasoning:

====================  ================================================
client wire           where the sealed block rides
====================  ================================================
Anthropic             a ``thinking`` block's ``signature``
Responses             a ``reasoning`` item's ``encrypted_content``
Bedrock Converse      ``reasoningContent.reasoningText.signature``
Gemini                a thought part's ``thoughtSignature`` (base64 of the sealed text)
Gemini Interactions   a ``thought`` step's ``signature`` (base64 of the sealed text)
====================  ================================================

Each wire's record says where (`toolwire.codecs.record.Wire.carrier`), so a wire registered
later carries reasoning once its record names a carrier.

Clients send these fields back untouched (it is what their SDKs do for the provider's own), so
on the next turn the proxy opens the seal and the upstream gets its block back as it sent it.
What the upstream keeps on its calls (Gemini's thought signature on a function call) is sealed
the same way, by call id, in one reasoning block of its own with no text, and put back on the
calls on the next turn.
Nothing is stored. Chat Completions and Ollama have no such field: there the reasoning reaches
the client as readable text only, and the loss is reported. An upstream that refuses its own
turns' calls without their signature (Gemini's thinking models) gets, on calls that come back
without one, the placeholder it documents for history it did not write (`with_placeholders`,
by the upstream record's ``unsigned_calls``).

Must not import: a codec module, the transport or anything that does I/O.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from toolwire.codecs.reasoning import Carrier
from toolwire.codecs.record import Wire
from toolwire.codecs.registry import get_wire
from toolwire.proxy.ids import each_message, each_part, from_client, holds
from toolwire.transcript import (
    JSON,
    Message,
    Part,
    ReasoningPart,
    Reply,
    Request,
    ToolCallPart,
    replace,
)

MARK = "twr1."
"""What a sealed block begins with."""


def seal(wire: str, data: JSON, *, calls: bool = False) -> str:
    """``data`` (wire ``wire``'s own reasoning block, or with ``calls`` its data for each call
    of a reply, by call id) as one opaque string."""
    text = json.dumps({"wire": wire, "calls" if calls else "data": data}, ensure_ascii=False,
                      separators=(",", ":"))
    return MARK + base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def open_seal(sealed: str) -> tuple[str, JSON] | None:
    """The wire and block `seal` made ``sealed`` from (a reasoning block; for a seal of
    calls, ``{"calls": ...}``); None for any other string."""
    if not sealed.startswith(MARK):
        return None
    body = sealed[len(MARK):]
    try:
        found = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(found, dict) or not isinstance(found.get("wire"), str):
        return None
    if isinstance(found.get("calls"), dict):
        return found["wire"], {"calls": found["calls"]}
    return found["wire"], found.get("data")


def _envelope(client: str, text: str, sealed: str) -> dict[str, Any] | None:
    """The client wire's own reasoning block holding ``sealed``; None when it has none."""
    carrier = _carrier(client)
    return carrier.wrap(text, sealed) if carrier is not None else None


def _sealed_in(client: str, data: Any) -> str | None:
    """The sealed text in the client wire's reasoning block ``data``, if it holds one."""
    carrier = _carrier(client)
    return carrier.unwrap(data) if carrier is not None and data is not None else None


def _carrier(wire: str) -> Carrier | None:
    try:
        return get_wire(wire).carrier
    except ValueError:  # a wire no longer registered carries nothing
        return None


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
    calls = {p.id: p.provider_data[upstream] for p in message.parts
             if isinstance(p, ToolCallPart) and p.provider_data is not None
             and upstream in p.provider_data and client not in p.provider_data}
    if calls:  # Gemini's thought signatures on its calls, which must come back with them
        envelope = _envelope(client, "", seal(upstream, calls, calls=True))
        if envelope is None:
            notes.append(f"field_dropped: what {upstream} keeps on its calls (a thought "
                         f"signature) has no field in {client} to travel in")
        else:
            held = ReasoningPart(text="", provider_data={client: envelope})
            message = replace(message, parts=(held, *message.parts))
    return (reply if message is reply.message else replace(reply, message=message)), notes


def request_for_upstream(request: Request, client: str) -> Request:
    """``request`` with every sealed reasoning block the client sent back opened: the part
    holds the upstream's own block again, under the upstream's wire."""
    if not holds(request, ReasoningPart):  # only a reasoning part holds a seal: as it came
        return request
    return opened_all(request, client)


def opened_all(request: Request, client: str) -> Request:
    """`request_for_upstream`'s walk over every part, whatever the request holds."""

    def change(part: Part) -> Part:
        opened = _opened(part, client)
        if opened is None or (isinstance(opened[1], dict) and "calls" in opened[1]):
            return part
        wire, data = opened
        return replace(part, provider_data={wire: data})

    request = each_message(request, change)
    messages = tuple(_calls_back(m, client) for m in request.messages)
    if all(a is b for a, b in zip(messages, request.messages, strict=True)):
        return request
    return replace(request, messages=messages)


def _opened(part: Part, client: str) -> tuple[str, JSON] | None:
    """What a reasoning part the client sent back holds sealed, if anything."""
    if not isinstance(part, ReasoningPart) or part.provider_data is None:
        return None
    sealed = _sealed_in(client, part.provider_data.get(client))
    return open_seal(sealed) if sealed is not None else None


def _calls_back(message: Message, client: str) -> Message:
    """``message`` with a seal of its calls' data taken out and the data put back on them."""
    found: dict[str, tuple[str, JSON]] = {}
    kept: list[Part] = []
    for part in message.parts:
        opened = _opened(part, client)
        if opened is not None and isinstance(opened[1], dict) and "calls" in opened[1]:
            calls = opened[1]["calls"]
            if isinstance(calls, dict):
                found.update({from_client(k): (opened[0], v) for k, v in calls.items()})
            continue
        kept.append(part)
    if len(kept) == len(message.parts):
        return message
    parts = [replace(p, provider_data={**(p.provider_data or {}), found[p.id][0]: found[p.id][1]})
             if isinstance(p, ToolCallPart) and p.id in found else p for p in kept]
    return replace(message, parts=tuple(parts))


def with_placeholders(request: Request, upstream: Wire) -> Request:
    """``request`` set to send the ``upstream`` wire's placeholder signature on calls that came
    back without their own (a client whose wire has no field to keep it in, or that dropped
    it); calls whose signature came back keep theirs. As it is for a wire with none."""
    setting = upstream.unsigned_calls
    if setting is None:
        return request
    options = dict(request.provider_options or {})
    options[upstream.name] = {**setting, **(options.get(upstream.name) or {})}
    return replace(request, provider_options=options)


__all__ = ["MARK", "open_seal", "reply_for_client", "request_for_upstream",
           "seal", "with_placeholders"]
