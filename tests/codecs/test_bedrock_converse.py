"""The bedrock-converse codec against botocore's Bedrock Runtime service model.

Requests we encode validate against the ``Converse`` input shape (members, types, required
members); replies are read from bodies shaped by the output shape, and our replies validate
against it; our streams parse with botocore's own event-stream parser into the events the
model names. Round trips (requests, replies, streams split anywhere) hold for generated values.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import botocore.session
import pytest
from botocore.eventstream import EventStream
from botocore.parsers import EventStreamJSONParser, create_parser
from botocore.validate import ParamValidator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strategies import argument_objects, call_ids, texts, tool_names, tool_specs
from toolwire.codecs import get_codec
from toolwire.codecs.bedrock_converse import codec as B
from toolwire.codecs.eventstream import encode_message
from toolwire.errors import (
    ContextLengthError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
    ServerError,
    StreamError,
    WireFormatError,
)
from toolwire.events import StreamEnd, TextDelta, ToolCallFinished, ToolCallStarted
from toolwire.transcript import (
    Message,
    ReasoningPart,
    Reply,
    Request,
    StopReason,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
    Usage,
)

WIRE = "bedrock-converse"
C = get_codec(WIRE)
MODEL = botocore.session.get_session().get_service_model("bedrock-runtime")
HYP = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_request(body: dict[str, Any], model: str = "anthropic.claude-sonnet-4-5") -> None:
    """The body validates against botocore's ``ConverseRequest`` shape."""
    shape = MODEL.operation_model("Converse").input_shape
    report = ParamValidator().validate({"modelId": model, **json.loads(json.dumps(body))},
                                       shape)
    assert not report.has_errors(), report.generate_report()


def check_reply(body: dict[str, Any]) -> None:
    shape = MODEL.operation_model("Converse").output_shape
    report = ParamValidator().validate(json.loads(json.dumps(body)), shape)
    assert not report.has_errors(), report.generate_report()


def botocore_reply(body: dict[str, Any]) -> dict[str, Any]:
    """What botocore's rest-json parser makes of a reply body (shaped by the model)."""
    shape = MODEL.operation_model("Converse").output_shape
    parsed: dict[str, Any] = create_parser("rest-json").parse(
        {"status_code": 200, "headers": {}, "body": json.dumps(body).encode()}, shape)
    parsed.pop("ResponseMetadata", None)
    return parsed


def botocore_events(frames: list[bytes]) -> list[dict[str, Any]]:
    """Our stream read by botocore's ``EventStream`` with the ConverseStream output shape."""
    op = MODEL.operation_model("ConverseStream")
    shape = op.output_shape.members["stream"]

    class Raw:
        def stream(self) -> Any:
            return iter(frames)

        def close(self) -> None:
            pass

    events = EventStream(Raw(), shape, EventStreamJSONParser(), "ConverseStream")
    return [{k: v for k, v in e.items() if k != "ResponseMetadata"} for e in events]


WEATHER = ToolSpec(name="get_weather", description="Weather for a city.",
                   input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                                 "required": ["city"]})
SIGNED = {"reasoningText": {"text": "Check the weather first.", "signature": "c2lnbmF0dXJl"}}


def history() -> Request:
    return Request(
        model="anthropic.claude-sonnet-4-5", system="Be brief.", tools=(WEATHER,),
        tool_choice=ToolChoice(mode="auto"), max_tokens=300, temperature=0.2,
        messages=(
            Message.user("Weather in Oslo?"),
            Message(role="assistant", parts=(
                ReasoningPart(text="Check the weather first.", provider_data={WIRE: SIGNED}),
                TextPart(text="Looking."),
                ToolCallPart(id="tooluse_1", name="get_weather", arguments={"city": "Oslo"}))),
            Message(role="tool", parts=(ToolResultPart(
                call_id="tooluse_1", content="no station", is_error=True,
                name="get_weather"),)),
            Message.user("Try Bergen."),
        ))


# --- request


