"""AWS event-stream framing: our writer and reader against botocore's own parser.

Frames split at every byte boundary give the same messages; a flipped bit in either CRC, a
frame that cannot be, one over the limits or one cut off at the end is a `StreamError`.
"""

from __future__ import annotations

import binascii
import struct
import uuid

import pytest
from botocore.eventstream import EventStreamBuffer
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.codecs.eventstream import (
    MAX_HEADERS_BYTES,
    EventMessage,
    EventStreamFramer,
    encode_message,
)
from toolwire.errors import StreamError

EVENT = {":message-type": "event", ":event-type": "contentBlockDelta",
         ":content-type": "application/json"}
ALL_TYPES = {"yes": True, "no": False, "small": 7, "big": 2**40, "neg": -5,
             "blob": b"\x00\x01\xff", "text": "grüße", "id": uuid.UUID(int=12345)}


def stream_of(*payloads: bytes) -> bytes:
    return b"".join(encode_message(EVENT, p) for p in payloads)


def read_all(chunks: list[bytes]) -> list[EventMessage]:
    framer = EventStreamFramer()
    out = [m for c in chunks for m in framer.feed(c)]
    framer.close()
    return out


def botocore_read(data: bytes) -> list[tuple[dict[str, object], bytes]]:
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return [(m.headers, m.payload) for m in buffer]


def test_a_message_round_trips_with_every_header_type() -> None:
    [message] = read_all([encode_message(ALL_TYPES, b'{"a":1}')])
    assert dict(message.headers) == ALL_TYPES
    assert message.payload == b'{"a":1}'


def test_botocore_reads_what_we_write() -> None:
    data = encode_message(ALL_TYPES, b"payload") + stream_of(b'{"x":"y"}', b"")
    got = botocore_read(data)
    assert got[0][1] == b"payload"
    headers = got[0][0]
    assert {k: headers[k] for k in ("yes", "no", "small", "big", "neg", "blob", "text")} == {
        k: ALL_TYPES[k] for k in ("yes", "no", "small", "big", "neg", "blob", "text")}
    assert headers["id"] == ALL_TYPES["id"].bytes  # type: ignore[union-attr]
    assert got[1:] == [(EVENT, b'{"x":"y"}'), (EVENT, b"")]


def hand_written(headers: list[tuple[str, int, bytes]], payload: bytes) -> bytes:
    """A frame written from the layout alone, independently of toolwire's writer."""
    head = b"".join(bytes([len(n)]) + n.encode() + bytes([t]) + v for n, t, v in headers)
    total = 16 + len(head) + len(payload)
    prelude = struct.pack(">II", total, len(head))
    prelude += struct.pack(">I", binascii.crc32(prelude))
    body = prelude + head + payload
    return body + struct.pack(">I", binascii.crc32(body))


def test_we_read_frames_botocore_accepts() -> None:
    frame = hand_written([(":event-type", 7, struct.pack(">H", 5) + b"chunk"),
                          ("n16", 3, struct.pack(">h", -300)), ("n8", 2, b"\x05"),
                          ("when", 8, struct.pack(">q", 1_700_000_000_000)),
                          ("raw", 6, struct.pack(">H", 2) + b"\xde\xad")], b'{"bytes":"eyJ9"}')
    [(headers, payload)] = botocore_read(frame)
    [ours] = read_all([frame])
    assert ours.payload == payload == b'{"bytes":"eyJ9"}'
    assert dict(ours.headers) == headers == {":event-type": "chunk", "n16": -300, "n8": 5,
                                             "when": 1_700_000_000_000, "raw": b"\xde\xad"}


@pytest.mark.parametrize("repeat", [1, 3])
def test_splitting_at_every_byte_boundary_gives_the_same_messages(repeat: int) -> None:
    data = stream_of(*[b'{"contentBlockIndex":0,"delta":{"text":"h\xc3\xa9"}}'] * repeat,
                     b"")
    whole = read_all([data])
    assert len(whole) == repeat + 1
    for cut in range(len(data) + 1):
        assert read_all([data[:cut], data[cut:]]) == whole
    assert read_all([data[i:i + 1] for i in range(len(data))]) == whole


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=5),
       st.lists(st.integers(min_value=0, max_value=400), max_size=6))
