"""A stream of server-sent events whose first read holds several events: until an event says
something, they are cut off and decoded one at a time (`toolwire.http.client._event_end`), and
the events and the reply are the same as when each event comes in a read of its own (a real
server on 127.0.0.1, over HTTP)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from toolwire.errors import ProviderError
from toolwire.events import StreamEnd, TextDelta
from toolwire.http.client import HttpModel, RetryPolicy, _event_end
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


def cut(chunk: bytes) -> tuple[bytes, ...]:
    """``chunk`` cut into the parts `_event_end` gives."""
    parts, at = [], 0
    while True:
        end = _event_end(chunk, at)
        parts.append(chunk[at:end])
        at = end
        if at >= len(chunk):
            return tuple(parts)


@pytest.mark.parametrize(("chunk", "parts"), [
    (b"data: a\n\ndata: b\n\n", (b"data: a\n\n", b"data: b\n\n")),
    (b"data: a\n\ndata: b\n\ndata: c\n\n", (b"data: a\n\n", b"data: b\n\n", b"data: c\n\n")),
    (b"data: a\n\n", (b"data: a\n\n",)),  # one event: nothing to cut
    (b"data: a\r\n\r\ndata: b\r\n\r\n", (b"data: a\r\n\r\ndata: b\r\n\r\n",)),
    (b"data: a", (b"data: a",)),  # not whole yet
    (b"data: a\n\nda", (b"data: a\n\n", b"da")),
    (b"", (b"",)),
])
def test_each_event_is_cut_off_where_it_ends(chunk: bytes, parts: tuple[bytes, ...]) -> None:
    assert cut(chunk) == parts
    assert b"".join(parts) == chunk


async def stream_from(pieces: list[bytes], wire: str = "openai") -> list[Any]:
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
    endpoint = parse_model_id(f"{wire}:m@http://127.0.0.1:{port}",
                              env={"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"})
    model = HttpModel(endpoint, retry=RetryPolicy(max_attempts=1))
    request = Request(model="m", messages=(Message(role="user", parts=(TextPart(text="hi"),)),))
    got: list[Any] = []
    try:
        async for event in model.stream(request):
            got.append(event)
    except ProviderError as exc:
        got.append(exc)
    finally:
        await model.aclose()
        server.close()
    return got


async def test_a_first_read_holding_every_event_streams_as_events_one_by_one() -> None:
    together = await stream_from([b"".join(events())])
    apart = await stream_from(events())
    deltas = [e.text for e in together if isinstance(e, TextDelta)]
    assert deltas == [e.text for e in apart if isinstance(e, TextDelta)] == WORDS
    ends = [e for e in together if isinstance(e, StreamEnd)]
    assert len(ends) == 1 and ends[0].reply.message.parts[0].text == "".join(WORDS)  # type: ignore[union-attr]


def quiet_first() -> list[bytes]:
    """A Chat Completions stream whose first event says nothing (the role, no content), as
    OpenAI's do."""
    head = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    role = {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                 "finish_reason": None}]}
    return [b"data: " + json.dumps(role).encode() + b"\n\n", *events()]


async def test_a_first_event_that_says_nothing_streams_the_same_in_one_read() -> None:
    together = await stream_from([b"".join(quiet_first())])
    apart = await stream_from(quiet_first())
    assert [e for e in together if not isinstance(e, StreamEnd)] == [
        e for e in apart if not isinstance(e, StreamEnd)]
    assert [e.text for e in together if isinstance(e, TextDelta)] == WORDS
    assert together[-1].reply == apart[-1].reply


def anthropic_broken() -> list[bytes]:
    """An Anthropic Messages stream that says one word, then fails (its error event)."""
    said = [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
            "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 0}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "The "}}),
        ("error", {"type": "error", "error": {"type": "overloaded_error",
                                              "message": "Overloaded"}}),
    ]
    return [b"event: %s\ndata: %s\n\n" % (k.encode(), json.dumps(v).encode()) for k, v in said]


async def test_the_first_word_is_passed_on_before_the_rest_of_its_read_is_decoded() -> None:
    # the events after the first that says something are decoded only once it has been
    # passed on: the word comes out before the error that follows it in the same read
    got = await stream_from([b"".join(anthropic_broken())], wire="anthropic")
    assert isinstance(got[0], TextDelta) and got[0].text == "The "
    assert isinstance(got[-1], ProviderError)
