"""The event store that makes ``mcp-serve``'s SSE streams resumable (2025-11-25 and older).

Owns `MemoryEventStore`, the SDK's ``EventStore`` kept in memory: each event a stream sends
(the priming event included) is numbered and kept, at most `MemoryEventStore.limit` in all, the
oldest dropped first; a client that reconnects with ``Last-Event-ID`` gets the events of that
stream sent after it. With a store the SDK starts each POST stream with a priming event (an id
and empty data) and a ``retry`` delay, so a client whose stream ends mid-call reconnects and
gets the rest. The 2026-07-28 protocol has no resumable streams; the store is not used there.

The SDK names a stream by its request's id (or one name for every session's GET stream), which
clients of different sessions share, and shares one store among the sessions. `sessions_apart`
wraps the HTTP app so that every event is kept under the session it was sent in (the task
serving a session inherits its opening request's mark) and is replayed to that session alone.
Must not import the loop, codecs or the transport.
"""

from __future__ import annotations

import contextvars
import itertools
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage

__all__ = ["MemoryEventStore", "sessions_apart"]


class SessionMark:
    """What keeps one session's events apart from another's (compared by identity)."""


_SESSION: contextvars.ContextVar[SessionMark | None] = contextvars.ContextVar(
    "toolwire_mcp_sse_session", default=None)


class MemoryEventStore(EventStore):
    """SSE events kept in memory for replay, the newest ``limit`` of them."""

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self._numbers = itertools.count(1)
        self._events: OrderedDict[int, tuple[SessionMark | None, StreamId,
                                             JSONRPCMessage | None]] = OrderedDict()

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        number = next(self._numbers)
        self._events[number] = (_SESSION.get(), stream_id, message)
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
        if found is None or found[0] is not _SESSION.get():
            return None  # unknown, forgotten, or another session's
        session, stream, _ = found
        for number, (owner, name, message) in list(self._events.items()):
            if number > last and owner is session and name == stream and message is not None:
                await send_callback(EventMessage(message, str(number)))
        return stream


Asgi = Callable[[MutableMapping[str, Any], Callable[[], Awaitable[Any]],
                 Callable[[MutableMapping[str, Any]], Awaitable[None]]], Awaitable[None]]


def sessions_apart(app: Asgi) -> Asgi:
    """``app`` with each HTTP request marked with its session, for `MemoryEventStore`."""
    marks: weakref.WeakValueDictionary[str, SessionMark] = weakref.WeakValueDictionary()

    async def marked(scope: MutableMapping[str, Any], receive: Callable[[], Awaitable[Any]],
                     send: Callable[[MutableMapping[str, Any]], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        named = _header(scope.get("headers", ()), b"mcp-session-id")
        mark = (marks.get(named) if named else None) or SessionMark()

        async def sending(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start" and not named:
                opened = _header(message.get("headers", ()), b"mcp-session-id")
                if opened:
                    marks[opened] = mark  # the session this request opened
            await send(message)

        token = _SESSION.set(mark)
        try:
            await app(scope, receive, sending)
        finally:
            _SESSION.reset(token)

    return marked


def _header(headers: Any, name: bytes) -> str | None:
    for key, value in headers:
        if bytes(key).lower() == name:
            return bytes(value).decode("latin-1")
    return None