def test_any_split_of_any_messages_reads_as_botocore_reads_them(
    payloads: list[bytes], cuts: list[int]
) -> None:
    data = stream_of(*payloads)
    points = sorted({min(c, len(data)) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    assert [(dict(m.headers), m.payload) for m in read_all(chunks)] == botocore_read(data)


def test_many_messages_in_one_chunk_are_all_read() -> None:
    data = stream_of(*[b"x" * (n % 7) for n in range(3000)])
    framer = EventStreamFramer()
    assert len(framer.feed(data)) == 3000
    assert framer.pending == 0


@pytest.mark.parametrize("where", ["prelude", "headers", "payload", "message-crc"])
def test_a_flipped_bit_anywhere_is_a_stream_error(where: str) -> None:
    data = bytearray(encode_message(EVENT, b'{"a":"b"}'))
    at = {"prelude": 9, "headers": 14, "payload": len(data) - 6,
          "message-crc": len(data) - 1}[where]
    data[at] ^= 0x01
    framer = EventStreamFramer()
    with pytest.raises(StreamError, match="CRC32"):
        framer.feed(bytes(data))
    assert framer.pending == 0  # nothing after a broken frame is kept


def test_a_stream_cut_inside_a_message_is_a_stream_error_at_close() -> None:
    data = stream_of(b'{"a":1}', b'{"b":2}')
    framer = EventStreamFramer()
    assert len(framer.feed(data[:-3])) == 1
    with pytest.raises(StreamError, match="ended inside a message"):
        framer.close()


def test_lengths_that_cannot_be_are_refused() -> None:
    short = struct.pack(">II", 10, 0)
    with pytest.raises(StreamError, match="cannot be"):
        EventStreamFramer().feed(short + struct.pack(">I", binascii.crc32(short)))
    wide = struct.pack(">II", 20, 8)
    with pytest.raises(StreamError, match="cannot be"):
        EventStreamFramer().feed(wide + struct.pack(">I", binascii.crc32(wide)))


def test_an_oversized_frame_is_refused_from_its_prelude_alone() -> None:
    framer = EventStreamFramer(max_payload=1000)
    big = encode_message(EVENT, b"x" * 1001)
    with pytest.raises(StreamError, match="over the limit of 1000"):
        framer.feed(big[:12])
    huge_headers = struct.pack(">II", 16 + MAX_HEADERS_BYTES + 1, MAX_HEADERS_BYTES + 1)
    with pytest.raises(StreamError, match="headers, over the limit"):
        EventStreamFramer().feed(huge_headers + struct.pack(">I", binascii.crc32(huge_headers)))


@pytest.mark.parametrize("headers", [
    [("x", 7, struct.pack(">H", 9) + b"ab")],         # a string longer than its frame
    [("x", 42, b"")],                                 # a type that does not exist
    [("x", 7, b"\x00\x01\xff")],                      # text that is not UTF-8
    [("x", 0, b""), ("x", 1, b"")],                   # the same header twice
])
def test_broken_headers_are_stream_errors(headers: list[tuple[str, int, bytes]]) -> None:
    with pytest.raises(StreamError, match="header"):
        EventStreamFramer().feed(hand_written(headers, b""))


def test_an_event_stream_is_told_from_other_bytes_by_its_prelude() -> None:
    from toolwire.codecs.eventstream import is_event_stream

    data = stream_of(b'{"a":1}')
    assert is_event_stream(data)
    assert not is_event_stream(data[:10])
    assert not is_event_stream(b"\0" * 16)  # zeros: the prelude fails its CRC
    broken = bytearray(data)
    broken[9] ^= 1
    assert not is_event_stream(bytes(broken))
    assert not is_event_stream(b'data: {"type":"message_start"}\n\n')
