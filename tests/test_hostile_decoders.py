"""Every decoder of every wire is total: whatever it is given, a value or a toolwire error.

Property tests feed each decoder arbitrary JSON values, recorded bodies mutated structurally
(keys deleted or renamed, values retyped, nulled, made huge or deep) and arbitrary or damaged
stream bytes split and cut at random; the only exceptions allowed are toolwire errors, and none
may come from the codecs' last net (an exception a wire let out, which names no path). The
regression tests below pin the behaviours hostile input showed, numbered as in
docs/wires.md's list of what a decoder does with hostile input.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostile import (
    DECODERS,
    hostile_input,
    mutate,
    mutate_stream,
    nested,
    outcome,
    random_json,
    run_decoder,
    seeds,
    shown,
    split,
)
from toolwire import _json
from toolwire.codecs import get_codec, reading
from toolwire.codecs.framing import NDJSONFramer, SSEFramer
from toolwire.codecs.guards import kept_values
from toolwire.codecs.registry import get_wire
from toolwire.errors import (
    JSONTextError,
    ProviderError,
    RateLimitError,
    StreamError,
    ToolwireError,
    WireFormatError,
)
from toolwire.events import StreamEnd
from toolwire.protocol import holds_nothing
from toolwire.transcript import Message, Reply, Request, TextPart, ToolCallPart
from toolwire.transcript_json import to_json
from wire_data import data, looped

BOUNDED = settings(max_examples=40, deadline=None, derandomize=True,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                          HealthCheck.large_base_example])


def allowed(result: str) -> bool:
    """A value, or a toolwire error that names what was wrong (not the last net's)."""
    return not result.startswith(("escape:", "net:"))


# --------------------------------------------------------------------------- properties


@pytest.mark.parametrize("decoder", DECODERS)
@pytest.mark.parametrize("wire", looped())
@BOUNDED
@given(rng=st.integers(0, 2**32).map(random.Random))
def test_hostile_inputs_give_a_value_or_a_toolwire_error(
    wire: str, decoder: str, rng: random.Random
) -> None:
    value = hostile_input(rng, wire, decoder)
    result = outcome(lambda: run_decoder(wire, decoder, value, rng))
    assert allowed(result), (result, shown(value))


@pytest.mark.parametrize("wire", looped())
@BOUNDED
@given(value=st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12))
def test_any_json_value_gives_a_reply_request_or_toolwire_error(wire: str, value: Any) -> None:
    for decoder in ("response", "request", "error"):
        given_value = (200, value, None) if decoder == "error" else value
        result = outcome(lambda d=decoder, v=given_value: run_decoder(wire, d, v))
        assert allowed(result), (decoder, result)


@pytest.mark.parametrize("wire", looped())
@BOUNDED
@given(data=st.binary(max_size=300), rng=st.integers(0, 2**32).map(random.Random))
def test_any_bytes_split_anywhere_give_events_or_a_toolwire_error(
    wire: str, data: bytes, rng: random.Random
) -> None:
    result = outcome(lambda: run_decoder(wire, "stream", data, rng))
    assert allowed(result), result


@pytest.mark.parametrize("wire", looped())
@BOUNDED
@given(rng=st.integers(0, 2**32).map(random.Random))
def test_a_real_stream_damaged_cut_and_split_gives_events_or_a_toolwire_error(
    wire: str, rng: random.Random
) -> None:
    raw = rng.choice(seeds(wire).streams)
    for damaged in (raw[: rng.randrange(len(raw) + 1)], mutate_stream(rng, raw)):
        result = outcome(lambda d=damaged: run_decoder(wire, "stream", d, rng))
        assert allowed(result), result


@pytest.mark.parametrize("wire", looped())
def test_a_real_stream_split_anywhere_gives_the_whole_streams_reply(wire: str) -> None:
    rng = random.Random(7)
    codec = get_codec(wire)
    for raw in seeds(wire).streams:
        whole = list(codec.decode_stream([raw]))[-1]
        for _ in range(3):
            assert list(codec.decode_stream(split(rng, raw)))[-1] == whole


# --------------------------------------------------------------------------- regressions

TWO_CALL_REPLY = {wire: seeds(wire).replies[0] for wire in looped()}


