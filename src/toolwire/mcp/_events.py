"""The event store that makes ``mcp-serve``'s SSE streams resumable (2025-11-25 and older).

Owns `MemoryEventStore`, the SDK's ``EventStore`` kept in memory: each event a stream sends
(the priming event included) is numbered and kept, at most `MemoryEventStore.limit` in all, the
oldest dropped first; a client that reconnects with ``Last-Event-ID`` gets the events of that
stream sent after it. With a store the SDK starts each POST stream with a priming event (an id
and empty data) and a ``retry`` delay, so a client whose stream ends mid-call reconnects and
gets the rest. The 2026-07-28 protocol has no resumable streams; the store is not used there.
Must not import the loop, codecs or the transport.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage

__all__ = ["MemoryEventStore"]


class MemoryEventStore(EventStore):
    """SSE events kept in memory for replay, the newest ``limit`` of them."""

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self._numbers = itertools.count(1)
        self._events: OrderedDict[int, tuple[StreamId, JSONRPCMessage | None]] = OrderedDict()

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        number = next(self._numbers)
        self._events[number] = (stream_id, message)
        while len(self._events) > self.limit:
            self._events.popitem(last=False)
        return str(number)

    async def replay_events_after(self, last_event_id: EventId,
                                  send_callback: EventCallback) -> StreamId | None:
        try:
            last = int(last_event_id)
        except ValueError:
            return None
        found = self._events.get(last)
        if found is None:
            return None
        stream = found[0]
        for number, (owner, message) in list(self._events.items()):
            if number > last and owner == stream and message is not None:
                await send_callback(EventMessage(message, str(number)))
        return stream
