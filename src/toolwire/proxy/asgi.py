"""The proxy's own ASGI layer: a request read from the server's scope, an answer sent back.

Owns `Incoming` (what the proxy reads of a request: method, path as it came, headers, query,
body within a bound), `send_answer` (a whole answer) and `send_stream` (a streamed one), and
`lifespan` (the server's start and stop). Plain ASGI, with no framework between uvicorn and the
proxy: a request's first byte goes out as soon as the upstream's does, with no task started
before it. While a stream runs, one task listens for the client going away (the server says
so with ``http.disconnect``); it is started after the first chunk has gone, and when the
client goes away it stops the stream where it waits, which closes the upstream's stream too.

Must not import: anything of the proxy above `toolwire.proxy.answers`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

METHODS = ("GET", "HEAD", "POST")
"""The methods the proxy serves; any other is answered 405."""


class Gone(Exception):
    """The client went away before its request's body had come whole."""


class Incoming:
    """One request as the proxy reads it from ``scope``: ``method``, ``path`` (the path as it
    came on the wire, percent-encoding kept, so that a model id encoded in it stays one
    segment), ``raw_path`` and ``query_string`` (bytes), ``headers`` (names in lower case, the
    last of a repeated header kept) and ``query`` (read on first use)."""

    __slots__ = ("_query", "headers", "method", "path", "query_string", "raw_path", "receive")

    def __init__(self, scope: Scope, receive: Receive) -> None:
        self.method: str = scope["method"]
        raw = scope.get("raw_path") or scope["path"].encode()
        self.raw_path: bytes = raw
        self.path = raw.decode("latin-1")
        self.query_string: bytes = scope.get("query_string") or b""
        self.headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                        for k, v in scope["headers"]}
        self.receive = receive
        self._query: dict[str, str] | None = None

    @property
    def query(self) -> dict[str, str]:
        """The query's parameters (the last of a repeated one kept; blank values kept)."""
        if self._query is None:
            text = self.query_string.decode("latin-1")
            self._query = dict(parse_qsl(text, keep_blank_values=True)) if text else {}
        return self._query

    async def body(self, limit: int) -> bytes | None:
        """The request's body, or None past ``limit`` bytes (read no further). Raises `Gone`
        when the client goes away first."""
        parts: list[bytes] = []
        size = 0
        while True:
            message = await self.receive()
            if message["type"] != "http.request":
                raise Gone
            part = message.get("body", b"")
            if part:
                size += len(part)
                if size > limit:
                    return None
                parts.append(part)
            if not message.get("more_body", False):
                break
        return parts[0] if len(parts) == 1 else b"".join(parts)


def _head(status: int, headers: dict[str, str], length: int | None) -> Message:
    pairs = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    if length is not None and "content-length" not in headers:
        pairs.append((b"content-length", str(length).encode()))
    return {"type": "http.response.start", "status": status, "headers": pairs}


async def send_answer(send: Send, status: int, headers: dict[str, str], body: bytes) -> None:
    """A whole answer: its head (with its length) and its body."""
    await send(_head(status, headers, len(body)))
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def send_stream(send: Send, receive: Receive, status: int, headers: dict[str, str],
                      chunks: AsyncIterator[bytes]) -> bool:
    """A streamed answer, each chunk sent as it comes; True when it was sent whole, False
    when the client went away first (``chunks`` is then closed where it waits, so that what
    feeds it learns of it: its ``finally`` runs)."""
    task = asyncio.current_task()
    assert task is not None
    gone: list[bool] = []
    watcher: asyncio.Task[None] | None = None

    async def watch() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        if not finished:
            gone.append(True)
            task.cancel()

    finished = False
    try:
        await send(_head(status, headers, None))
        async for chunk in chunks:
            if chunk:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            if watcher is None:
                watcher = asyncio.ensure_future(watch())
        finished = True
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return True
    except asyncio.CancelledError:
        if not gone:
            raise
        task.uncancel()
        return False
    finally:
        finished = True
        if watcher is not None and not watcher.done():
            watcher.cancel()
        close = getattr(chunks, "aclose", None)
        if close is not None:
            await close()


async def lifespan(receive: Receive, send: Send, stop: Callable[[], Awaitable[None]]
                   ) -> None:
    """The server's start and stop; ``stop`` runs when the server stops."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            try:
                await stop()
            finally:
                await send({"type": "lifespan.shutdown.complete"})
            return


__all__ = ["METHODS", "Gone", "Incoming", "Receive", "Scope", "Send", "lifespan",
           "send_answer", "send_stream"]
