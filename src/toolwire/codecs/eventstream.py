"""AWS's binary event-stream framing: messages with typed headers, a payload and two CRC32s.

Owns `EventStreamFramer` (bytes split anywhere -> whole `EventMessage` values), `encode_message`
(one message as bytes) and the limits (`MAX_HEADERS_BYTES`, `MAX_PAYLOAD_BYTES`). A message
is a 12-byte prelude (total length, headers length, CRC32 of those eight bytes), the headers,
the payload and a CRC32 of everything before it. Both CRCs are checked; a bad CRC, a length
that cannot be, a frame over the limits or bytes left over at the end are a
`toolwire.errors.StreamError`. A bad CRC is damage in transit, like a dropped connection: its
error has the type ``corrupted`` and is retried as one (`toolwire.http.client`). Buffering is
linear: each byte is appended once and moved at most once per chunk. Knows nothing of any
wire's JSON; imports only `toolwire.errors`.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from toolwire.errors import StreamError

HeaderValue = bool | int | str | bytes | uuid.UUID
"""A header's value: booleans, integers (int8 to int64), text, bytes and UUIDs; timestamps
(milliseconds since the epoch) decode as integers."""

MAX_HEADERS_BYTES = 128 * 1024
MAX_PAYLOAD_BYTES = 24 * 1024 * 1024
_PRELUDE = 12
_OVERHEAD = _PRELUDE + 4
_INTS = {2: ">b", 3: ">h", 4: ">i", 5: ">q", 8: ">q"}
_SIZES = {2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}

MEDIA_TYPE = "application/vnd.amazon.eventstream"


@dataclass(frozen=True, slots=True)
class EventMessage:
    """One event-stream message: its headers by name, and its payload bytes."""

    headers: Mapping[str, HeaderValue] = field(default_factory=dict)
    payload: bytes = b""

    def header(self, name: str) -> str | None:
        """A text header's value (``:event-type``, ``:message-type``...), None when absent."""
        value = self.headers.get(name)
        return value if isinstance(value, str) else None


def _crc(data: bytes | bytearray | memoryview, start: int = 0) -> int:
    return zlib.crc32(data, start) & 0xFFFFFFFF


# --------------------------------------------------------------------------- writing


def _header_bytes(name: str, value: HeaderValue) -> bytes:
    raw_name = name.encode("utf-8")
    if not 0 < len(raw_name) < 256:
        raise ValueError(f"an event-stream header name takes 1 to 255 bytes: {name!r}")
    head = bytes([len(raw_name)]) + raw_name
    if isinstance(value, bool):
        return head + bytes([0 if value else 1])
    if isinstance(value, int):
        kind = 4 if -(2**31) <= value < 2**31 else 5
        return head + bytes([kind]) + struct.pack(_INTS[kind], value)
    if isinstance(value, uuid.UUID):
        return head + bytes([9]) + value.bytes
    kind, data = (7, value.encode("utf-8")) if isinstance(value, str) else (6, bytes(value))
    if len(data) > 0xFFFF:
        raise ValueError(f"event-stream header {name!r} holds more than 65535 bytes")
    return head + bytes([kind]) + struct.pack(">H", len(data)) + data


def encode_message(headers: Mapping[str, HeaderValue], payload: bytes = b"") -> bytes:
    """One message as bytes: prelude, headers (in the order given), payload, message CRC."""
    head = b"".join(_header_bytes(k, v) for k, v in headers.items())
    if len(head) > MAX_HEADERS_BYTES or len(payload) > MAX_PAYLOAD_BYTES:
        raise ValueError("an event-stream message over the size limits")
    total = _OVERHEAD + len(head) + len(payload)
    lengths = struct.pack(">II", total, len(head))
    prelude = lengths + struct.pack(">I", _crc(lengths))
    body = prelude + head + payload
    return body + struct.pack(">I", _crc(body))


# --------------------------------------------------------------------------- reading