def _arguments_with(wire: str, text: str) -> bytes:
    """The first recorded reply of ``wire`` as JSON text, its call's city replaced by ``text``
    (a JSON string body, escapes and all)."""
    raw = json.dumps(TWO_CALL_REPLY[wire])
    assert "Bern" in raw
    return raw.replace("Bern", text).encode()


@pytest.mark.parametrize("wire", looped())
def test_1_a_lone_surrogate_in_call_arguments_reads_as_a_replacement_character(wire: str) -> None:
    """A lone surrogate escape is valid JSON but no character: it is read as U+FFFD, and the
    next request and the saved transcript are valid UTF-8 JSON."""
    codec = get_codec(wire)
    body = _json.loads(_arguments_with(wire, "\\udcff"))
    reply = codec.decode_response(body)
    call = reply.tool_calls[0]
    assert call.arguments == {"city": "\ufffd"}
    request = Request(model="m", messages=(Message.user("go"), reply.message))
    sent = _json.dumps(get_codec(wire).encode_request(request))
    assert "\ufffd" in sent.decode("utf-8")  # strict: no surrogate got through
    saved = _json.dumps(to_json(request))
    assert json.loads(saved.decode("utf-8")) == to_json(request)


def test_1_text_built_in_python_with_a_lone_surrogate_is_written_as_its_escape() -> None:
    """Writing never fails: a lone surrogate that reached a value some other way is escaped."""
    call = ToolCallPart(id="c", name="f", arguments={"city": "\udcff"})
    request = Request(model="m", messages=(Message.user("a\ud800"),
                                           Message(role="assistant", parts=(call,))))
    for wire in looped():
        sent = _json.dumps(get_codec(wire).encode_request(request))
        assert b"\\udcff" in sent and b"\\ud800" in sent, wire
        sent.decode("utf-8")  # strict


@pytest.mark.parametrize("wire", looped())
def test_2_json_nested_past_the_limit_is_refused_naming_the_limit(wire: str) -> None:
    """Nesting past MAX_DEPTH is a toolwire error naming the limit, in text, in a stream event
    and in a dict built in Python 10,000 levels deep."""
    codec = get_codec(wire)
    deep_text = b'{"a":' * 10_000 + b"1" + b"}" * 10_000
    with pytest.raises(JSONTextError, match=f"deeper than {_json.MAX_DEPTH} levels"):
        _json.loads(deep_text)
    with pytest.raises(WireFormatError, match=f"deeper than {_json.MAX_DEPTH} levels"):
        codec.decode_response(deep_text)
    just_over = b"[" * (_json.MAX_DEPTH + 1) + b"]" * (_json.MAX_DEPTH + 1)
    for form in (bytes, bytearray, memoryview, bytes.decode):  # every kind of text, counted
        with pytest.raises(JSONTextError, match=r"at \[0\]"):
            _json.loads(form(just_over))
    assert _json.loads(b"[" * _json.MAX_DEPTH + b"]" * _json.MAX_DEPTH) is not None
    for decode in (codec.decode_response, codec.decode_request):
        with pytest.raises(WireFormatError, match=wire):
            decode(mutate_deep(TWO_CALL_REPLY[wire] if decode is codec.decode_response
                               else seeds(wire).requests[0]))
    if data(wire).KEEPS_UNKNOWN_FIELDS:  # kept whole, and refused with its path
        kept = {**TWO_CALL_REPLY[wire], "x_extra": nested(10_000)}
        with pytest.raises(WireFormatError, match=f"x_extra.*deeper than {_json.MAX_DEPTH}"):
            codec.decode_response(kept)
    frame = deep_text + b"\n" if get_wire(wire).framing == "ndjson" else \
        b"data: " + deep_text + b"\n\n"
    result = outcome(lambda: list(codec.decode_stream([frame])))
    assert result in ("StreamError", "WireFormatError", "JSONTextError"), result


def _with_text_at(body: Any, place: tuple[Any, Any], text: str) -> str:
    """``body`` as JSON text with the value at ``place`` (container, key) replaced by ``text``
    (JSON text too deep for a writer that recurses)."""
    container, key = place
    old = container[key]
    container[key] = "\u0000PLACE\u0000"
    try:
        return json.dumps(body).replace('"\\u0000PLACE\\u0000"', text)
    finally:
        container[key] = old


