"""Streamed replies written in the client's wire as the upstream's events arrive.

Owns `Writer`, what every wire's writer shares, and `writer_for`, the writer a client's wire
record names (``live_writer``: `toolwire.proxy.writers` holds the built-in wires'). A
writer takes the upstream's stream events one by one (`toolwire.events`: text, reasoning, a
call started, a fragment of its arguments) and returns the bytes the client's wire streams
for each, at once; `finish` takes the whole reply (its stop, its usage) and returns the
stream's last events, which the client wire's own codec writes (``encode_stream`` of the whole
reply, its tail). Every streamed call id is the one the client's wire gets for the upstream's
(`toolwire.proxy.ids.to_client`), the same id the whole reply holds.

Reasoning streams as readable text in the client wire's reasoning block, as it comes. A
provider signs or encrypts its reasoning only once the whole reply is read, so the sealed block
that brings it back (`toolwire.proxy.carry`), and the seal of what the upstream keeps on its
calls (Gemini's thought signatures), are written as whole reasoning blocks at the end of the
stream, their text left out when it was streamed already. A reply to a client whose wire's
record names no writer is written whole once the upstream's stream has ended.

Must not import: the server.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from toolwire.codecs import get_codec
from toolwire.codecs.base import dumps as dumps
from toolwire.codecs.registry import get_wire
from toolwire.events import (
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from toolwire.proxy.answers import Answer
from toolwire.proxy.ids import to_client
from toolwire.transcript import ReasoningPart, Reply, Request, ToolCallPart, replace

_UUID_FIXED = 0xF << 44 | 0x3 << 30
_UUID_SET = 0x4 << 44 | 0x2 << 30
"""The bits of a version 4 UUID's first 96 that are not random: its version nibble (4) and
its variant's two bits (10)."""


def random_id() -> str:
    """24 random hex digits, as ``uuid.uuid4().hex[:24]`` writes them (its version and
    variant digits in their places), made from 12 random bytes without a `uuid.UUID`."""
    return "%024x" % (int.from_bytes(os.urandom(12)) & ~_UUID_FIXED | _UUID_SET)


class Writer:
    """What every writer shares: the client's wire and request, the reply's id, and the calls
    seen so far (upstream index -> position among the client's calls)."""

    TAIL = 0
    """How many of the whole reply's last stream events end a live stream."""
    ID_PREFIX = ""

    def __init__(self, wire: str, request: Request) -> None:
        self.wire = wire
        self.request = request
        self.reply_id = self.ID_PREFIX + random_id()
        self.calls: dict[int, int] = {}
        self.reasoned = False
        """Whether reasoning text was streamed (the sealed blocks at the end then carry
        none, so that the client does not show it twice)."""

    def head(self) -> list[bytes]:
        raise NotImplementedError

    def feed(self, event: StreamEvent) -> list[bytes]:
        """The client's bytes for one upstream event (nothing for one it does not show)."""
        if isinstance(event, TextDelta) and event.text:
            return self.text(event.text)
        if isinstance(event, ReasoningDelta) and event.text:
            self.reasoned = True
            return self.reasoning(event.text)
        if isinstance(event, ToolCallStarted):
            self.calls[event.index] = len(self.calls)
            return self.call(self.calls[event.index], to_client(event.id, self.wire),
                             event.name)
        if isinstance(event, ToolCallDelta) and event.index in self.calls and event.fragment:
            return self.arguments(self.calls[event.index], event.fragment)
        if isinstance(event, ToolCallFinished) and event.index in self.calls:
            call = replace(event.call, id=to_client(event.call.id, self.wire))
            return self.finished(self.calls[event.index], call)
        return []

    def text(self, text: str) -> list[bytes]:
        raise NotImplementedError

    def reasoning(self, text: str) -> list[bytes]:
        raise NotImplementedError

    def call(self, position: int, call_id: str, name: str) -> list[bytes]:
        raise NotImplementedError

    def arguments(self, position: int, fragment: str) -> list[bytes]:
        raise NotImplementedError

    def finished(self, position: int, call: ToolCallPart) -> list[bytes]:
        """The bytes for a call whose arguments are complete (nothing, for a wire that
        streamed them as they came)."""
        return []

    def finish(self, reply: Reply) -> list[bytes]:
        """The stream's end: what is still open closed, the sealed blocks, then the whole
        reply's tail."""
        return [*self.close(), *self.sealed_blocks(reply), *self.tail(reply)]

    def tail(self, reply: Reply) -> list[bytes]:
        """The whole reply's last `TAIL` stream events, as the client wire's codec writes
        them."""
        whole = get_codec(self.wire).encode_stream(reply, request=self.request)
        return whole[len(whole) - self.TAIL:]

    def sealed(self, reply: Reply) -> list[dict[str, Any]]:
        """The reply's reasoning blocks in the client's wire (`toolwire.proxy.carry`), written
        after the rest: reasoning that came once the stream had begun, and the seal of what
        the upstream keeps on its calls, so that they come back on the next turn."""
        found = (p.provider_data.get(self.wire) for p in reply.message.parts
                 if isinstance(p, ReasoningPart) and p.provider_data is not None)
        return [block for block in found if isinstance(block, dict)]

    def sealed_blocks(self, reply: Reply) -> list[bytes]:
        return [chunk for block in self.sealed(reply)
                for chunk in self.block(block, readable=not self.reasoned)]

    def block(self, block: dict[str, Any], *, readable: bool) -> list[bytes]:
        """One reasoning block of the client's wire, whole (its text left out unless
        ``readable``)."""
        return []

    def close(self) -> list[bytes]:
        return []

    def failed(self, error: Answer) -> list[bytes]:
        """The event that ends a stream the upstream failed part of the way through, in the
        client's wire; nothing for a wire without one (the stream just ends)."""
        return []


_LOADED: dict[str, type[Writer]] = {}
"""The writer classes imported so far, by their ``module:Class``."""


def writer_for(wire: str, request: Request) -> Writer | None:
    """The live writer for a client speaking ``wire`` (the class its record's ``live_writer``
    names); None when replies to it are written whole."""
    try:
        where = get_wire(wire).live_writer
    except ValueError:
        return None
    if where is None:
        return None
    made = _LOADED.get(where)
    if made is None:
        module, _, name = where.partition(":")
        found = getattr(importlib.import_module(module), name)
        if not (isinstance(found, type) and issubclass(found, Writer)):
            raise TypeError(f"{wire}'s live_writer {where!r} is not a toolwire.proxy.live.Writer")
        made = _LOADED[where] = found
    return made(wire, request)


__all__ = ["Writer", "dumps", "random_id", "writer_for"]
