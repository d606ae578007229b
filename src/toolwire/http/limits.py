"""How much a model server may send: `Limits`, and reading a body within them.

Owns `Limits` (the bounds and their defaults), `parse_size`, `read_chunks` (a whole body
read, and decompressed, within its bounds) and `LineWatch` (the longest line of a stream and
how long a stream may go without an event). Every overrun raises
`toolwire.errors.ResponseTooLarge`, which names the bound and how to raise it; a stream that
goes quiet raises a `StreamError` of type ``idle``. Nothing is ever read whole before it is
counted, so a server cannot make the process hold more than about one bound at once (a gzip or
deflate body is inflated piece by piece, at most 64 KiB out per step). Imports nothing of
toolwire but its errors.
"""

from __future__ import annotations

import re
import time
import zlib
from collections.abc import AsyncIterable, Mapping
from dataclasses import dataclass

from toolwire.errors import ResponseTooLarge, StreamError

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
_STEP = 64 * KiB  # the most bytes one inflating step gives out


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds on what a model server sends, in bytes and seconds.

    ``max_body``: a whole reply's body as it comes over the wire, and the sum of a stream's
    bytes. ``max_decoded``: a body once inflated (gzip, deflate). ``max_line``: one line of a
    server-sent events or JSON-lines stream, and its bytes between two events.
    ``max_error_body``: the body of an error status. ``idle_seconds``: the longest a stream may
    go on without a data event (keep-alive comments do not count); None waits as long as the
    server keeps sending.
    """

    max_body: int = 64 * MiB
    max_decoded: int = 256 * MiB
    max_line: int = 16 * MiB
    max_error_body: int = 1 * MiB
    idle_seconds: float | None = 300.0

    def __post_init__(self) -> None:
        for name in ("max_body", "max_decoded", "max_line", "max_error_body"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Limits.{name} must be a whole number of bytes, at least 1; "
                                 f"got {value!r}")
        idle = self.idle_seconds
        if idle is not None and (isinstance(idle, bool) or not isinstance(idle, int | float)
                                 or not idle > 0):
            raise ValueError(f"Limits.idle_seconds must be a positive number of seconds or "
                             f"None; got {idle!r}")


_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMG]i?B|B)?\s*", re.IGNORECASE)
_UNITS = {"b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "kib": KiB, "mib": MiB, "gib": GiB}


def parse_size(text: str) -> int:
    """A size such as ``1048576``, ``512KiB``, ``64 MiB`` or ``1GB`` in bytes; `ValueError`
    for anything else (or for less than one byte)."""
    found = _SIZE.fullmatch(text)
    if found is None:
        raise ValueError(f"{text!r} is not a size: give bytes (1048576) or a number with "
                         "KiB, MiB, GiB, KB, MB or GB (64MiB)")
    number, unit = found.groups()
    size = int(float(number) * _UNITS[(unit or "b").lower()])
    if size < 1:
        raise ValueError(f"{text!r} is less than one byte")
    return size


def show_size(size: int) -> str:
    for unit, step in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if size >= step and size % step == 0:
            return f"{size // step} {unit}"
    return f"{size} bytes"


def too_large(what: str, limit: int, name: str) -> ResponseTooLarge:
    return ResponseTooLarge(
        f"{what} is over {show_size(limit)} (the {name} limit); it was not read further. "
        f"Raise the limit ({name} in the settings) if the server is trusted to send more",
        limit=name)


class _Inflater:
    """Inflate gzip or deflate (zlib-wrapped or raw) within a bound, piece by piece."""

    def __init__(self, encoding: str, limit: int) -> None:
        self.wbits = 31 if encoding in ("gzip", "x-gzip") else 15
        self.obj = zlib.decompressobj(self.wbits)
        self.limit = limit
        self.size = 0
        self.first = True

    def feed(self, data: bytes, out: bytearray) -> None:
        while data:
            try:
                piece = self.obj.decompress(data, _STEP)
            except zlib.error:
                if not (self.first and self.wbits == 15):
                    raise
                self.obj, self.wbits = zlib.decompressobj(-15), -15  # raw deflate
                piece = self.obj.decompress(data, _STEP)
            self.first = False
            self._add(piece, out)
            data = self.obj.unconsumed_tail
            if self.obj.eof:
                return

    def _add(self, piece: bytes, out: bytearray) -> None:
        self.size += len(piece)
        if self.size > self.limit:
            raise too_large("the reply's body, decompressed,", self.limit, "max_decoded")
        out += piece


OWN_ENCODINGS = frozenset({"identity", "gzip", "x-gzip", "deflate"})
"""The content encodings `read_chunks` reads as they come (any other is decoded before)."""


def content_encoding(headers: Mapping[str, str]) -> str:
    """A response's content encoding, by its headers (names in lower case)."""
    return headers.get("content-encoding", "identity").strip().lower()


