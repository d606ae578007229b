"""The steps a streamed request across wires takes before its first byte, made shorter without
changing what comes out: each quicker way held to the general one.

- A chunked body whose chunks come whole (with their CRLF) is read chunk by chunk in one step
  each: the same bytes, end and errors as byte by byte, where every chunk takes the states.
- A server-sent event stream's lines, decoded together and read with a quick test for the
  usual ``data: `` line: the events a reading line by line gives, broken UTF-8 included.
- A Chat Completions delta of text alone is read no further than its content: the events and
  reply of the decoder that reads every field of every delta.
- A per-model fix none of whose rules covers the model is not called: the body and notes of
  calling every fix.
- A plain HTTP request head kept for its method, URL and headers: the head made anew.
- A live writer's reply id: the digits ``uuid.uuid4().hex[:24]`` gives from the same bytes.
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any
from unittest import mock

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from toolwire import transcript
from toolwire.codecs import get_codec
from toolwire.codecs.framing import SSEEvent, SSEFramer
from toolwire.errors import ToolwireError
from toolwire.http.connection import ChunkDecoder
from toolwire.transcript import Message, Request, TextPart, ToolCallPart

# --------------------------------------------------------------------------- chunked bodies


@st.composite
def chunked(draw: st.DrawFn) -> bytes:
    """A chunked body, now and then broken: sizes in either case with extensions, data ended
    by CRLF, a bare LF or something else, the last chunk with trailers, or cut short."""
    out = b""
    for data in draw(st.lists(st.binary(min_size=1, max_size=12), max_size=5)):
        size = f"{len(data):x}".encode()
        size = draw(st.sampled_from([size, size.upper(), size + b";ext=1", b"zz", b" " + size]))
        end = draw(st.sampled_from([b"\r\n"] * 6 + [b"\n", b"xx", b"\r"]))
        out += size + draw(st.sampled_from([b"\r\n", b"\n"])) + data + end
    out += draw(st.sampled_from([b"0\r\n\r\n", b"0\r\nx-t: 1\r\n\r\n", b"0\n\n", b"", b"0\r\n"]))
    return out


def decoded(raw: bytes, step: int) -> tuple[Any, ...]:
    """What a decoder gives for ``raw`` fed ``step`` bytes at a time (0: all at once): the
    body, whether it ended, what is left unread, or the error (the bytes near it that its
    message shows are those buffered, which differ with the pieces)."""
    decoder, buf, body = ChunkDecoder(), bytearray(), b""
    try:
        for at in range(0, len(raw), step or max(len(raw), 1)):
            buf += raw[at:at + step] if step else raw
            body += decoder.feed(buf)
            if decoder.done:
                break
    except Exception as exc:
        return type(exc).__name__, str(exc).partition(" (near")[0]
    return body, decoder.done, bytes(buf) if decoder.done else b""


@given(chunked())
@example(b"3\r\nabc\r\n0\r\n\r\n")
@example(b"3\r\nabc\n2\r\nde\r\n0\r\n\r\n")
def test_whole_chunks_read_in_one_step_are_read_as_byte_by_byte(raw: bytes) -> None:
    """Fed byte by byte, no chunk's data is there when its size is read: each goes through
    the states, the general way."""
    assert decoded(raw, 0) == decoded(raw, 1)


# --------------------------------------------------------------------------- server-sent events


def events_line_by_line(raw: bytes) -> list[SSEEvent]:
    """The events of ``raw`` read as the standard reads them: each line decoded alone (CR,
    LF and CRLF end lines), its field and value split at the first colon."""
    out: list[SSEEvent] = []
    event: str | None = None
    data: list[str] = []
    text = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    for piece in text.split(b"\n")[:-1]:
        line = piece.decode("utf-8", "replace")
        if not line:
            if data or event is not None:
                out.append(SSEEvent(event, "\n".join(data)))
            event, data = None, []
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "data":
                data.append(value)
            elif name == "event":
                event = value
    return out


LINES = st.lists(st.one_of(
    st.sampled_from([b"", b"data: ", b"data:x", b"data", b"data:  two", b": ping",
                     b"event: delta", b"id: 3", b"data: \xe2\x82", b"da\xfft\xc3a: x"]),
    st.binary(max_size=8).filter(lambda b: b"\r" not in b and b"\n" not in b)
    .map(lambda b: b"data: " + b)), max_size=14)


@given(LINES, st.sampled_from([b"\n", b"\r\n"]), st.lists(st.integers(0, 200), max_size=6))
def test_lines_decoded_together_give_the_events_of_a_reading_line_by_line(
        lines: list[bytes], end: bytes, cuts: list[int]) -> None:
    raw = b"".join(line + end for line in lines)
    points = sorted({min(c, len(raw)) for c in cuts})
    framer = SSEFramer()
    got = [event for a, b in zip([0, *points], [*points, len(raw)], strict=True)
           for event in framer.feed(raw[a:b])]
    assert got == events_line_by_line(raw)


# --------------------------------------------------------------------------- Chat deltas

TEXTS = st.text(st.characters(exclude_categories=["Cs"]), max_size=4)
DELTA_FIELDS = {
    "role": st.sampled_from(["assistant", None]),
    "content": st.one_of(TEXTS, st.none(), st.just([{"type": "text", "text": "a"}]),
                         st.just([{"type": "thinking", "thinking": "t"}])),
    "refusal": st.one_of(TEXTS, st.none()),
    "reasoning": st.one_of(TEXTS, st.none()),
    "reasoning_content": TEXTS,
    "reasoning_details": st.just([{"type": "reasoning.text", "text": "d", "index": 0}]),
    "tool_calls": st.lists(st.fixed_dictionaries(
        {"index": st.integers(0, 1)},
        optional={"id": st.sampled_from(["call_1", "call_2"]),
                  "type": st.just("function"),
                  "function": st.fixed_dictionaries(
                      {}, optional={"name": st.sampled_from(["f", "g"]),
                                    "arguments": st.sampled_from(['{"a"', ': 1}', "{}"])})}),
        max_size=2),
    "other": st.just(1),
}


@st.composite
def chat_stream(draw: st.DrawFn) -> bytes:
    """A Chat Completions stream: chunks with or without their head fields, keys of a
    server's own, usage, and deltas of a few fields of any kind, ended by ``[DONE]`` or
    not."""
    raw = b""
    for _ in range(draw(st.integers(1, 5))):
        keys = draw(st.lists(st.sampled_from(sorted(DELTA_FIELDS)), max_size=3, unique=True))
        delta = {key: draw(DELTA_FIELDS[key]) for key in keys}
        choice: dict[str, Any] = {"index": draw(st.sampled_from([0, 0, 1])), "delta": delta,
                                  "finish_reason": draw(st.sampled_from([None, None, "stop"]))}
        chunk = draw(st.fixed_dictionaries({"choices": st.just([choice])}, optional={
            "id": st.sampled_from(["chatcmpl-1", ""]), "model": st.sampled_from(["m", ""]),
            "created": st.just(7), "object": st.just("chat.completion.chunk"),
            "system_fingerprint": st.sampled_from(["fp", None]),
            "usage": st.just({"prompt_tokens": 2, "completion_tokens": 3})}))
        raw += b"data: " + json.dumps(chunk).encode() + b"\n\n"
    return raw + draw(st.sampled_from([b"data: [DONE]\n\n", b""]))


def chat_decoded(raw: bytes) -> tuple[Any, ...]:
    decoder = get_codec("openai-chat").stream_decoder(request=Request(model="m"))
    try:
        events = [*decoder.feed(raw)]
        return events, decoder.finish()
    except ToolwireError as exc:
        return type(exc).__name__, str(exc)


@given(chat_stream())
@example(b'data: {"choices": [{"index": 0, "delta": {"content": "a", "refusal": "no"}}]}\n\n')
def test_a_delta_of_text_alone_is_read_as_every_field_is_read(raw: bytes) -> None:
    from toolwire.codecs.openai_chat import stream

    quick = chat_decoded(raw)
    with mock.patch.object(stream, "_TEXT_DELTA_KEYS", frozenset()):  # every delta read whole
        assert chat_decoded(raw) == quick


# --------------------------------------------------------------------------- per-model fixes

MODELS = st.sampled_from([
    "gpt-5.2", "gpt-5.4-mini", "gpt-5.6", "GPT-6-pro", "openai/gpt-6", "deepseek-reasoner",
    "deepseek-v3.2-exp", "deepseek-v4-flash", "deepseek-r1", "models/deepseek-r1-lite",
    "gpt-4o", "o3", "claude-opus-5"])
CODES = st.sampled_from(["effort_with_tools", "effort_with_tools_by_default",
                         "reasoning_passback", "reasoning_refused", "other"])
OPTIONS = st.one_of(
    st.none(),
    st.fixed_dictionaries({"openai-chat": st.fixed_dictionaries({}, optional={
        "_rules": st.one_of(st.dictionaries(CODES, st.booleans(), max_size=2), st.just("x")),
        "reasoning_effort": st.sampled_from(["none", "high"]),
        "thinking": st.just({"type": "disabled"}),
        "temperature": st.just(0.5)})}),
    st.just({"anthropic-messages": {"_rules": {"reasoning_passback": True}}}))


@st.composite
def chat_requests(draw: st.DrawFn) -> Request:
    """Requests that the Chat Completions fixes look at: tools or none, assistant turns with
    calls and reasoning (or a call's reasoning alone), their results."""
    messages = [Message(role="user", parts=(TextPart(text="go"),))]
    for n in range(draw(st.integers(0, 2))):
        parts: list[Any] = []
        if draw(st.booleans()):
            parts.append(transcript.ReasoningPart(text=draw(st.sampled_from(["", "why"]))))
        if draw(st.booleans()):
            parts.append(TextPart(text="so"))
        calls = draw(st.booleans())
        if calls:
            parts.append(ToolCallPart(id=f"call_{n}", name="f", arguments={"a": n}))
        messages.append(Message(role="assistant", parts=tuple(parts)))
        if calls:
            messages.append(Message(role="tool", parts=(
                transcript.ToolResultPart(call_id=f"call_{n}", content="ok"),)))
    tools = (transcript.ToolSpec(name="f"),) if draw(st.booleans()) else ()
    return Request(model=draw(MODELS), messages=tuple(messages), tools=tools,
                   provider_options=draw(OPTIONS))


def fitted_outcome(request: Request, general: bool) -> Any:
    from toolwire.codecs import per_model
    from toolwire.codecs.openai_chat.request import encode

    with mock.patch.object(per_model, "RULED", {} if general else per_model.RULED):
        fitted = per_model.fitted(encode, "openai-chat", per_model.CHAT_FIXES)
    try:
        return fitted(request)
    except ToolwireError as exc:
        return type(exc).__name__, str(exc)


SET_ON = {"openai-chat": {"_rules": {"reasoning_passback": True}}}
CALLED = (Message(role="user", parts=(TextPart(text="go"),)),
          Message(role="assistant", parts=(ToolCallPart(id="c", name="f", arguments={}),)),
          Message(role="tool", parts=(transcript.ToolResultPart(call_id="c", content="ok"),)))


@given(chat_requests())
@example(Request(model="gpt-4o", messages=CALLED, provider_options=SET_ON))
@example(Request(model="gpt-4o", messages=CALLED, tools=(transcript.ToolSpec(name="f"),),
                 provider_options={"openai-chat": {"_rules": {"effort_with_tools": True},
                                                   "reasoning_effort": "high"}}))
def test_fixes_no_rule_of_which_covers_the_model_are_left_out_as_they_change_nothing(
        request: Request) -> None:
    assert fitted_outcome(request, general=False) == fitted_outcome(request, general=True)


def test_a_fix_whose_rule_covers_the_model_is_still_made() -> None:
    request = Request(model="deepseek-reasoner", tools=(transcript.ToolSpec(name="f"),), messages=(
        Message(role="user", parts=(TextPart(text="go"),)),
        Message(role="assistant", parts=(ToolCallPart(id="c", name="f", arguments={}),)),
        Message(role="tool", parts=(transcript.ToolResultPart(call_id="c", content="ok"),))))
    body = get_codec("openai-chat").encode(request).body
    assert body["messages"][1]["reasoning_content"] == ""


# --------------------------------------------------------------------------- request heads

HEADER_NAMES = st.sampled_from(["content-type", "authorization", "x-api-key", "Host",
                                "connection", "Content-Length", "transfer-encoding", "x-b"])


HEADERS = st.dictionaries(HEADER_NAMES, st.sampled_from(["a", "close", "keep-alive", "1"]),
                          max_size=4)


@given(st.lists(st.tuples(HEADERS, st.sampled_from(["POST", "GET", "PUT"]),
                          st.sampled_from(["http://h/v1/x", "http://h:8080/v1/y",
                                           "http://[::1]:81/z"]),
                          st.binary(max_size=3)), min_size=1, max_size=6))
def test_a_kept_request_head_is_the_head_made_anew(
        sent: list[tuple[dict[str, str], str, str, bytes]]) -> None:
    """Requests one after another through one transport: each head, made or kept, is the
    one made from its own method, URL, headers and body."""
    import httpx2

    from toolwire.http.plain import head_bytes
    from toolwire.http.transport import HttpTransport, WireRequest

    transport = HttpTransport()
    transport._defaults = [(b"accept", b"Accept", b"*/*"), (b"user-agent", b"User-Agent", b"t")]
    for headers, method, url, body in sent:
        request = WireRequest(url=url, body={}, headers=headers, method=method)
        named = {k.lower() for k in headers}
        pairs = [(k, v) for lower, k, v in transport._defaults if lower.decode() not in named]
        pairs += [(k.encode(), v.encode()) for k, v in headers.items()]
        assert transport._head(request, httpx2.URL(url), body) == head_bytes(
            method, httpx2.URL(url), pairs, body)


# --------------------------------------------------------------------------- reply ids


@pytest.mark.parametrize("seed", range(40))
def test_a_reply_id_has_the_digits_uuid4_gives_from_the_same_bytes(seed: int) -> None:
    from toolwire.proxy.live import random_id

    drawn = os.urandom(16) if seed else bytes(16)
    with mock.patch("os.urandom", return_value=drawn):
        expected = uuid.uuid4().hex[:24]
    with mock.patch("os.urandom", side_effect=lambda n: drawn[:n]):
        assert random_id() == expected
