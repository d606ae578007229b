"""A small HTTP/1.1 server on asyncio streams, enough for the provider emulator.

Owns `serve`: keep-alive connections, ``Content-Length`` request bodies, whole responses and
chunked streamed responses. Serves 127.0.0.1 only. Knows nothing about wire formats: the
handler gets an `HttpRequest` and returns an `HttpResponse`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

_REASONS = {
    200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
    405: "Method Not Allowed", 413: "Payload Too Large", 422: "Unprocessable Entity",
    429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway",
    503: "Service Unavailable", 529: "Overloaded",
}


@dataclass(slots=True)
class HttpRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes


@dataclass(slots=True)
class HttpResponse:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    chunks: AsyncIterator[bytes] | None = None  # streamed with chunked transfer encoding
    drop: bool = False  # close the connection after the response (or after the chunks)
    head_only: bool = False  # the answer to a HEAD request: the head, no body


Handler = Callable[[HttpRequest], Awaitable[HttpResponse]]


async def _read_request(reader: asyncio.StreamReader) -> HttpRequest | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    lines = head[:-4].decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if colon:
            headers[name.strip().lower()] = value.strip()
    body = b""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while True:
            size = int((await reader.readline()).strip().split(b";")[0], 16)
            if size == 0:
                await reader.readline()
                break
            parts.append(await reader.readexactly(size))
            await reader.readline()
        body = b"".join(parts)
    elif "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    if target.startswith("/"):  # the usual origin form: no need for a URL parser
        path, _, query = target.partition("?")
    else:
        url = urlsplit(target)
        path, query = url.path, url.query
    return HttpRequest(method, path, parse_qs(query) if query else {}, headers, body)


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _write_response(writer: asyncio.StreamWriter, resp: HttpResponse) -> None:
    headers = dict(resp.headers)
    if resp.drop:
        headers["connection"] = "close"
    if resp.chunks is None:
        headers["content-length"] = str(len(resp.body))
        writer.write(_head(resp.status, headers) + (b"" if resp.head_only else resp.body))
        await writer.drain()
        return
    headers["transfer-encoding"] = "chunked"
    headers.setdefault("cache-control", "no-cache")
    writer.write(_head(resp.status, headers))
    async for chunk in resp.chunks:
        if chunk:
            writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            await writer.drain()
    if not resp.drop:
        writer.write(b"0\r\n\r\n")
        await writer.drain()


async def _connection(handler: Handler, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            request = await _read_request(reader)
            if request is None:
                break
            response = await handler(request)
            await _write_response(writer, response)
            if response.drop or request.headers.get("connection", "").lower() == "close":
                break
    except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
        pass
    finally:
        writer.close()
        # Stopping the server cancels this task, maybe here: it ends quietly all the same.
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await writer.wait_closed()


class HttpServer:
    """A running server: its port, and `aclose` that ends every open connection.

    ``connections`` counts the connections accepted so far (to check that clients reuse them).
    """

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0
        self.connections = 0

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> HttpServer:
        self._server = await asyncio.start_server(self._on_connect, host, port, backlog=2048,
                                                  limit=2**24)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def _on_connect(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # type: ignore[arg-type]
        try:
            await _connection(self._handler, reader, writer)
        finally:
            self._tasks.discard(task)  # type: ignore[arg-type]

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def serve(handler: Handler, host: str = "127.0.0.1", port: int = 0) -> HttpServer:
    """Start serving on ``host``; the bound port is ``server.port``."""
    return await HttpServer(handler).start(host, port)