def test_request_validates_against_the_service_model_and_reads_back() -> None:
    body = C.encode_request(history())
    check_request(body)
    assert body["system"] == [{"text": "Be brief."}]
    assert body["inferenceConfig"] == {"maxTokens": 300, "temperature": 0.2}
    assert body["toolConfig"]["toolChoice"] == {"auto": {}}
    assert body["messages"][1]["content"][0] == {"reasoningContent": SIGNED}
    assert body["messages"][2]["content"] == [
        {"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "no station"}],
                        "status": "error"}},
        {"text": "Try Bergen."}]
    assert C.decode_request(body, model=history().model) == history()


def test_the_validator_would_catch_a_misspelled_member() -> None:
    body = C.encode_request(history())
    body["inferenceConfig"]["max_tokens"] = 5
    with pytest.raises(AssertionError, match="max_tokens"):
        check_request(body)


def test_tool_choices_and_what_converse_cannot_say() -> None:
    def choice(c: ToolChoice) -> tuple[Any, list[str]]:
        enc = C.encode(Request(model="m", tools=(WEATHER,), tool_choice=c,
                               messages=(Message.user("hi"),)))
        check_request(enc.body)
        return enc.body["toolConfig"].get("toolChoice"), [n.kind for n in enc.notes]

    assert choice(ToolChoice(mode="required")) == ({"any": {}}, [])
    assert choice(ToolChoice(mode="tool", name="get_weather")) == (
        {"tool": {"name": "get_weather"}}, [])
    assert choice(ToolChoice(mode="none")) == (None, ["choice_changed"])
    assert choice(ToolChoice(mode="auto", parallel=False)) == ({"auto": {}}, ["choice_changed"])


def test_cache_points_and_settings_come_back_in_their_places() -> None:
    body = {
        "messages": [{"role": "user", "content": [{"text": "hi"}, {"cachePoint": {
            "type": "default"}}]}],
        "system": [{"text": "Be brief."}, {"cachePoint": {"type": "default", "ttl": "1h"}}],
        "inferenceConfig": {"maxTokens": 10, "topP": 0.9, "stopSequences": ["END"]},
        "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {
            "json": dict(WEATHER.input_schema)}}}, {"cachePoint": {"type": "default"}}],
            "toolChoice": {"any": {}}},
        "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
    }
    check_request(body)
    request = C.decode_request(body, model="m")
    assert request.system == "Be brief." and request.max_tokens == 10
    assert request.tool_choice == ToolChoice(mode="required")
    [hi] = request.messages[0].parts  # the cache point rides with the block it follows
    assert hi == TextPart(text="hi", provider_data={WIRE: {"cachePoint": {"type": "default"}}})
    assert C.encode_request(request) == body


def test_prompt_caching_adds_cache_points_within_the_limit() -> None:
    from toolwire.transcript import Cache, replace

    enc = C.encode(replace(history(), cache=Cache(ttl="1h")))
    check_request(enc.body)
    point = {"cachePoint": {"type": "default", "ttl": "1h"}}
    assert enc.body["system"][-1] == point
    assert enc.body["messages"][-1]["content"][-1] == point
    assert enc.body["messages"][0]["content"][-1] == point  # where the last request ended
    assert json.dumps(enc.body).count("cachePoint") == 3
    [note] = [n for n in enc.notes if n.kind == "cache_breakpoints"]
    assert "the system prompt" in note.detail and "(ttl 1h)" in note.detail
    again = C.encode(replace(C.decode_request(enc.body, model="m"), cache=Cache()))
    assert again.body == enc.body  # the points it carried stay, none is added twice


def test_names_and_ids_the_api_refuses_are_mapped_with_notes() -> None:
    request = Request(model="m", tools=(ToolSpec(name="math.sum"),), messages=(
        Message.user("add"),
        Message(role="assistant", parts=(ToolCallPart(id="call#1", name="math.sum",
                                                      arguments={}),)),
        Message(role="tool", parts=(ToolResultPart(call_id="call#1", content="3"),))))
    enc = C.encode(request)
    check_request(enc.body)
    assert {n.kind for n in enc.notes} == {"tool_name_mapped", "id_rewritten"}
    use = enc.body["messages"][1]["content"][0]["toolUse"]
    result = enc.body["messages"][2]["content"][0]["toolResult"]
    assert use["toolUseId"] == result["toolUseId"] != "call#1"
    assert use["name"] == enc.body["toolConfig"]["tools"][0]["toolSpec"]["name"] == "math_sum"


