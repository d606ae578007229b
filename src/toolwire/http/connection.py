"""One plain-HTTP/1.1 connection on asyncio: `Connection`, the response head and the chunks.

Owns `Connection` (an `asyncio.Protocol`: the bytes received so far, waiting for more with a
timeout, writing a request and reading the head of its response), `parse_head` (status line,
headers, and how the body is framed) and `ChunkDecoder` (``Transfer-Encoding: chunked``, chunk
extensions and trailers). Failures are httpx2's exceptions. The pool and the body streams live
in `toolwire.http.plain`. Must not import anything else from toolwire.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from typing import cast

import httpx2

EMPTY = -1
"""Framing: the response has no body (HEAD, 1xx, 204, 304)."""
CHUNKED = -2
"""Framing: ``Transfer-Encoding: chunked``."""
UNTIL_CLOSE = -3
"""Framing: the body ends when the server closes the connection."""

MAX_HEAD = 65536
"""The most bytes a response head (status line and headers) may take."""
_TIMER_SLACK = 0.001
"""How early a timer may fire and still count as on time (uvloop's timers keep milliseconds)."""
_HIGH_WATER = 1 << 18  # stop reading from the socket above this many unread bytes
_LOW_WATER = 1 << 16  # and read again below this many

_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")
_SIZE_LINE = re.compile(rb"([0-9A-Fa-f]{1,16})\r\n")
"""A chunk's size line as servers write it: the size and CRLF, no extension."""
_DIGITS = re.compile(rb"[0-9]{1,19}")

Head = tuple[bytes, int, bytes, list[tuple[bytes, bytes]], int, bool]
"""(http version, status, reason, headers, body length or framing, keep the connection)."""


class Unanswered(Exception):
    """The connection ended before any byte of the response: ``error`` is what to raise if the
    request is not sent again on a new connection."""

    def __init__(self, error: httpx2.TransportError) -> None:
        super().__init__(str(error))
        self.error = error


class Connection(asyncio.Protocol):
    """A TCP connection to one server: what it sent that was not read yet (``buf``), whether
    it ended, and one reader waiting for more."""

    def __init__(self, key: tuple[str, int], loop: asyncio.AbstractEventLoop) -> None:
        self.key = key
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.ended = False
        self.error: Exception | None = None
        self.idle_since = 0.0
        self._waiter: asyncio.Future[None] | None = None
        self._deadline: tuple[float, float, asyncio.Future[None]] | None = None
        """The read wait under way: its deadline (the loop's time), timeout and future."""
        self._timer: asyncio.TimerHandle | None = None  # the read timer (see `_wait`)
        self._reading_paused = False
        self._writing_paused = False

    # ------------------------------------------------------------------ asyncio callbacks

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # Not an isinstance check: other event loops' transports (uvloop's) do not derive from
        # asyncio's classes, though they have every method a stream transport has.
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.buf += data
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)
        if len(self.buf) > _HIGH_WATER and not self._reading_paused:
            self._reading_paused = True
            assert self.transport is not None
            self.transport.pause_reading()

    def eof_received(self) -> bool:
        self.ended = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True
        if exc is not None and self.error is None:
            self.error = exc
        self._stop_timer()
        self._wake()

    def pause_writing(self) -> None:
        self._writing_paused = True

    def resume_writing(self) -> None:
        self._writing_paused = False
        self._wake()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # ------------------------------------------------------------------ state

    @property
    def healthy(self) -> bool:
        """Open, nothing unread and the last request written out: fit to carry another."""
        return not self.ended and not self.buf and not self._writing_paused

    def reusable(self, now: float, expiry: float) -> bool:
        """Fit for another request after being idle since ``idle_since``."""
        return self.healthy and now - self.idle_since <= expiry

    def close(self) -> None:
        if not self.ended:
            self.ended = True
            self.error = ConnectionAbortedError("closed on this side")
        self._stop_timer()
        if self.transport is not None:
            self.transport.abort()

    def where(self) -> str:
        return f"{self.key[0]}:{self.key[1]}"

    # ------------------------------------------------------------------ reading

    def take(self, n: int) -> bytes:
        """The first ``n`` unread bytes (there must be that many)."""
        buf = self.buf
        if n == len(buf):
            data = bytes(buf)
            buf.clear()
        else:
            data = bytes(buf[:n])
            del buf[:n]
        if self._reading_paused:
            self.consumed()
        return data

    def consumed(self) -> None:
        """Unread bytes were taken: read from the socket again once few are left."""
        if self._reading_paused and len(self.buf) < _LOW_WATER and self.transport is not None:
            self._reading_paused = False
            self.transport.resume_reading()

    async def more(self, timeout: float | None, where: str) -> None:
        """Wait for more bytes; raise if the connection ended (``where`` says in what)."""
        if self.ended:
            if self.error is not None:
                raise httpx2.ReadError(f"the connection to {self.where()} broke {where}: "
                                       f"{self.error}")
            raise httpx2.RemoteProtocolError(f"the server at {self.where()} closed the "
                                             f"connection {where}")
        await self._wait(timeout)

    def raise_reset(self) -> None:
        """Raise if the connection ended with an error rather than a clean close."""
        if self.error is not None:
            raise httpx2.ReadError(f"the connection to {self.where()} broke: {self.error}")

    async def _wait(self, timeout: float | None) -> None:
        waiter = self._waiter = self.loop.create_future()
        if timeout is None:
            await waiter
            return
        # One timer for the connection, not one per wait: a wait only sets its deadline, and
        # the timer, when it fires, ends the wait then under way if its deadline has come, and
        # otherwise is set again for that wait's deadline (or for none, when none waits).
        deadline = self.loop.time() + timeout
        self._deadline = (deadline, timeout, waiter)
        timer = self._timer
        if timer is None or timer.when() > deadline:
            if timer is not None:
                timer.cancel()
            self._timer = self.loop.call_at(deadline, self._check_deadline)
        try:
            await waiter
        finally:
            self._deadline = None

    def _check_deadline(self) -> None:
        """The read timer fired: time out the wait under way if its deadline has come."""
        self._timer = None
        under_way = self._deadline
        if under_way is None:  # none waits: the next wait sets the timer again
            return
        deadline, timeout, waiter = under_way
        if deadline - self.loop.time() <= _TIMER_SLACK:
            self._timed_out(waiter, timeout, httpx2.ReadTimeout)
        else:  # a later wait than the one the timer was set for
            self._timer = self.loop.call_at(deadline, self._check_deadline)

    def _stop_timer(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    def _timed_out(self, waiter: asyncio.Future[None], timeout: float,
                   kind: type[httpx2.TimeoutException]) -> None:
        if not waiter.done():
            what = "read" if kind is httpx2.ReadTimeout else "write"
            waiter.set_exception(kind(
                f"{self.where()} sent nothing for {timeout:g} s (the {what} timeout)"))

    # ------------------------------------------------------------------ one exchange

    async def exchange(self, data: bytes, rest: bytes, method: str,
                       timeouts: Mapping[str, float | None]) -> Head:
        """Send a request (``data`` then ``rest``) and read the head of its final response.

        Raises `Unanswered` when the connection ends before any byte of a response came.
        """
        transport = self.transport
        assert transport is not None
        if not self.ended:
            transport.write(data)
            if rest:
                transport.write(rest)
            if self._writing_paused:
                await self._drain(timeouts.get("write"))
        read_timeout = timeouts.get("read")
        answered = False
        # No head end starts before index `since` of buf: a head that trickles in is searched
        # once per byte, not once per arrival.
        since = 0
        while True:
            found = parse_head(self.buf, method, since) if self.buf else None
            if found is None:
                since = max(0, len(self.buf) - 2)
                if self.ended:
                    if not self.buf and not answered:
                        raise Unanswered(self._unanswered())
                    raise httpx2.RemoteProtocolError(
                        f"the server at {self.where()} closed the connection in the middle "
                        f"of a response head: {bytes(self.buf[:80])!r}")
                if len(self.buf) > MAX_HEAD:
                    raise httpx2.RemoteProtocolError(
                        f"the response head from {self.where()} is longer than {MAX_HEAD} "
                        "bytes")
                await self._wait(read_timeout)
                continue
            size, head = found
            del self.buf[:size]
            since = 0
            status = head[1]
            if 100 <= status < 200 and status != 101:
                answered = True  # an interim response: the final one follows
                continue
            return head

    def _unanswered(self) -> httpx2.TransportError:
        if self.error is not None:
            return httpx2.ReadError(f"the connection to {self.where()} broke before any "
                                    f"answer came: {self.error}")
        return httpx2.RemoteProtocolError(f"the server at {self.where()} closed the "
                                          "connection without answering")

    async def _drain(self, timeout: float | None) -> None:
        """Wait until the request is written out (the socket took what was buffered), or the
        server answers before reading all of it (then the connection is not reused)."""
        while self._writing_paused and not self.ended and not self.buf:
            waiter = self._waiter = self.loop.create_future()
            timer = None if timeout is None else self.loop.call_later(
                timeout, self._timed_out, waiter, timeout, httpx2.WriteTimeout)
            try:
                await waiter
            finally:
                if timer is not None:
                    timer.cancel()
        if self.ended and self.error is not None and not self.buf:
            raise Unanswered(httpx2.WriteError(
                f"the connection to {self.where()} broke while sending the request: "
                f"{self.error}"))


def parse_head(buf: bytearray, method: str, since: int = 0) -> tuple[int, Head] | None:
    """The response head at the start of ``buf`` and its size in bytes, or None while it is
    incomplete. Lines may end with CRLF or a bare LF. The blank line that ends the head is
    searched for from ``since`` on (the caller knows none starts before)."""
    end = buf.find(b"\n\r\n", since)
    bare = buf.find(b"\n\n", since, end if end >= 0 else len(buf))
    if bare >= 0:
        end, size = bare, bare + 2
    elif end >= 0:
        size = end + 3
    else:
        return None
    lines = bytes(buf[:end]).split(b"\n")
    first = lines[0].rstrip(b"\r")
    parts = first.split(b" ", 2)
    version = parts[0]
    if (version != b"HTTP/1.1" and version != b"HTTP/1.0") or len(parts) < 2 \
            or len(parts[1]) != 3 or not parts[1].isdigit():
        raise httpx2.RemoteProtocolError(
            f"the server did not answer with an HTTP/1.x status line: {first[:80]!r}")
    status = int(parts[1])
    reason = parts[2] if len(parts) == 3 else b""
    headers: list[tuple[bytes, bytes]] = []
    coding: bytes | None = None  # the last transfer coding, when there is one
    lengths: set[bytes] = set()
    tokens = b""
    for line in lines[1:]:
        if line[-1:] == b"\r":
            line = line[:-1]
        if line[:1] == b" " or line[:1] == b"\t":  # an obsolete folded continuation
            if not headers:
                raise httpx2.RemoteProtocolError(f"a header line starts with a space: {line!r}")
            name, value = headers[-1]
            headers[-1] = (name, value + b" " + line.strip(b" \t"))
            continue
        name, colon, value = line.partition(b":")
        if not colon or not name or name.find(b" ") >= 0 or name.find(b"\t") >= 0:
            raise httpx2.RemoteProtocolError(f"a malformed header line: {line[:80]!r}")
        value = value.strip(b" \t")
        headers.append((name, value))
        lower = name.lower()
        if lower == b"content-length":
            lengths.update(v.strip() for v in value.split(b","))
        elif lower == b"transfer-encoding":
            coding = value.lower().rsplit(b",", 1)[-1].strip()
        elif lower == b"connection":
            tokens += b"," + value.lower()
    # `find`, not `in`: `in` first tries its operand as a number, making and dropping an error
    keep = (tokens.find(b"close") < 0 if version == b"HTTP/1.1"
            else tokens.find(b"keep-alive") >= 0)
    if status == 101:
        return size, (version, status, reason, headers, EMPTY, False)
    if method == "HEAD" or status < 200 or status == 204 or status == 304:
        return size, (version, status, reason, headers, EMPTY, keep)
    if coding is not None:
        # Chunked, or read until the close; framed both ways at once, never reused.
        length = CHUNKED if coding == b"chunked" else UNTIL_CLOSE
        keep = keep and not lengths
    elif lengths:
        text = b", ".join(sorted(lengths))
        if len(lengths) > 1 or not _DIGITS.fullmatch(text):
            raise httpx2.RemoteProtocolError(
                f"the response has an invalid Content-Length: {text!r}")
        length = int(text)
    else:
        length = UNTIL_CLOSE
    if length == UNTIL_CLOSE:
        keep = False
    return size, (version, status, reason, headers, length, keep)


class ChunkDecoder:
    """Reads a chunked body from a connection's unread bytes, chunk extensions and trailers
    skipped. ``done`` once the last chunk and the trailers are read. A chunk whose usual size
    line (`_SIZE_LINE`), bytes and CRLF are all in the buffer is taken in one step; any other
    goes through the states."""

    __slots__ = ("_left", "_state", "_trailers", "done")

    _SIZE, _DATA, _DATA_END, _TRAILER = range(4)

    def __init__(self) -> None:
        self._left = 0
        self._state = self._SIZE
        self._trailers = 0
        self.done = False

    def feed(self, buf: bytearray) -> bytes:
        """The body bytes in ``buf`` so far; what was read is removed from ``buf``."""
        parts: list[bytearray] = []
        pos, n = 0, len(buf)
        state = self._state
        while pos < n:
            if state == self._SIZE:  # a chunk here whole, its size line and CRLF too: taken
                found = _SIZE_LINE.match(buf, pos)
                if found is not None:
                    start = found.end()
                    stop = start + int(found[1], 16)
                    if stop > start and buf[stop:stop + 2] == b"\r\n":
                        parts.append(buf[start:stop])
                        pos = stop + 2
                        continue
            if state == self._DATA:
                take = min(self._left, n - pos)
                parts.append(buf[pos:pos + take])
                pos += take
                self._left -= take
                if not self._left:
                    state = self._DATA_END
            elif state == self._DATA_END:
                if buf[pos] == 0x0A:
                    pos += 1
                elif buf[pos] == 0x0D:
                    if pos + 1 == n:
                        break
                    if buf[pos + 1] != 0x0A:
                        raise _bad_chunk(buf, pos, "a chunk is longer than its size says")
                    pos += 2
                else:
                    raise _bad_chunk(buf, pos, "a chunk is longer than its size says")
                state = self._SIZE
            else:
                eol = buf.find(b"\n", pos)
                if eol < 0:
                    if n - pos > 4096:
                        raise _bad_chunk(buf, pos, "a chunk size line is too long")
                    break
                line = bytes(buf[pos:eol]).rstrip(b"\r")
                pos = eol + 1
                if state == self._SIZE:
                    text = line.split(b";", 1)[0].strip(b" \t")
                    if not _HEX.fullmatch(text):
                        raise _bad_chunk(buf, pos, f"a chunk size is not hexadecimal: {line!r}")
                    self._left = int(text, 16)
                    state = self._DATA if self._left else self._TRAILER
                elif not line:
                    self.done = True
                    break
                else:
                    self._trailers += len(line)
                    if self._trailers > MAX_HEAD:
                        raise _bad_chunk(buf, pos, "the trailers are too long")
        self._state = state
        if pos:
            del buf[:pos]
        if len(parts) == 1:
            return bytes(parts[0])
        return b"".join(parts)


def _bad_chunk(buf: bytearray, pos: int, what: str) -> httpx2.RemoteProtocolError:
    return httpx2.RemoteProtocolError(f"malformed chunked body: {what} (near "
                                      f"{bytes(buf[max(0, pos - 20):pos + 20])!r})")