def _places_in(value: Any) -> list[tuple[Any, Any]]:
    todo, out = [value], []
    while todo:
        node = todo.pop()
        pairs = node.items() if isinstance(node, dict) else enumerate(node)
        for key, item in pairs:
            out.append((node, key))
            if isinstance(item, dict | list):
                todo.append(item)
    return out


@pytest.mark.parametrize("wire", looped())
def test_2_a_reply_keeps_nothing_nested_past_the_limit_from_its_text(wire: str) -> None:
    """A reply's text is held to the depth limit where its values are kept (a reply of 100 KB
    of text costs no bracket count): a value one level past the limit at every place of a
    recorded reply, in turn, is refused where the reply would keep it, with the limit and the
    part named, and dropped with the rest where the decoder never keeps it. Either way no
    decoded reply holds anything deeper than the limit."""
    codec = get_codec(wire)
    body = json.loads(json.dumps(TWO_CALL_REPLY[wire]))
    if data(wire).KEEPS_UNKNOWN_FIELDS:  # its reply has no field kept whole: a vendor's extra
        body["x_vendor"] = {"note": 1}
    just_over = "[" * (_json.MAX_DEPTH + 1) + "]" * (_json.MAX_DEPTH + 1)
    within = "[" * (_json.MAX_DEPTH - 10) + "]" * (_json.MAX_DEPTH - 10)  # room for its block
    held, dropped = [], []
    for place in _places_in(body):
        text = _with_text_at(body, place, just_over)
        assert len(text) > _json.SHALLOW
        try:
            reply = codec.decode_response(text.encode())
        except WireFormatError as exc:
            if f"deeper than {_json.MAX_DEPTH} levels" in str(exc):
                held.append(place[1])
                reply = codec.decode_response(_with_text_at(body, place, within).encode())
                assert any(within in json.dumps(value, separators=(",", ":"))
                           for value, _ in kept_values(reply)), place[1]
            continue
        for value, where in kept_values(reply):
            assert reading.first_problem(where, value) is None, (place[1], where)
        dropped.append(place[1])
    assert held and dropped, (held, dropped)


def test_2_a_value_built_in_python_past_the_limit_is_not_kept() -> None:
    """A mapping no reader of ours saw is checked whole where the reply keeps it: nesting past
    the limit (well within the interpreter's) in a block kept as it came is named."""
    codec = get_codec("anthropic-messages")
    block = {"type": "x_custom_block", "data": nested(_json.MAX_DEPTH + 5)}
    body = {**TWO_CALL_REPLY["anthropic-messages"],
            "content": [*TWO_CALL_REPLY["anthropic-messages"]["content"], block]}
    with pytest.raises(WireFormatError, match=rf"part 2.*deeper than {_json.MAX_DEPTH} levels"):
        codec.decode_response(body)
    block["data"] = nested(10)
    assert codec.decode_response(body).message.parts[2] is not None