@pytest.mark.parametrize(("body", "problem"), [
    ({"messages": []}, "must start with a user message"),
    ({"messages": [{"role": "assistant", "content": [{"text": "x"}]}]}, "start with a user"),
    ({"messages": [{"role": "user", "content": [{"text": "a"}]},
                   {"role": "user", "content": [{"text": "b"}]}]}, "alternate"),
    ({"messages": [{"role": "user", "content": []}]}, "length greater than or equal to 1"),
    ({"messages": [{"role": "robot", "content": [{"text": "a"}]}]}, "enum value set"),
    ({"messages": [{"role": "user", "content": [{"toolResult": {"toolUseId": "a b",
                                                                "content": []}}]}]},
     "regular expression pattern"),
])
def test_check_body_words_problems_as_bedrock_does(body: dict[str, Any], problem: str) -> None:
    assert problem in (C.check_body(body) or "")


@pytest.mark.parametrize("body", [
    {"messages": "hi"}, {"messages": [{"role": "user", "content": "hi"}]},
    {"messages": [{"role": "user", "content": [{"text": 5}]}]},
    {"messages": [], "toolConfig": {"tools": [{"toolSpec": {"name": 1}}]}},
    {"messages": [], "inferenceConfig": []}, {"messages": [], "modelId": 3},
])
def test_a_body_of_the_wrong_shape_is_an_error_naming_the_field(body: dict[str, Any]) -> None:
    with pytest.raises(WireFormatError, match="bedrock-converse: "):
        C.decode_request(body, model="m")


messages_st = st.lists(st.one_of(texts.map(Message.user), st.builds(
    lambda text, calls: [
        Message(role="assistant", parts=(*([TextPart(text=text)] if text else []), *calls)),
        Message(role="tool", parts=tuple(ToolResultPart(call_id=c.id, content=c.name,
                                                        name=c.name, is_error=len(c.id) % 2 == 0)
                                         for c in calls))],
    st.one_of(st.none(), texts),
    st.lists(st.builds(lambda i, n, a: ToolCallPart(id=i, name=n, arguments=a), call_ids,
                       tool_names, argument_objects), min_size=1, max_size=3,
             unique_by=lambda c: c.id))), min_size=1, max_size=4)


@st.composite
def requests(draw: st.DrawFn) -> Request:
    flat: list[Message] = []
    for item in draw(messages_st):
        if isinstance(item, list) or not flat or flat[-1].role != "user":  # Converse turns
            flat.extend(item if isinstance(item, list) else [item])       # alternate
    tools = draw(st.lists(tool_specs(), max_size=3, unique_by=lambda t: t.name))
    choice = draw(st.sampled_from([None, ToolChoice(mode="auto"), ToolChoice(mode="required")]))
    return Request(model="m", messages=tuple(flat), system=draw(st.one_of(st.none(), texts)),
                   tools=tuple(tools), tool_choice=choice if tools else None,
                   max_tokens=draw(st.one_of(st.none(), st.integers(1, 10**5))),
                   temperature=draw(st.one_of(st.none(), st.sampled_from([0.0, 0.5, 1.0]))))


@HYP
@given(requests())
def test_request_round_trip(request: Request) -> None:
    body = json.loads(json.dumps(C.encode_request(request)))
    assert C.decode_request(body, model="m") == request
    check_request(body)


# --- reply


def test_a_reply_shaped_by_the_service_model_decodes() -> None:
    body = {
        "output": {"message": {"role": "assistant", "content": [
            {"reasoningContent": SIGNED}, {"text": "Let me check."},
            {"toolUse": {"toolUseId": "tooluse_9", "name": "get_weather",
                         "input": {"city": "Paris"}}}]}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": 812, "outputTokens": 64, "totalTokens": 2076,
                  "cacheReadInputTokens": 1200, "cacheWriteInputTokens": 0,
                  "cacheDetails": [{"ttl": "5m", "inputTokens": 1200}]},
        "metrics": {"latencyMs": 1432},
    }
    check_reply(body)
    reply = C.decode_response(botocore_reply(body))
    assert reply.stop == "tool_calls" and reply.raw_stop == "tool_use"
    assert reply.text == "Let me check."
    assert reply.tool_calls == (ToolCallPart(id="tooluse_9", name="get_weather",
                                             arguments={"city": "Paris"}),)
    assert reply.usage == Usage(input_tokens=2012, output_tokens=64, cache_read_tokens=1200)
    reasoning = reply.message.parts[0]
    assert isinstance(reasoning, ReasoningPart) and reasoning.provider_data == {WIRE: SIGNED}
    again = C.encode_response(reply)
    check_reply(again)
    assert again["output"] == body["output"] and again["usage"] == body["usage"]


