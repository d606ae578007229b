"""A stream of server-sent events whose first read holds several events: its first event is cut
off and decoded on its own before the rest (`toolwire.http.client._first_event_apart`), and the
events and the reply are the same as when each event comes in a read of its own (a real
server on 127.0.0.1, over HTTP)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from toolwire.events import StreamEnd, TextDelta
from toolwire.http.client import HttpModel, RetryPolicy, _first_event_apart
from toolwire.http.endpoints import parse_model_id
from toolwire.transcript import Message, Request, TextPart

WORDS = ["The ", "weather ", "in ", "Rome ", "is ", "sunny."]


def events() -> list[bytes]:
    """A Chat Completions stream, one server-sent event a piece."""
    head = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    out = [{**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": w},
                                 "finish_reason": None}]} for w in WORDS]
    out.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return [b"data: " + json.dumps(e).encode() + b"\n\n" for e in out] + [b"data: [DONE]\n\n"]


@pytest.mark.parametrize(("chunk", "parts"), [
    (b"data: a\n\ndata: b\n\n", (b"data: a\n\n", b"data: b\n\n")),
    (b"data: a\n\n", (b"data: a\n\n",)),  # one event: nothing to cut
    (b"data: a\r\n\r\ndata: b\r\n\r\n", (b"data: a\r\n\r\ndata: b\r\n\r\n",)),
    (b"data: a", (b"data: a",)),  # not whole yet
    (b"data: a\n\nda", (b"data: a\n\n", b"da")),
])
def test_the_first_event_is_cut_off_where_it_ends(chunk: bytes, parts: tuple[bytes, ...]
                                                  ) -> None:
    assert _first_event_apart(chunk) == parts
    assert b"".join(parts) == chunk


async def stream_from(pieces: list[bytes]) -> list[Any]:
    """The events `HttpModel.stream` yields for a server writing ``pieces``, each in a write
    of its own with a pause between."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        await reader.readexactly(length)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                     b"transfer-encoding: chunked\r\n\r\n")
        for piece in pieces:
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
            await asyncio.sleep(0.01)
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    endpoint = parse_model_id(f"openai:m@http://127.0.0.1:{port}", env={"OPENAI_API_KEY": "k"})
    model = HttpModel(endpoint, retry=RetryPolicy(max_attempts=1))
    request = Request(model="m", messages=(Message(role="user", parts=(TextPart(text="hi"),)),))
    try:
        return [event async for event in model.stream(request)]
    finally:
        await model.aclose()
        server.close()


async def test_a_first_read_holding_every_event_streams_as_events_one_by_one() -> None:
    together = await stream_from([b"".join(events())])
    apart = await stream_from(events())
    deltas = [e.text for e in together if isinstance(e, TextDelta)]
    assert deltas == [e.text for e in apart if isinstance(e, TextDelta)] == WORDS
    ends = [e for e in together if isinstance(e, StreamEnd)]
    assert len(ends) == 1 and ends[0].reply.message.parts[0].text == "".join(WORDS)  # type: ignore[union-attr]
