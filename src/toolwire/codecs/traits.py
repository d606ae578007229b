"""What a request holds that the usual one does not, found in one pass over it: the checks and
fixes around every wire's ``encode`` (freeform calls, tools added mid-conversation, media
limits, system messages, cache markers and betas a caller wrote) ask `traits` instead of each
walking the request or the body again.

`encoding` wraps a codec's whole ``encode``: while it runs, `traits` of the request it was
given is found once and remembered (a context variable, so threads and tasks encoding at once
never share it), and forgotten when it returns, so no request outlives its encode. Outside an
encode, or for a request a wrapper replaced, `traits` walks the request again. Imports only
the transcript; no wire module.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, NamedTuple, TypeVar

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


_current: ContextVar[tuple[Request, Traits] | None] = ContextVar("toolwire_traits",
                                                                  default=None)


def traits(request: Request) -> Traits:
    """`Traits` of ``request``: remembered while `encoding` encodes it, else found now."""
    current = _current.get()
    if current is not None and current[0] is request:
        return current[1]
    return scan(request)


R = TypeVar("R")


EVERY = Traits(True, True, True, True, True, True)
"""What makes every check take its general path: the same body as the usual paths give."""


def encoding(encode: Callable[[Request], R],
             found: Callable[[Request], Traits] = scan) -> Callable[[Request], R]:
    """``encode`` with `traits` of its request found once for the whole call (``found``: how;
    an encode inside another of the same request keeps what the outer one found)."""

    @functools.wraps(encode)
    def encoded(request: Request) -> R:
        current = _current.get()
        if current is not None and current[0] is request:
            return encode(request)
        token = _current.set((request, found(request)))
        try:
            return encode(request)
        finally:
            _current.reset(token)

    return encoded


__all__ = ["EVERY", "Traits", "encoding", "scan", "traits"]