def mutate_deep(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with a value 10,000 levels deep at every top-level key."""
    return {key: nested(10_000, value) for key, value in body.items()}


@pytest.mark.parametrize("wire", looped())
@pytest.mark.parametrize("body", [None, [], 42, "", "null", b"[]", True])
def test_3_a_body_that_is_not_an_object_is_a_wire_format_error(wire: str, body: Any) -> None:
    with pytest.raises(WireFormatError, match=f"{wire} reply"):
        get_codec(wire).decode_response(body)


@pytest.mark.parametrize("wire", looped())
@pytest.mark.parametrize("number", [b"1e400", b"-1e400", b"Infinity", b"NaN"])
def test_4_numbers_no_float_holds_are_refused_where_json_is_read(wire: str, number: bytes) -> None:
    """1e400, Infinity and NaN in a usage count: a toolwire error naming the number, never
    OverflowError; the same value in a dict built in Python is named with its path."""
    raw = json.dumps(TWO_CALL_REPLY[wire]).encode()
    key = data(wire).USAGE_TEXT
    assert key in raw
    damaged = raw.replace(key, key[:-2] + number)
    with pytest.raises(JSONTextError, match=r"out of range|not a JSON number"):
        get_codec(wire).decode_response(damaged)


@pytest.mark.parametrize("wire", looped())
def test_4_a_count_that_is_not_finite_in_a_python_dict_is_named_by_its_path(wire: str) -> None:
    body = json.loads(json.dumps(TWO_CALL_REPLY[wire]))
    _set_counts(body, float("inf"))
    result = outcome(lambda: get_codec(wire).decode_response(body))
    assert allowed(result), result


def _set_counts(body: Any, value: Any) -> None:
    todo = [body]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            for key, item in node.items():
                if isinstance(item, int) and not isinstance(item, bool) and "oken" in key:
                    node[key] = value
                todo.append(item)
        elif isinstance(node, list):
            todo.extend(node)


@pytest.mark.parametrize("wire", looped())
def test_5_bytes_that_are_not_utf8_in_a_stream_read_as_replacement_characters(wire: str) -> None:
    """A stray byte, or a stream cut inside a character, gives U+FFFD, never UnicodeDecodeError."""
    codec = get_codec(wire)
    reply = Reply(message=Message(role="assistant", parts=(TextPart(text="ZZZZZZ"),)))
    raw = b"".join(codec.encode_stream(reply))
    broken = raw.replace(b"Z", b"Z\xff")
    if get_wire(wire).framing == "eventstream":  # checksummed binary frames: a changed byte
        assert outcome(lambda: list(codec.decode_stream([broken]))) == "StreamError"
        return
    events = list(codec.decode_stream([broken[i:i + 3] for i in range(0, len(broken), 3)]))
    assert isinstance(events[-1], StreamEnd)
    assert events[-1].reply.text.count("\ufffd") == 6
    cut = raw[: raw.index(b"Z")] + "é".encode()[:1]
    assert outcome(lambda: list(codec.decode_stream([cut]))) in ("value", "StreamError")


def test_5_framers_replace_broken_utf8_and_a_character_split_between_chunks_survives() -> None:
    sse = SSEFramer()
    text = b"data: \xc3\xa9\xff\n\n"
    events = [e for i in range(len(text)) for e in sse.feed(text[i:i + 1])]
    assert [e.data for e in events] == ["é\ufffd"]
    lines = NDJSONFramer()
    assert lines.feed(b'{"a": "\xc3') + lines.feed(b'\xa9"}\n\xff\n') == ['{"a": "é"}', "\ufffd"]


def test_6_an_openai_chat_request_names_a_message_that_is_not_an_object() -> None:
    codec = get_codec("openai-chat")
    with pytest.raises(WireFormatError, match=r"messages\[0\]: expected an object"):
        codec.decode_request({"messages": [1, None, "x", []]})
    with pytest.raises(WireFormatError, match="request: the body: expected a JSON object"):
        codec.decode_request([{"role": "user", "content": "hi"}])  # type: ignore[arg-type]


@pytest.mark.parametrize("wire", looped())
def test_7_an_empty_reply_is_read_as_a_reply_that_holds_nothing(wire: str) -> None:
    """``{}`` is no answer: the decoder gives what it read, or a shape error, and
    `holds_nothing` tells the run level so."""
    codec = get_codec(wire)
    try:
        reply = codec.decode_response({})
    except WireFormatError:
        return
    assert holds_nothing(reply)


@pytest.mark.parametrize("wire", looped())
def test_7_an_error_body_that_came_as_a_reply_raises_its_typed_error(wire: str) -> None:
    for body in data(wire).ERROR_AS_REPLY:
        with pytest.raises(ProviderError, match="slow down") as info:
            get_codec(wire).decode_response(body)
        if data(wire).ERROR_NAMES_KIND:
            assert isinstance(info.value, RateLimitError), (body, info.value)


def _framing_cost(framer: SSEFramer | NDJSONFramer, size: int) -> int:
    """Bytes the framer scanned and copied for one ``size``-byte event fed in 64-byte chunks."""
    if isinstance(framer, SSEFramer):
        event = b"data: " + b"x" * size + b"\n\n"
    else:
        event = b"x" * size + b"\n"
    for at in range(0, len(event), 64):
        framer.feed(event[at:at + 64])
    return framer.scanned + framer.copied


@pytest.mark.parametrize("make", [SSEFramer, NDJSONFramer])
def test_8_framing_work_grows_linearly_with_the_event_whatever_the_chunks(make: Any) -> None:
    """A 1 MiB event in 64-byte chunks costs about 16 times a 64 KiB one (not 256 times)."""
    small, large = _framing_cost(make(), 64 * 1024), _framing_cost(make(), 1024 * 1024)
    assert 15 < large / small < 17
    assert large < 4 * 1024 * 1024  # a few passes over the bytes, no more


@pytest.mark.parametrize("field", ["output_index", "content_index", "summary_index"])
def test_10_a_huge_index_from_a_responses_stream_drives_no_loop(field: str) -> None:
    """An index of 10**18 in an event is not a count: the stream ends at once, with one item."""
    events = [
        {"type": "response.created", "response": {"id": "r", "output": []}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"type": "message", "id": "m", "content": []}},
        {"type": "response.output_text.delta", "item_id": "m", "output_index": 0,
         "content_index": 0, "delta": "hi", field: 10**18},
        {"type": "response.completed", "response": {"id": "r", "status": "completed"}},
    ]
    raw = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
    reply = list(get_codec("openai-responses").decode_stream([raw]))[-1].reply
    assert reply.text == "hi" and len(reply.message.parts) == 1


def test_10_a_huge_output_index_on_a_finished_item_drives_no_loop() -> None:
    events = [
        {"type": "response.output_item.done", "output_index": 10**18,
         "item": {"type": "message", "id": "m", "content": [{"type": "output_text",
                                                             "text": "far"}]}},
        {"type": "response.completed", "response": {"id": "r", "status": "completed"}},
    ]
    raw = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
    reply = list(get_codec("openai-responses").decode_stream([raw]))[-1].reply
    assert reply.text == "far"


def test_media_sized_bodies_are_read_whole() -> None:
    """Several megabytes of base64 in one body are within every limit."""
    image = "iVBORw0KGgo" * 500_000  # 5.5 MB
    body = json.dumps({"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{image}"}}]}]})
    assert len(_json.loads(body.encode())["messages"]) == 1


@pytest.mark.parametrize("wire", looped())
def test_mutated_recorded_replies_keep_to_the_contract(wire: str) -> None:
    """A fixed sample of structural mutations of every recorded reply (a quick campaign)."""
    rng = random.Random(wire)
    for body in seeds(wire).replies:
        for _ in range(30):
            damaged = mutate(rng, body)
            result = outcome(lambda d=damaged: get_codec(wire).decode_response(d))
            assert allowed(result), result


def test_random_json_is_json() -> None:
    """The campaign's random values are what a JSON reader could give (or weirder, on purpose)."""
    rng = random.Random(3)
    kinds = {type(random_json(rng)).__name__ for _ in range(200)}
    assert {"dict", "list", "str"} <= kinds
    assert issubclass(JSONTextError, ToolwireError) and issubclass(StreamError, ToolwireError)


def test_10_a_negative_output_index_and_a_content_block_that_is_no_object_are_named() -> None:
    """Indexes below zero are keys too; a delta for a block that is no object is a StreamError."""
    events = [
        {"type": "response.output_item.added", "output_index": -3,
         "item": {"type": "message", "id": "m", "content": []}},
        {"type": "response.output_text.delta", "output_index": -3, "content_index": 0,
         "delta": "x"},
        {"type": "response.completed", "response": {
            "id": "r", "status": "completed", "output": [{"type": "message", "content": []}]}},
    ]
    codec = get_codec("openai-responses")
    raw = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
    assert list(codec.decode_stream([raw]))[-1].reply.text == "x"
    events[0]["item"]["content"] = [5]  # type: ignore[index]
    raw = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
    with pytest.raises(StreamError, match=r"output\[-3\]\.content\[0\]: expected an object"):
        list(codec.decode_stream([raw]))


def test_a_content_item_whose_type_is_an_object_is_kept_as_it_came() -> None:
    """A type that cannot be looked up in a set (an object, a list) is an unknown item type."""
    for kind in ({"output": 1}, [1.5, None]):
        body = {"model": "m", "messages": [
            {"role": "user", "content": [{"type": kind, "text": "a"}]},
            {"role": "assistant", "content": [{"type": kind, "text": "b"}]},
            {"role": "tool", "tool_call_id": "c", "content": [{"type": kind}]}]}
        assert outcome(lambda: get_codec("openai-chat").decode_request(body)) == "value"  # noqa: B023
        responses = {"model": "m", "input": [{"type": "function_call_output", "call_id": "c",
                                              "output": [{"type": kind}]}]}
        assert not outcome(lambda: get_codec("openai-responses").decode_request(
            responses)).startswith(("escape:", "net:"))  # noqa: B023