def test_usage_whose_input_already_holds_the_cache_is_not_counted_twice() -> None:
    body = {"output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
            "stopReason": "end_turn", "metrics": {"latencyMs": 1},
            "usage": {"inputTokens": 2000, "outputTokens": 10, "totalTokens": 2010,
                      "cacheReadInputTokens": 1500}}
    assert C.decode_response(body).usage.input_tokens == 2000


@pytest.mark.parametrize(("raw", "stop"), list(B.STOP_REASONS.items()))
def test_every_stop_reason_decodes(raw: str, stop: StopReason) -> None:
    body = {"output": {"message": {"role": "assistant", "content": [{"text": "x"}]}},
            "stopReason": raw, "usage": {"inputTokens": 1, "outputTokens": 1,
                                         "totalTokens": 2}, "metrics": {"latencyMs": 1}}
    check_reply(body)
    assert C.decode_response(body).stop == (stop if stop != "tool_calls" else "end_turn")


def test_a_call_cut_off_at_max_tokens_is_truncated() -> None:
    body = {"output": {"message": {"role": "assistant", "content": [{"toolUse": {
        "toolUseId": "t1", "name": "get_weather", "input": {}}}]}},
        "stopReason": "max_tokens", "usage": {"inputTokens": 1, "outputTokens": 1,
                                              "totalTokens": 2}, "metrics": {"latencyMs": 1}}
    reply = C.decode_response(body)
    assert reply.truncated_call and reply.stop == "max_tokens"


@pytest.mark.parametrize(("body", "match"), [
    ({"output": []}, "output"), ({"output": {"message": {"content": "x"}}}, "content"),
    ({"output": {"message": {"content": [{"text": 1}]}}}, r"content\[0\].text"),
    ({"output": {"message": {"content": [5]}}}, r"content\[0\]"),
])
def test_a_reply_of_the_wrong_shape_is_an_error(body: dict[str, Any], match: str) -> None:
    with pytest.raises(WireFormatError, match=match):
        C.decode_response(body)


@st.composite
def replies(draw: st.DrawFn) -> Reply:
    parts: list[Any] = []
    if draw(st.booleans()):
        said = draw(texts)
        value: dict[str, Any] = {"reasoningText": {"text": said, "signature": draw(texts)}}
        parts.append(ReasoningPart(text=said, provider_data={WIRE: value}))
    if draw(st.booleans()):
        parts.append(TextPart(text=draw(texts)))
    calls = draw(st.lists(st.builds(lambda i, n, a: ToolCallPart(id=i, name=n, arguments=a),
                                    call_ids, tool_names, argument_objects),
                          max_size=3, unique_by=lambda c: c.id))
    parts.extend(calls)
    raw = "tool_use" if calls else draw(st.sampled_from(
        ["end_turn", "stop_sequence", "content_filtered", "guardrail_intervened"]))
    stop: StopReason = "tool_calls" if calls else B.STOP_REASONS[raw]
    read, write, given = draw(st.integers(0, 99)), draw(st.integers(0, 99)), draw(
        st.integers(0, 999))
    return Reply(message=Message(role="assistant", parts=tuple(parts)), stop=stop, raw_stop=raw,
                 usage=Usage(input_tokens=given + read + write,
                             output_tokens=draw(st.integers(0, 999)), cache_read_tokens=read,
                             cache_write_tokens=write))


@HYP
@given(replies())
def test_reply_round_trip(reply: Reply) -> None:
    body = json.loads(json.dumps(C.encode_response(reply)))
    check_reply(body)
    assert C.decode_response(body) == reply


# --- errors


