"""What a request holds that the usual one does not, found in one pass over it: the checks and
fixes around a wire's ``encode`` (freeform calls, tools added mid-conversation, media limits,
system messages, cache markers and betas a caller wrote) ask `traits` instead of each walking
the request or the body again, or, for one answer while the pass was not made, a quicker
question of their own (`freeform`, `adds_tools`, `media`).

`encoding` wraps the whole ``encode`` of a codec some of whose checks need the whole pass (the
per-model fixes of Anthropic's, `toolwire.codecs.per_model`): while it runs, `traits` of the
request it was given is found once and remembered (a context variable, so threads and tasks
encoding at once never share it), and forgotten when it returns, so no request outlives its
encode. Outside it, or for a request a wrapper replaced, `traits` walks the request again.
An encoder whose own walk over the usual request already tells what it holds hands that to
`settle` instead, and the pass is never made.
Imports only the transcript; no wire module.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, NamedTuple, TypeVar

import msgspec

from toolwire.message_parts import (
    MediaPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from toolwire.transcript import Request


class Traits(NamedTuple):
    """What one pass over a request found (True: the request holds some)."""

    freeform: bool
    """A freeform tool (the request's or a message's) or a freeform call in an assistant turn."""
    media: bool
    """A media part outside the assistant turns, or a tool result made of parts."""
    added: bool
    """A message adding tools (``Message.tools``)."""
    empty_system: bool
    """A system message without parts."""
    system: bool
    """A system message."""
    verbatim: bool
    """Anything in a wire's own words that an encoder may copy into the body as it is:
    provider options, a message's or a part's provider data, an opaque part, a tool result
    made of parts, a part of a kind the pass does not know. A body encoded from a request
    without any holds only what the encoder wrote itself (no caller's cache marker, no tool
    addition block but those of the tools messages add)."""


def scan(request: Request) -> Traits:
    """`Traits` of ``request``, found by walking it once."""
    freeform = False
    for spec in request.tools:
        if spec.freeform:
            freeform = True
    media = added = empty_system = system = False
    verbatim = request.provider_options is not None
    part: Any  # told apart by its exact type below, the cheapest test
    for message in request.messages:
        if message.provider_data is not None:
            verbatim = True
        if message.tools:
            added = True
            for spec in message.tools:
                if spec.freeform:
                    freeform = True
        role = message.role
        if role == "assistant":
            for part in message.parts:
                kind = type(part)
                if kind is ToolCallPart:
                    if part.freeform:
                        freeform = True
                elif kind is not TextPart and kind is not ReasoningPart:
                    verbatim = True  # opaque, a result, media or a kind not known: as written
                    continue
                if part.provider_data is not None:
                    verbatim = True
            continue
        if role == "system":
            system = True
            if not message.parts:
                empty_system = True
        for part in message.parts:
            kind = type(part)
            if kind is ToolResultPart:
                if type(part.content) is not str:
                    verbatim = media = True
            elif kind is MediaPart:
                media = True
            elif kind is not TextPart and kind is not ToolCallPart and kind is not ReasoningPart:
                verbatim = True  # opaque, or a kind not known: as the caller wrote it
                continue
            if part.provider_data is not None:
                verbatim = True
    return Traits(freeform, media, added, empty_system, system, verbatim)


class _Slot(msgspec.Struct, gc=False):
    """The request an encode was given, how to find its `Traits`, and them once asked for (a
    struct: made in one step, where a class with an ``__init__`` runs a function)."""

    request: Request
    find: Callable[[Request], Traits]
    found: Traits | None = None


_current: ContextVar[_Slot | None] = ContextVar("toolwire_traits", default=None)


def traits(request: Request) -> Traits:
    """`Traits` of ``request``: found once while `encoding` encodes it, else found now."""
    slot = _current.get()
    if slot is None or slot.request is not request:
        return scan(request)
    if slot.found is None:
        slot.found = slot.find(request)
    return slot.found


def settle(request: Request, found: Traits | None = None) -> None:
    """While `encoding` encodes ``request`` and its traits are not yet found: remember
    ``found`` (what an encoder's own walk over the request established), or find them now
    (the whole pass, for the checks to come). Elsewhere it does nothing."""
    slot = _current.get()
    if slot is not None and slot.request is request and slot.found is None:
        slot.found = found if found is not None else slot.find(request)


def known(request: Request) -> Traits | None:
    """`Traits` of ``request`` when this encode has already found them, else None: a check
    needing one answer asks its own quicker question then (`freeform`, `adds_tools`,
    `media`), so a wire none of whose checks needs the whole pass never pays for it."""
    slot = _current.get()
    return slot.found if slot is not None and slot.request is request else None


def freeform(request: Request) -> bool:
    """Whether ``request`` has a freeform tool or a freeform call in an assistant turn."""
    found = known(request)
    if found is not None:
        return found.freeform
    for spec in request.tools:
        if spec.freeform:
            return True
    for message in request.messages:
        for spec in message.tools:
            if spec.freeform:
                return True
        if message.role == "assistant":
            for part in message.parts:
                if type(part) is ToolCallPart and part.freeform:
                    return True
    return False


def adds_tools(request: Request) -> bool:
    """Whether a message of ``request`` adds tools, or is a system message without parts."""
    found = known(request)
    if found is not None:
        return found.added or found.empty_system
    for message in request.messages:
        if message.tools or (message.role == "system" and not message.parts):
            return True
    return False


def media(request: Request) -> bool:
    """Whether ``request`` has a media part outside the assistant turns, or a tool result
    made of parts."""
    found = known(request)
    if found is not None:
        return found.media
    part: Any
    for message in request.messages:
        if message.role == "assistant":
            continue  # a model's turns hold no media a request sends
        for part in message.parts:
            kind = type(part)
            if kind is MediaPart or (kind is ToolResultPart and type(part.content) is not str):
                return True
    return False


R = TypeVar("R")


def noting(encode: Callable[[Request], R], request: Request) -> tuple[R, Traits | None]:
    """``encode(request)``, and the `Traits` of ``request`` found while it ran (by the pass or
    an encoder's own walk; None when nothing asked for them): what a caller of an encode may
    know of the request afterwards without walking it itself."""
    current = _current.get()
    if current is not None and current.request is request:
        return encode(request), current.found
    slot = _Slot(request, scan)
    token = _current.set(slot)
    try:
        return encode(request), slot.found
    finally:
        _current.reset(token)


EVERY = Traits(True, True, True, True, True, True)
"""What makes every check take its general path: the same body as the usual paths give."""


def encoding(encode: Callable[[Request], R],
             found: Callable[[Request], Traits] = scan) -> Callable[[Request], R]:
    """``encode`` with `traits` of its request found at most once for the whole call
    (``found``: how; an encode inside another of the same request keeps the outer one's)."""

    @functools.wraps(encode)
    def encoded(request: Request) -> R:
        current = _current.get()
        if current is not None and current.request is request:
            return encode(request)
        slot = _Slot(request, found)
        if found is not scan:  # told what to find: every check asks it, none looks itself
            slot.found = found(request)
        token = _current.set(slot)
        try:
            return encode(request)
        finally:
            _current.reset(token)

    return encoded


__all__ = ["EVERY", "Traits", "adds_tools", "encoding", "freeform", "known", "media",
           "noting", "scan", "settle", "traits"]