def _headers(data: memoryview) -> dict[str, HeaderValue]:
    out: dict[str, HeaderValue] = {}
    at, end = 0, len(data)
    while at < end:
        size = data[at]
        at += 1
        if size == 0 or at + size + 1 > end:
            raise StreamError("an event-stream header is cut off or has an empty name")
        try:
            name = bytes(data[at:at + size]).decode("utf-8")
        except UnicodeDecodeError:
            raise StreamError("an event-stream header name is not UTF-8") from None
        at += size
        kind = data[at]
        at += 1
        value: HeaderValue
        if kind in (0, 1):
            value = kind == 0
        elif kind in (6, 7):
            if at + 2 > end:
                raise StreamError(f"event-stream header {name!r} is cut off")
            (length,) = struct.unpack_from(">H", data, at)
            at += 2
            if at + length > end:
                raise StreamError(f"event-stream header {name!r} is cut off")
            raw = bytes(data[at:at + length])
            at += length
            if kind == 6:
                value = raw
            else:
                try:
                    value = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise StreamError(f"event-stream header {name!r} is not UTF-8") from None
        elif kind in _SIZES:
            width = _SIZES[kind]
            if at + width > end:
                raise StreamError(f"event-stream header {name!r} is cut off")
            if kind == 9:
                value = uuid.UUID(bytes=bytes(data[at:at + width]))
            else:
                (value,) = struct.unpack_from(_INTS[kind], data, at)
            at += width
        else:
            raise StreamError(f"event-stream header {name!r} has unknown type {kind}")
        if name in out:
            raise StreamError(f"event-stream header {name!r} appears twice in one message")
        out[name] = value
    return out


def is_event_stream(data: bytes) -> bool:
    """Whether ``data`` opens with an event-stream message (a prelude that passes its CRC)."""
    if len(data) < _OVERHEAD:
        return False
    total, head_len, prelude_crc = struct.unpack_from(">III", data, 0)
    return bool(_crc(data[:8]) == prelude_crc and total >= _OVERHEAD
                and head_len <= total - _OVERHEAD)


class EventStreamFramer:
    """Whole event-stream messages from bytes split anywhere.

    ``max_payload`` bounds one message's payload (botocore's limit by default); a frame that
    declares more is refused as soon as its prelude arrives, before its bytes are kept.
    """

    __slots__ = ("_buf", "_max_payload")

    def __init__(self, *, max_payload: int = MAX_PAYLOAD_BYTES) -> None:
        self._buf = bytearray()
        self._max_payload = max_payload

    def _prelude(self, at: int) -> tuple[int, int]:
        buf = self._buf
        total, head_len, prelude_crc = struct.unpack_from(">III", buf, at)
        if _crc(buf[at:at + 8]) != prelude_crc:
            raise StreamError("an event-stream prelude fails its CRC32 check: the stream is "
                              "corrupted", error_type="corrupted", retryable=True)
        if total < _OVERHEAD or head_len > total - _OVERHEAD:
            raise StreamError(f"an event-stream message declares {total} bytes with "
                              f"{head_len} bytes of headers, which cannot be")
        if head_len > MAX_HEADERS_BYTES:
            raise StreamError(f"an event-stream message has {head_len} bytes of headers, over "
                              f"the limit of {MAX_HEADERS_BYTES}")
        if total - _OVERHEAD - head_len > self._max_payload:
            raise StreamError(f"an event-stream message declares a payload of "
                              f"{total - _OVERHEAD - head_len} bytes, over the limit of "
                              f"{self._max_payload}")
        return total, head_len

    def feed(self, data: bytes | bytearray | memoryview) -> list[EventMessage]:
        """The messages completed by ``data``; a broken one raises `StreamError`."""
        buf = self._buf
        buf += data
        out: list[EventMessage] = []
        at = 0
        try:
            while len(buf) - at >= _PRELUDE:
                total, head_len = self._prelude(at)
                end = at + total
                if len(buf) < end:
                    break
                view = memoryview(buf)
                try:
                    (message_crc,) = struct.unpack_from(">I", view, end - 4)
                    if _crc(view[at:end - 4]) != message_crc:
                        raise StreamError("an event-stream message fails its CRC32 check: "
                                          "the stream is corrupted", error_type="corrupted",
                                          retryable=True)
                    headers = _headers(view[at + _PRELUDE:at + _PRELUDE + head_len])
                    payload = bytes(view[at + _PRELUDE + head_len:end - 4])
                finally:
                    view.release()
                out.append(EventMessage(headers, payload))
                at = end
        except StreamError:
            self._buf = bytearray()  # nothing after a broken frame can be trusted
            raise
        if at:
            del buf[:at]  # one move per chunk: the bytes of the unfinished frame
        return out

    @property
    def pending(self) -> int:
        """How many bytes wait for the rest of their message."""
        return len(self._buf)

    def close(self) -> None:
        """Raise `StreamError` if the stream ended inside a message."""
        if self._buf:
            left = len(self._buf)
            self._buf = bytearray()
            raise StreamError(f"the event stream ended inside a message ({left} bytes of an "
                              "unfinished frame)")


__all__ = [
    "MAX_HEADERS_BYTES",
    "MAX_PAYLOAD_BYTES",
    "MEDIA_TYPE",
    "EventMessage",
    "EventStreamFramer",
    "HeaderValue",
    "encode_message",
    "is_event_stream",
]