async def read_chunks(chunks: AsyncIterable[bytes], headers: Mapping[str, str], status: int,
                      limits: Limits, *, error: bool = False) -> bytes:
    """The whole body that ``chunks`` bring, of a response with ``status`` and ``headers``
    (names in lower case), inflated when it came gzip or deflate encoded (else as it comes),
    within ``limits`` (``max_error_body`` for both sizes when ``error``)."""
    raw_limit = limits.max_error_body if error else limits.max_body
    decoded_limit = limits.max_error_body if error else limits.max_decoded
    encoding = content_encoding(headers)
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > raw_limit:
        raise _over(status, error, f" ({int(declared)} bytes, as the server said)", raw_limit)
    inflater = (_Inflater(encoding, decoded_limit) if encoding in ("gzip", "x-gzip", "deflate")
                else None)
    out = bytearray()
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > raw_limit:
            raise _over(status, error, "", raw_limit)
        if inflater is not None:
            try:
                inflater.feed(chunk, out)
            except zlib.error as exc:
                raise StreamError(
                    f"{body_name(status, error)} is not valid {encoding} data ({exc})",
                    error_type="decoding_error", retryable=True) from None
        else:
            out += chunk
            if len(out) > decoded_limit:
                raise too_large(f"{body_name(status, error)}, decompressed,", decoded_limit,
                                "max_decoded")
    return bytes(out)


def body_name(status: int, error: bool) -> str:
    """What `read_chunks` reads, as the messages of its failures name it (written only for
    one)."""
    return f"the error body (status {status})" if error else "the reply's body"


def _over(status: int, error: bool, said: str, limit: int) -> ResponseTooLarge:
    return too_large(body_name(status, error) + said, limit,
                     "max_error_body" if error else "max_body")


class LineWatch:
    """Watches a stream's bytes as they come: the longest line, and the most bytes between two
    events (an event of many short lines), both within ``max_line`` (not for a binary framing,
    ``lines=False``: its frames bound themselves); the sum of its bytes (``max_body``); and how
    long since the last event (``idle_seconds``). Any bytes are an event in a binary framing,
    any line in JSON lines, and a ``data:`` field in server-sent events (``sse=True``), where
    comments, the keep-alives, are not."""

    __slots__ = ("_pending", "_run", "_since", "limits", "lines", "size", "sse")

    def __init__(self, limits: Limits, *, lines: bool = True, sse: bool = False) -> None:
        self.limits = limits
        self.lines = lines
        self.sse = sse
        self._run = 0  # bytes since the last line end
        self._pending = 0  # bytes since the last event
        self._since = time.monotonic()
        self.size = 0

    def chunk(self, data: bytes) -> None:
        limits = self.limits
        self.size += len(data)
        if self.size > limits.max_body:
            raise too_large("the stream", limits.max_body, "max_body")
        if self.lines:
            end = max(data.rfind(b"\n"), data.rfind(b"\r"))
            self._run = self._run + len(data) if end < 0 else len(data) - end - 1
            if self._run > limits.max_line:
                raise too_large("one line of the stream", limits.max_line, "max_line")
            self._pending += len(data)
            if self._pending > limits.max_line:
                raise too_large("one event of the stream", limits.max_line, "max_line")
        # `find`, not `in`: `in` first tries its operand as a number, making and dropping
        # an error
        if not self.lines or (data.find(b"data:") >= 0 if self.sse else not data.isspace()):
            self._since = time.monotonic()  # a data event (or part of one) came
        idle = limits.idle_seconds
        if idle is not None and time.monotonic() - self._since > idle:
            raise StreamError(f"the stream sent no event for {idle:g} seconds (only "
                              "keep-alives, or nothing); it was ended (idle_seconds)",
                              error_type="idle", retryable=False)

    def event(self) -> None:
        self._since = time.monotonic()
        self._pending = 0


__all__ = ["OWN_ENCODINGS", "Limits", "LineWatch", "body_name", "content_encoding",
           "parse_size", "read_chunks", "show_size"]