@pytest.mark.parametrize(("status", "kind", "cls"), [
    (400, "ValidationException", InvalidRequestError),
    (403, "AccessDeniedException", PermissionDeniedError),
    (404, "ResourceNotFoundException", NotFoundError),
    (429, "ThrottlingException", RateLimitError),
    (424, "ModelErrorException", InvalidRequestError),
    (500, "InternalServerException", ServerError),
    (503, "ServiceUnavailableException", OverloadedError),
])
def test_error_types_from_the_header_or_the_body(status: int, kind: str,
                                                 cls: type[ProviderError]) -> None:
    in_header = C.decode_error(status, {"message": "no"},
                               {"X-Amzn-ErrorType": f"{kind}:http://internal.amazon.com/"})
    in_body = C.decode_error(status, json.dumps(C.encode_error(status, "no")))
    for error in (in_header, in_body):
        assert type(error) is cls and error.error_type == kind and error.message == "no"
    assert B.ERROR_STATUS[kind] == status


def test_context_overflow_and_plain_text_errors() -> None:
    error = C.decode_error(400, {"message": "Input is too long for requested model."},
                           {"x-amzn-errortype": "ValidationException"})
    assert isinstance(error, ContextLengthError)
    text = C.decode_error(502, b"<html>Bad Gateway</html>")
    assert isinstance(text, ServerError) and "Bad Gateway" in text.message


# --- stream


def assemble(chunks: list[bytes], request: Request | None = None) -> tuple[list[Any], Reply]:
    events = list(C.decode_stream(chunks, request=request))
    end = events[-1]
    assert isinstance(end, StreamEnd)
    return events[:-1], end.reply


def test_botocore_parses_our_stream_into_the_events_the_model_names() -> None:
    reply = Reply(message=Message(role="assistant", parts=(
        ReasoningPart(text="Check the weather first.", provider_data={WIRE: SIGNED}),
        TextPart(text="Looking it up."),
        ToolCallPart(id="tooluse_2", name="get_weather", arguments={"city": "Rome"}))),
        stop="tool_calls", usage=Usage(input_tokens=30, output_tokens=12, cache_read_tokens=20))
    frames = C.encode_stream(reply)
    seen = botocore_events(frames)
    assert [next(iter(e)) for e in seen][:2] == ["messageStart", "contentBlockDelta"]
    assert seen[-2] == {"messageStop": {"stopReason": "tool_use"}}
    assert seen[-1]["metadata"]["usage"] == {"inputTokens": 10, "outputTokens": 12,
                                             "totalTokens": 42, "cacheReadInputTokens": 20,
                                             "cacheWriteInputTokens": 0}
    starts = [e["contentBlockStart"] for e in seen if "contentBlockStart" in e]
    assert starts == [{"contentBlockIndex": 2, "start": {"toolUse": {
        "toolUseId": "tooluse_2", "name": "get_weather"}}}]
    events, streamed = assemble(frames)
    assert streamed == C.decode_response(C.encode_response(reply))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Looking it up."


def test_padding_unknown_events_and_blocks_without_a_start_are_read() -> None:
    def ev(name: str, payload: dict[str, Any]) -> bytes:
        return encode_message({":event-type": name, ":message-type": "event"},
                              json.dumps({**payload, "p": "abcdefgh"}).encode())

    frames = [ev("messageStart", {"role": "assistant"}),
              ev("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"}}),
              ev("somethingNew", {"x": 1}),
              ev("contentBlockStop", {"contentBlockIndex": 0}),
              ev("messageStop", {"stopReason": "end_turn"}),
              ev("metadata", {"usage": {"inputTokens": 3, "outputTokens": 1, "totalTokens": 4},
                              "metrics": {"latencyMs": 5}})]
    _, reply = assemble(frames)
    assert reply.text == "Hi" and reply.usage == Usage(input_tokens=3, output_tokens=1)


@pytest.mark.parametrize(("kind", "cls"), [
    ("throttlingException", RateLimitError), ("validationException", InvalidRequestError),
    ("serviceUnavailableException", OverloadedError),
    ("internalServerException", ServerError), ("somethingElseException", StreamError)])
def test_an_exception_in_the_stream_raises_the_typed_error(
    kind: str, cls: type[ProviderError]
) -> None:
    frames = [encode_message({":event-type": "messageStart", ":message-type": "event"},
                             b'{"role":"assistant"}'),
              encode_message({":exception-type": kind, ":message-type": "exception",
                              ":content-type": "application/json"}, b'{"message":"slow down"}')]
    with pytest.raises(cls, match="slow down"):
        assemble(frames)


