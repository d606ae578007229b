"""The proxy's ASGI plumbing, with nothing between uvicorn and the proxy's handler.

Owns `Incoming` (one request as the ASGI scope gives it: method, path as it came, headers,
query, body), `respond` (an answer or a stream sent through ASGI ``send``: a stream's head
goes out with its status and headers, then each chunk as it comes; a client that goes away
ends the stream, which closes the upstream's) and `lifespan` (the server's start and stop
messages, the stop running the given clean-up). A web framework's routing, middleware and
response classes cost more on every request than the proxy's one handler needs.

Must not import: the command line.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

from toolwire.proxy.answers import Answer
from toolwire.proxy.forward import Streamed

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class Incoming:
    """One HTTP request: ``method``, ``path`` as it came on the wire (a model id
    percent-encoded in it stays one segment), ``headers`` (names lowercase), ``query``."""

    __slots__ = ("_query", "headers", "method", "path", "receive", "scope")

    def __init__(self, scope: Scope, receive: Receive) -> None:
        self.scope = scope
        self.receive = receive
        self.method: str = scope["method"]
        raw = scope.get("raw_path")
        self.path: str = raw.decode("latin-1") if raw else scope["path"]
        self.headers: dict[str, str] = {k.decode("latin-1").lower(): v.decode("latin-1")
                                        for k, v in scope["headers"]}
        self._query: dict[str, str] | None = None

    @property
    def query(self) -> dict[str, str]:
        """The query's parameters (the last of a repeated name)."""
        if self._query is None:
            text = self.scope.get("query_string", b"").decode("latin-1")
            self._query = dict(parse_qsl(text, keep_blank_values=True))
        return self._query

    async def body(self, limit: int) -> bytes | None:
        """The body, or None past ``limit`` bytes (read no further); what came before the
        client went away."""
        parts: list[bytes] = []
        size = 0
        while True:
            message = await self.receive()
            if message["type"] != "http.request":
                break
            part = message.get("body", b"")
            size += len(part)
            if size > limit:
                return None
            parts.append(part)
            if not message.get("more_body", False):
                break
        return b"".join(parts)


def _head(status: int, headers: dict[str, str], length: int | None = None) -> Message:
    raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    if length is not None:
        raw.append((b"content-length", str(length).encode()))
    return {"type": "http.response.start", "status": status, "headers": raw}


async def respond(send: Send, receive: Receive, result: Answer | Streamed) -> None:
    """``result`` sent to the client: a whole answer with its length, or a stream chunk by
    chunk. A stream stops when the client has gone away (its chunks are closed, which closes
    the upstream's stream); the check is made between chunks, so it costs no task of its
    own per chunk."""
    if not isinstance(result, Streamed):
        status, headers, body = result
        await send(_head(status, headers, len(body)))
        await send({"type": "http.response.body", "body": body, "more_body": False})
        return
    await send(_head(result.status, result.headers))
    gone = asyncio.ensure_future(receive())
    chunks: AsyncIterator[bytes] = result.chunks
    try:
        async for chunk in chunks:
            if gone.done() and gone.result().get("type") == "http.disconnect":
                return
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    finally:
        gone.cancel()
        close = getattr(chunks, "aclose", None)
        if close is not None:
            await close()


async def lifespan(receive: Receive, send: Send,
                   stopping: Callable[[], Awaitable[None]]) -> None:
    """Answer the server's start and stop messages; ``stopping`` runs at the stop."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            with contextlib.suppress(Exception):
                await stopping()
            await send({"type": "lifespan.shutdown.complete"})
            return


__all__ = ["Incoming", "lifespan", "respond"]
