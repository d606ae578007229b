"""HTTP/1.1 over plain TCP for httpx2: `Http1Transport`, an `httpx2.AsyncBaseTransport`.

Owns the connection pool (idle connections per host and port, a connection limit, waiting for
a free connection), writing requests, reading responses (status line, headers, bodies framed by
``Content-Length``, by chunks or by the end of the connection) and mapping failures to httpx2's
own exceptions. Only ``http://`` URLs: `toolwire.http.transport.HttpTransport` mounts it for
them and leaves ``https://`` and proxies to httpx2's stock transport. The bytes of one response
are read by `toolwire.http.connection`. Must not import anything else from toolwire.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable, Mapping

import httpx2

from toolwire.http.connection import (
    CHUNKED,
    EMPTY,
    UNTIL_CLOSE,
    ChunkDecoder,
    Connection,
    Head,
    Unanswered,
)

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})

Key = tuple[str, int]
Answered = tuple[bytes, int, bytes, list[tuple[bytes, bytes]], httpx2.AsyncByteStream]
"""An answer's head and its body to read: HTTP version, status, reason, raw headers, body."""


class Http1Transport(httpx2.AsyncBaseTransport):
    """Plain-HTTP/1.1 connections kept alive and reused, at most ``max_connections`` open.

    A request waits for a free connection when all are busy (up to the request's ``pool``
    timeout). Idle connections are reused last-in first-out and closed after
    ``keepalive_expiry`` seconds unused; one the server closed is never reused. A request sent
    on a reused connection that closes before any byte of the answer is sent again, once, on a
    new connection (the server closed an idle connection while the request was on its way).
    """

    def __init__(self, *, max_connections: int = 100, keepalive_expiry: float = 5.0) -> None:
        if max_connections < 1:
            raise ValueError(f"max_connections must be at least 1, got {max_connections}")
        self.max_connections = max_connections
        self.keepalive_expiry = keepalive_expiry
        self._idle: dict[Key, deque[Connection]] = {}
        self._open: set[Connection] = set()
        self._count = 0  # connections open or being opened: at most max_connections
        self._waiters: deque[tuple[Key, asyncio.Future[Connection | None]]] = deque()

    @property
    def connections(self) -> int:
        """Connections open now, busy or idle."""
        return self._count

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        if url.scheme != "http":
            raise httpx2.UnsupportedProtocol(
                f"this transport sends plain http:// requests only, not {url.scheme}:// "
                f"({url}); mount it for 'http://' and leave other schemes to httpx2")
        timeouts: Mapping[str, float | None] = request.extensions.get("timeout") or {}
        try:
            body = request.content
        except httpx2.RequestNotRead:
            body = b"".join([part async for part in request.stream])  # type: ignore[union-attr]
        head, close = request_head(request, body)
        version, status, reason, headers, stream = await self.open(
            request.method, url, head, body, close, timeouts)
        return httpx2.Response(status, headers=headers, stream=stream,
                               extensions={"http_version": version, "reason_phrase": reason})

    async def open(self, method: str, url: httpx2.URL, head: bytes, body: bytes, close: bool,
                   timeouts: Mapping[str, float | None]) -> Answered:
        """A request sent (``head``, from `head_bytes`, then ``body``) and its answer's head
        read: its HTTP version, status, reason, raw headers, and its body as a stream (read
        it to the end, or close it, to give the connection back). For a caller that has no
        `httpx2.Request` to give (`toolwire.http.transport.HttpTransport`, for plain HTTP)."""
        if len(body) < 65536:  # one write; a large body goes on its own rather than copied
            data, rest = head + body, b""
        else:
            data, rest = head, body
        key = (url.host, url.port or 80)
        conn, reused = await self._checkout(key, timeouts)
        try:
            answer = await self._exchange(conn, data, rest, method, timeouts)
        except Unanswered as failed:
            if not reused:
                raise failed.error from None
            # A reused connection the server had just closed: once more, on a new one.
            conn, _ = await self._checkout(key, timeouts, fresh=True)
            try:
                answer = await self._exchange(conn, data, rest, method, timeouts)
            except Unanswered as again:
                raise again.error from None
        version, status, reason, headers, length, keep = answer
        keep = keep and not close
        stream: httpx2.AsyncByteStream
        if length == EMPTY:
            self._done(conn, keep)
            stream = _Whole(b"")
        elif 0 <= length <= len(conn.buf):
            whole = conn.take(length)
            self._done(conn, keep)
            stream = _Whole(whole)
        else:
            stream = _Body(self, conn, length, keep, timeouts.get("read"))
        return version, status, reason, headers, stream

    async def _exchange(self, conn: Connection, data: bytes, rest: bytes, method: str,
                        timeouts: Mapping[str, float | None]) -> Head:
        """Send on ``conn`` and read the answer's head; a connection that failed is closed."""
        try:
            return await conn.exchange(data, rest, method, timeouts)
        except BaseException:
            self._discard(conn)
            raise

    # ------------------------------------------------------------------ the pool

    async def _checkout(self, key: Key, timeouts: Mapping[str, float | None], *,
                        fresh: bool = False) -> tuple[Connection, bool]:
        """A connection to ``key``: an idle one (True), else (or when ``fresh``) a new one
        (False)."""
        idle = None if fresh else self._idle.get(key)
        if idle:
            now = time.monotonic()
            while idle:
                conn = idle.pop()
                if conn.reusable(now, self.keepalive_expiry):
                    return conn, True
                self._discard(conn)
        if self._count < self.max_connections:
            self._count += 1
        elif not self._evict_idle():
            handed = await self._wait_for_slot(key, timeouts.get("pool"))
            if handed is not None:
                if handed.healthy and not fresh:
                    return handed, True
                self._close(handed)  # its slot is ours: open a new connection in it
        return await self._connect(key, timeouts.get("connect")), False

    def _evict_idle(self) -> bool:
        """At the limit: close an idle connection to another host to free its slot for us."""
        for idle in self._idle.values():
            if idle:
                self._close(idle.popleft())
                return True
        return False

    async def _wait_for_slot(self, key: Key, timeout: float | None) -> Connection | None:
        """Wait until a busy connection is given back: that connection when it goes to
        ``key``, else None (its slot, for a new connection)."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[Connection | None] = loop.create_future()
        self._waiters.append((key, waiter))
        timer = None if timeout is None else loop.call_later(
            timeout, _expire, waiter, httpx2.PoolTimeout(
                f"no connection to {key[0]}:{key[1]} came free within the {timeout:g} s pool "
                f"timeout: all {self.max_connections} were busy; raise max_connections or "
                "the timeout"))
        try:
            return await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                given = waiter.result()  # handed over just as this request gave up
                if given is None:
                    self._release()
                else:
                    self._done(given, True)
            raise
        finally:
            if timer is not None:
                timer.cancel()

    async def _connect(self, key: Key, timeout: float | None) -> Connection:
        """Open a connection in a slot already counted; the slot is released on failure."""
        host, port = key
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                _, conn = await loop.create_connection(lambda: Connection(key, loop), host, port)
        except BaseException as exc:
            self._release()
            if isinstance(exc, TimeoutError):
                raise httpx2.ConnectTimeout(
                    f"could not connect to {host}:{port} within the {timeout:g} s connect "
                    "timeout" if timeout is not None else
                    f"connecting to {host}:{port} timed out") from exc
            if isinstance(exc, OSError):
                raise httpx2.ConnectError(
                    f"could not connect to {host}:{port}: {exc.strerror or exc}; is the "
                    "server running on that port?") from exc
            raise
        self._open.add(conn)
        return conn

    def _done(self, conn: Connection, keep: bool) -> None:
        """A response is over: keep the connection for the next request, or close it."""
        if not keep or not conn.healthy:
            self._discard(conn)
            return
        waiters = self._waiters
        while waiters:
            key, waiter = waiters.popleft()
            if waiter.done():
                continue  # timed out or cancelled
            if key == conn.key:
                waiter.set_result(conn)
            else:
                self._close(conn)
                waiter.set_result(None)
            return
        conn.idle_since = now = time.monotonic()
        idle = self._idle.get(conn.key)
        if idle is None:
            idle = self._idle[conn.key] = deque()
        elif idle and not idle[0].reusable(now, self.keepalive_expiry):
            self._discard(idle.popleft())  # the oldest, one per call: the deque stays fresh
        idle.append(conn)

    def _close(self, conn: Connection) -> None:
        """Close a connection whose slot stays taken (the caller reuses or releases it)."""
        self._open.discard(conn)
        conn.close()

    def _release(self) -> None:
        """A slot came free: to the first request waiting for one, else back to the pool."""
        waiters = self._waiters
        while waiters:
            _, waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._count -= 1

    def _discard(self, conn: Connection) -> None:
        self._close(conn)
        self._release()

    async def aclose(self) -> None:
        """Close every connection, idle or busy; requests waiting for one fail."""
        waiters, self._waiters = self._waiters, deque()
        for key, waiter in waiters:
            if not waiter.done():
                waiter.set_exception(httpx2.PoolTimeout(
                    f"the transport was closed while a request to {key[0]}:{key[1]} waited "
                    "for a connection"))
        idle, self._idle = self._idle, {}
        for conns in idle.values():
            for conn in conns:
                self._discard(conn)
        for conn in list(self._open):
            conn.close()  # busy: its request fails and gives the slot back


def _expire(waiter: asyncio.Future[Connection | None], error: Exception) -> None:
    if not waiter.done():
        waiter.set_exception(error)


def request_head(request: httpx2.Request, body: bytes) -> tuple[bytes, bool]:
    """The request line and headers of ``request`` as bytes, and whether it asks to close
    (`head_bytes`)."""
    return head_bytes(request.method, request.url, request.headers.raw, body)


def head_bytes(method: str, url: httpx2.URL, headers: Iterable[tuple[bytes, bytes]],
               body: bytes) -> tuple[bytes, bool]:
    """The request line and ``headers`` as bytes, and whether they ask to close.

    The body is sent whole with its ``Content-Length`` (any ``Transfer-Encoding`` or
    ``Content-Length`` the request carried is replaced); a ``Host`` header is added if missing.
    """
    start, close = head_start(method, url, headers)
    return start + head_end(method, body), close


def head_start(method: str, url: httpx2.URL, headers: Iterable[tuple[bytes, bytes]]
               ) -> tuple[bytes, bool]:
    """`head_bytes` up to the body's length: the request line and the headers (a ``Host``
    added if missing, any length or transfer coding left out), and whether they ask to
    close. The same for every body, so a sender may keep it."""
    lines = [method.encode("ascii"), b" ", url.raw_path, b" HTTP/1.1\r\n"]
    host = close = False
    for name, value in headers:
        lower = name.lower()
        if lower == b"content-length" or lower == b"transfer-encoding":
            continue
        if lower == b"host":
            host = True
        elif lower == b"connection":
            close = b"close" in value.lower()
        lines += (name, b": ", value, b"\r\n")
    if not host:
        port = url.port
        netloc = url.raw_host if port in (None, 80) else b"%s:%d" % (url.raw_host, port)
        if url.raw_host.find(b":") >= 0:
            netloc = (b"[%s]" % url.raw_host if port in (None, 80)
                      else b"[%s]:%d" % (url.raw_host, port))
        lines[4:4] = (b"Host: ", netloc, b"\r\n")
    return b"".join(lines), close


def head_end(method: str, body: bytes) -> bytes:
    """The end of `head_bytes` after `head_start`: the body's length, when there is a body or
    the method takes one, and the blank line."""
    return b"Content-Length: %d\r\n\r\n" % len(body) if body or method in _BODY_METHODS \
        else b"\r\n"


class _Whole(httpx2.AsyncByteStream):
    """A body read already (or no body): one piece, the connection given back before."""

    __slots__ = ("_data",)

    def __init__(self, data: bytes) -> None:
        self._data = data

    def __aiter__(self) -> _Whole:  # type: ignore[override]
        return self  # a plain iterator: cheaper than an async generator for one piece

    async def __anext__(self) -> bytes:
        data, self._data = self._data, b""
        if not data:
            raise StopAsyncIteration
        return data


class _Body(httpx2.AsyncByteStream):
    """A body still arriving: each piece is passed on as it comes. Read to the end, the
    connection goes back to the pool; closed before the end, the connection is closed."""

    def __init__(self, owner: Http1Transport, conn: Connection, length: int, keep: bool,
                 timeout: float | None) -> None:
        self._owner = owner
        self._conn: Connection | None = conn
        self._length = length
        self._keep = keep
        self._timeout = timeout

    async def __aiter__(self) -> AsyncIterator[bytes]:
        conn = self._conn
        if conn is None:
            return
        if self._length == CHUNKED:
            decoder = ChunkDecoder()
            while True:
                piece = decoder.feed(conn.buf)
                conn.consumed()
                if decoder.done:
                    self._finish(self._keep)
                    if piece:
                        yield piece
                    return
                if piece:
                    yield piece
                    continue
                await conn.more(self._timeout, "in the middle of a chunked body")
        elif self._length == UNTIL_CLOSE:
            while True:
                if conn.buf:
                    yield conn.take(len(conn.buf))
                    continue
                if conn.ended:
                    conn.raise_reset()
                    self._finish(False)
                    return
                await conn.more(self._timeout, "")
        else:
            left = self._length
            while left:
                if conn.buf:
                    piece = conn.take(min(left, len(conn.buf)))
                    left -= len(piece)
                    if not left:
                        self._finish(self._keep)
                    yield piece
                    continue
                await conn.more(self._timeout, f"after {self._length - left} of the "
                                               f"{self._length} body bytes it announced")

    def _finish(self, keep: bool) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            self._owner._done(conn, keep)

    async def aclose(self) -> None:
        self._finish(False)