def test_a_stream_cut_before_message_stop_or_corrupted_is_a_stream_error() -> None:
    frames = C.encode_stream(Reply(message=Message.assistant("hello there")))
    with pytest.raises(StreamError, match="messageStop"):
        assemble(frames[:3])
    broken = bytearray(b"".join(frames))
    broken[20] ^= 0xFF
    with pytest.raises(StreamError, match="CRC32"):
        assemble([bytes(broken)])


@HYP
@given(replies(), st.lists(st.integers(0, 10**6), max_size=8))
def test_stream_round_trip_split_anywhere(reply: Reply, cuts: list[int]) -> None:
    raw = b"".join(C.encode_stream(reply))
    points = sorted({c % (len(raw) + 1) for c in cuts})
    pieces = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    events, streamed = assemble(pieces)
    assert streamed == reply
    assert [e.call for e in events if isinstance(e, ToolCallFinished)] == list(reply.tool_calls)
    started = [(e.index, e.id, e.name) for e in events if isinstance(e, ToolCallStarted)]
    assert started == [(i, c.id, c.name) for i, c in enumerate(reply.tool_calls)]


# --- hostile input

_json_any = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
              st.text(max_size=5), st.sampled_from(["text", "toolUse", "toolResult", "json",
                                                    "reasoningContent", "user", "assistant"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(
        ["messages", "role", "content", "text", "toolUse", "toolResult", "toolUseId", "name",
         "input", "status", "output", "message", "stopReason", "usage", "system", "toolConfig",
         "tools", "toolSpec", "inputSchema", "json", "toolChoice", "inferenceConfig",
         "reasoningContent", "reasoningText", "signature", "x"]), inner, max_size=4)),
    max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(_json_any)
def test_any_json_decodes_to_a_value_or_a_toolwire_error(body: Any) -> None:
    from toolwire.errors import ToolwireError

    for decode in (lambda b: C.decode_request(b, model="m"), C.decode_response,
                   lambda b: C.decode_error(400, b, {"x-amzn-errortype": "x"})):
        with contextlib.suppress(ToolwireError):
            decode(body)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=60), _json_any.map(
    lambda v: json.dumps({"contentBlockIndex": 0, "delta": v, "start": v, "role": v,
                          "stopReason": v}).encode())), max_size=4), st.booleans())
def test_any_bytes_stream_to_events_or_a_stream_error(chunks: list[bytes], framed: bool) -> None:
    from toolwire.errors import ToolwireError

    if framed:  # real frames around hostile payloads
        chunks = [encode_message({":event-type": name, ":message-type": "event"}, c)
                  for name, c in zip(["messageStart", "contentBlockDelta", "contentBlockStop",
                                      "messageStop"], chunks, strict=False)]
    with contextlib.suppress(ToolwireError):
        list(C.decode_stream(chunks))


# --------------------------------------------------------------------------- media


def test_media_go_as_image_and_document_blocks_in_messages_and_tool_results() -> None:
    from strategies import media_request
    from toolwire import ConfigError, Image, Message, Request

    enc = get_codec(WIRE).encode(media_request("anthropic.claude-sonnet-4-5"))
    check_request(enc.body)
    user = enc.body["messages"][0]["content"]
    assert user[1]["image"]["format"] == "png"
    assert user[2]["document"]["name"] == "report" and user[2]["document"]["format"] == "pdf"
    result = enc.body["messages"][2]["content"][0]["toolResult"]["content"]
    assert result[0] == {"text": "the screen:"} and "image" in result[1]
    linked = Message(role="user", parts=(Image.from_url("https://example.com/a.png"),))
    with pytest.raises(ConfigError, match="bytes only"):
        get_codec(WIRE).encode(Request(model="m", messages=(linked,)))


@pytest.mark.parametrize("streamed", [False, True])
def test_a_media_history_fits_the_service_model(streamed: bool) -> None:
    """An image and a PDF from the user, an image from a tool, replies whole or streamed."""
    from strategies import media_history

    body = C.encode_request(media_history(WIRE, "m", streamed=streamed))
    check_request(body)
    assert "image" in body["messages"][2]["content"][0]["toolResult"]["content"][1]
