"""The work before a stream's first byte across wires, cut without changing a byte: the
server-sent event framer's way for lines that end in LF alone gives what its general way gives
(events, counts, what is left), however the bytes are split; a model's stream stopped by its
caller (as the proxy stops it once the reply is whole) closes the generators under it itself,
leaving none for the event loop to close in tasks of its own; a request with no call and no
reasoning skips the walks for call ids and seals, and gets what they give; and an Anthropic
Messages body in its usual shape, read in one pass, is the request the general reading
gives."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from toolwire.codecs.framing import SSEEvent, SSEFramer
from toolwire.events import StreamEnd, TextDelta
from toolwire.http.client import HttpModel, RetryPolicy
from toolwire.http.endpoints import parse_model_id
from toolwire.transcript import Message, Request, TextPart


class GeneralFramer(SSEFramer):
    """The framer held to its general way (the line-end pattern) for every chunk."""

    __slots__ = ()

    def feed(self, data: bytes) -> list[SSEEvent]:
        self._cr = True
        return super().feed(data)


CHARS = st.characters(exclude_categories=["Cs"], exclude_characters="\r\n")
LINE = st.one_of(
    st.text(CHARS, max_size=12).map(lambda t: "data: " + t),
    st.sampled_from(["", ": keep-alive", "event: delta", "data:x", "data", "id: 4"]),
    st.text(CHARS, max_size=8))


@st.composite
def streams(draw: st.DrawFn) -> tuple[bytes, list[int]]:
    """Lines of a server-sent event stream, each ended by LF (now and then by CR or CRLF, and
    now and then a byte that is not UTF-8), and where to cut them into chunks."""
    ends = st.sampled_from(["\n"] * 8 + ["\r", "\r\n"])
    lines = draw(st.lists(st.tuples(LINE, ends), max_size=12))
    raw = "".join(line + end for line, end in lines).encode()
    if draw(st.booleans()):
        raw += b"\xff" + draw(st.binary(max_size=6))
    cuts = sorted(draw(st.lists(st.integers(0, len(raw)), max_size=8)))
    return raw, cuts


def framed(framer: SSEFramer, raw: bytes, cuts: list[int]) -> tuple[Any, ...]:
    pieces = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    events = [framer.feed(piece) for piece in pieces]
    left = bytes(framer._buf)
    return events, left, framer.scanned, framer.copied, framer.close()


@given(streams())
def test_lines_ending_in_lf_alone_are_framed_as_the_general_way_frames_them(
        stream: tuple[bytes, list[int]]) -> None:
    raw, cuts = stream
    assert framed(SSEFramer(), raw, cuts) == framed(GeneralFramer(), raw, cuts)


def test_a_cr_in_one_chunk_is_still_a_line_end_in_the_next() -> None:
    """A CR at a chunk's end may be the start of a CRLF: the next chunk, with no CR of its
    own, is framed knowing of it."""
    framer = SSEFramer()
    assert framer.feed(b"data: a\r") == []
    assert framer.feed(b"\ndata: b\n") == []
    assert framer.feed(b"\n") == [SSEEvent(None, "a\nb")]


async def test_a_stream_stopped_after_its_end_leaves_no_generator_to_the_loop() -> None:
    """The proxy stops a model's stream at its `StreamEnd`; the generators under it (the
    retry loop, the try's own) are closed then, not handed to the loop when collected."""
    chunks = [{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": {"content": w}, "finish_reason": f}]}
              for w, f in (("Sunny", None), ("", "stop"))]
    body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
    body += b"data: [DONE]\n\n"

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        await reader.readexactly(length)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                     b"content-length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    endpoint = parse_model_id(f"openai:m@http://127.0.0.1:{port}", env={"OPENAI_API_KEY": "k"})
    model = HttpModel(endpoint, retry=RetryPolicy(max_attempts=1))
    request = Request(model="m", messages=(Message(role="user", parts=(TextPart(text="hi"),)),))
    handed: list[str] = []
    hooks = sys.get_asyncgen_hooks()

    def finalizer(agen: Any) -> None:
        handed.append(agen.ag_code.co_qualname)
        assert hooks.finalizer is not None
        hooks.finalizer(agen)

    sys.set_asyncgen_hooks(firstiter=hooks.firstiter, finalizer=finalizer)
    got: list[Any] = []
    try:
        events = aiter(model.stream(request))
        async for event in events:
            got.append(event)
            if isinstance(event, StreamEnd):
                break  # as the proxy does: the rest of the stream is not asked for
        await events.aclose()  # type: ignore[attr-defined]
        del events
    finally:
        sys.set_asyncgen_hooks(*hooks)
        await model.aclose()
        server.close()
    assert [e.text for e in got if isinstance(e, TextDelta)] == ["Sunny"]
    assert isinstance(got[-1], StreamEnd)
    assert handed == []


@given(st.lists(st.text(CHARS, max_size=10), max_size=8), st.lists(st.integers(0, 90)))
def test_json_lines_are_cut_as_they_were_whatever_the_chunks(lines: list[str],
                                                             cuts: list[int]) -> None:
    """The JSON-lines framer, which shares the LF search: each line stripped, blank ones
    skipped, the last line without its LF kept until the end."""
    from toolwire.codecs.framing import NDJSONFramer

    raw = "\n".join(lines).encode()
    points = sorted({min(c, len(raw)) for c in cuts})
    framer = NDJSONFramer()
    got = [line for a, b in zip([0, *points], [*points, len(raw)], strict=True)
           for line in framer.feed(raw[a:b])] + framer.close()
    assert got == [s for line in lines if (s := line.strip())]


CLIENT = "anthropic-messages"
CALL_IDS = st.sampled_from(["call_1", "toolu_2", "twx_" + "Y2FsbHwx", "twx_!", "twh_abc", ""])


@st.composite
def parts(draw: st.DrawFn) -> Any:
    """A part of any kind the proxy's id and seal walks look at: text, calls and results
    (with ids the proxy gave and others), reasoning with a sealed block of the client's wire
    (of a reasoning block, or of calls' data), with some other data, or with none."""
    from toolwire.proxy.carry import _envelope, seal
    from toolwire.transcript import ReasoningPart, ToolCallPart, ToolResultPart

    kind = draw(st.sampled_from(["text", "call", "result", "sealed", "calls", "reasoning"]))
    if kind == "text":
        return TextPart(text=draw(st.text(max_size=4)))
    if kind == "call":
        return ToolCallPart(id=draw(CALL_IDS), name="f", arguments={})
    if kind == "result":
        return ToolResultPart(call_id=draw(CALL_IDS), content="ok")
    if kind == "reasoning":
        data = draw(st.sampled_from([None, {"openai-chat": {"x": 1}}, {CLIENT: {"y": 2}}]))
        return ReasoningPart(text="r", provider_data=data)
    sealed = (seal("openai-chat", {"signature": "s"}) if kind == "sealed"
              else seal("gemini-generate", {"twx_Y2FsbHwx": "sig", "call_1": "t"}, calls=True))
    return ReasoningPart(text="", provider_data={CLIENT: _envelope(CLIENT, "", sealed)})


REQUESTS = st.lists(st.lists(parts(), max_size=4), max_size=4).map(lambda messages: Request(
    model="m", messages=tuple(Message(role="user", parts=tuple(p)) for p in messages)))


@given(REQUESTS)
def test_a_request_with_no_call_or_reasoning_skips_the_walks_and_is_what_they_give(
        request: Request) -> None:
    """The ids given back and the seals opened: what the walks over every part give, whether
    the request holds anything they change or not (then it is the request itself)."""
    from toolwire.proxy import carry, ids

    assert ids.request_for_upstream(request) == ids.each_message(request, ids._ids(None))
    assert carry.request_for_upstream(request, CLIENT) == carry.opened_all(request, CLIENT)
    if not ids.holds(request, (ids.ToolCallPart, ids.ToolResultPart, carry.ReasoningPart)):
        assert ids.request_for_upstream(request) is request
        assert carry.request_for_upstream(request, CLIENT) is request


OFF = st.sampled_from([None, True, False, 0, 2, "", "x", [], {}, [{"type": "text", "text": "a"}]])
MESSAGE = st.builds(
    lambda role, content, extra: {"role": role, "content": content, **extra},
    st.sampled_from(["user", "assistant", "system", "tool"]),
    st.one_of(st.text(max_size=3), OFF),
    st.sampled_from([{}, {"cache_control": {"type": "ephemeral"}}]))


@st.composite
def messages_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """Bodies of an Anthropic Messages request: half in the usual shape, the rest one step
    off it (another key, a value of another type, a message with more than its text)."""
    usual = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]),
                                   "content": st.text(max_size=6)})
    body: dict[str, Any] = {"model": "m", "messages": draw(st.lists(usual, max_size=3))}
    for key, value in (("max_tokens", st.integers(1, 9)), ("stream", st.booleans()),
                       ("system", st.text(max_size=3))):
        if draw(st.booleans()):
            body[key] = draw(value)
    if draw(st.booleans()):
        return body
    off = draw(st.sampled_from(["drop", "value", "message", "key"]))
    if off == "drop":
        body.pop(draw(st.sampled_from(["model", "messages"])))
    elif off == "value":
        body[draw(st.sampled_from(["model", "messages", "max_tokens", "stream", "system"]))] \
            = draw(OFF)
    elif off == "message":
        body["messages"] = [*body["messages"], draw(st.one_of(MESSAGE, OFF))]
    else:
        body[draw(st.sampled_from(["temperature", "tools", "metadata", "context_management"]))] \
            = draw(OFF)
    return body


def read(decode: Any, body: dict[str, Any], **url: Any) -> Any:
    try:
        return decode(body, **url)
    except Exception as exc:  # the same failure either way, named the same
        return type(exc), str(exc)


@settings(max_examples=300)
@example({"model": "m", "messages": [], "max_tokens": True}, {})
@example({"messages": [{"role": "user", "content": "hi", "cache_control": {}}]}, {"model": "u"})
@given(messages_bodies(), st.sampled_from([{}, {"model": "u"}, {"stream": True},
                                           {"stream": False, "model": "u"}]))
def test_a_usual_messages_body_read_in_one_pass_is_the_request_the_general_reading_gives(
        body: dict[str, Any], url: dict[str, Any]) -> None:
    from toolwire.codecs.anthropic_messages import inbound

    assert read(inbound.decode_request, body, **url) == read(inbound.decode_general, body, **url)
