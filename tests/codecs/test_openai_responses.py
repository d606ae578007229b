"""The OpenAI Responses codec, in sections named after the wire's modules: golden bodies,
recorded replies and streams, stops, errors and round trips."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pydantic_core
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from sdk_types import assert_sdk_valid
from strategies import argument_objects, call_ids, texts, tool_names
from toolwire.codecs import get_codec
from toolwire.codecs.openai_responses import codec as wire_module
from toolwire.errors import (
    AuthenticationError,
    ContextLengthError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    StreamError,
    WireFormatError,
)
from toolwire.events import (
    ReasoningDelta,
    StreamEnd,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from toolwire.transcript import (
    MediaPart,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    Reply,
    Request,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
    Usage,
    replace,
)

codec = get_codec("openai-responses")
W = codec.WIRE
CORPUS = Path(__file__).parents[1] / "fixtures" / "corpus"
SETTINGS = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


STREAM_EVENT: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)


WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                  "required": ["city"], "additionalProperties": False},
    strict=True,
)

REPLY_WITH_TWO_CALLS: dict[str, Any] = {
    "id": "resp_a1", "object": "response", "created_at": 1755800000, "status": "completed",
    "error": None, "incomplete_details": None, "model": "gpt-5-2025-08-07",
    "output": [
        {"type": "reasoning", "id": "rs_a1", "summary": [], "encrypted_content": "gAAAAB-secret"},
        {"type": "message", "id": "msg_a2", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "Checking both.", "annotations": []}],
         "phase": "commentary"},
        {"type": "function_call", "id": "fc_a3", "call_id": "call_P", "name": "get_weather",
         "arguments": "{\"city\":\"Paris\"}", "status": "completed"},
        {"type": "function_call", "id": "fc_a4", "call_id": "call_R", "name": "get_weather",
         "arguments": "{\"city\": \"Rome\"}", "status": "completed"},
    ],
    "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
    "usage": {"input_tokens": 92, "input_tokens_details": {"cached_tokens": 10},
              "output_tokens": 140, "output_tokens_details": {"reasoning_tokens": 64},
              "total_tokens": 232},
}


def _corpus(prefix: str) -> list[Path]:
    return sorted(CORPUS.glob(f"{prefix}__*.json"))


def _body(path: Path) -> Any:
    entry = json.loads(path.read_text())
    body = entry["body"]
    return json.loads(body) if isinstance(body, str) and not entry["streaming"] else body


# file stem -> (calls as (id, name, arguments), reasoning parts, opaque kinds, text start)
EXPECTED: dict[str, tuple[list[tuple[str, str, Any]], int, list[str], str]] = {
    "ai-sdk-provider__bofzvlqkph5": (
        [("toolu_vrtx_01A4YFwYvRw6PGKMD4JNjMVh", "readSMS",
          {"phoneNumber": "808-999-2345", "index": 1})], 0, [], "I'll check if the SMS"),
    "ai-sdk-provider__iwwednhh6cj": (
        [("toolu_vrtx_01DVJxsQtrfU7zXSmdwGjZBv", "sendSMS", None)], 0, [], "I'll send an SMS"),
    "openllmetry__test-agent-with-function-tool-spans": (
        [("call_B8tgP9l0UOJj9DF47eAb54Om", "get_weather", {"city": "London"})], 0, [], ""),
    "openllmetry__test-responses-tool-calls": (
        [("call_tYDv1bhtioyX33juEGDY4D6H", "get_weather", {"location": "London"}),
         ("call_lC079UhGnLJngBlPQO0FS6sv", "get_weather", {"location": "London"})], 0, [], ""),
    "pydantic-ai__test-deepseek-responses-structured-output": (
        [("call_00_fHeIT46fj9tK0YhyHu7Q9878", "final_result",
          {"city": "Tokyo", "country": "Japan"})], 1, [], ""),
    "pydantic-ai__test-openai-native-tool-search-gpt-5-6": (
        [("call_lRWI31sPzLp5ep5gSbVID3v7", "get_exchange_rate",
          {"from_currency": "USD", "to_currency": "EUR"})], 1,
        ["tool_search_call", "tool_search_output"], ""),
    "pydantic-ai__test-openai-responses-model-simple-response-with-tool-call": (
        [("call_YfwRsW8sUxDKipwyhWTzOXCA", "get_capital", {"country": "PotatoLand"})], 0, [], ""),
    "pydantic-ai__test-openai-responses-requires-function-call-status-none": (
        [("call_cp3x6W9eeyMIryJUNhgMaP5w", "get_meaning_of_life", {})], 1, [], ""),
    "pydantic-ai__test-reused-tool-call-ids-gpt-5-5__1": (
        [("call_0", "second_tool", {})], 0, [], ""),
    "pydantic-ai__test-tool-choice-matrix-required-openai-responses": (
        [("call_1qsWTcKZwQRwKLxPFIMpbnzV", "get_weather", {"city": "Paris"})], 1, [], ""),
}


def _events(body: str, chunk: int = 7) -> list[StreamEvent]:
    raw = body.encode()
    return list(codec.decode_stream([raw[i:i + chunk] for i in range(0, len(raw), chunk)]))


def _sse_payloads(body: str) -> Iterator[dict[str, Any]]:
    for line in body.splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            yield json.loads(line[6:])


STREAMED = {
    "llm-openrouter__test-tool-calls__1": [("call_faKQ4JI18zZQE2oynAbvwip4", "llm_version", {})],
    "openllmetry__test-router-analytics-complete-workflow": [
        ("call_pv9qy77xbJvTwZWXXSU5cgzV", "transfer_to_analytics_agent", {})],
    "pydantic-ai__test-openai-responses-streaming-usage": [
        ("call_CWXgs68YprAjp6t0371hiPOI", "final_result", {"result": 6666})],
}


def _reply_body(**fields: Any) -> dict[str, Any]:
    return {"id": "resp_x", "object": "response", "model": "m", "output": [], **fields}


MSG = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
       "content": [{"type": "output_text", "text": "hi", "annotations": []}]}


def _sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


safe_texts = texts.filter(lambda s: not s.startswith("Error:") and s != "(no output)")
hex_ids = st.text(alphabet="0123456789abcdef", min_size=8, max_size=16)


def raw_text_of(args: Any, ascii_only: bool) -> str:
    return json.dumps(args, ensure_ascii=ascii_only)


@st.composite
def calls(draw: st.DrawFn, call_id: str, *, broken: bool = False) -> ToolCallPart:
    raw = raw_text_of(draw(argument_objects), draw(st.booleans()))
    if broken:
        raw = raw[: max(1, len(raw) - 1)] if len(raw) > 2 else "{\"a\":"
    call = ToolCallPart.from_raw(id=call_id, name=draw(tool_names), raw_arguments=raw)
    if draw(st.booleans()):
        extras = {"id": "fc_" + draw(hex_ids), "status": "completed"}
        call = ToolCallPart.from_raw(id=call.id, name=call.name, raw_arguments=raw,
                                     provider_data={W: extras})
    return call


@st.composite
def message_texts(draw: st.DrawFn) -> TextPart:
    text = draw(texts)
    if not draw(st.booleans()):
        return TextPart(text=text)
    item: dict[str, Any] = {
        "type": "message", "id": "msg_" + draw(hex_ids), "role": "assistant",
        "status": "completed", "content": [{"type": "output_text", "text": text,
                                            "annotations": []}]}
    if draw(st.booleans()):
        item["phase"] = draw(st.sampled_from(["commentary", "final_answer"]))
    return TextPart(text=text, provider_data={W: item})


@st.composite
def reasonings(draw: st.DrawFn, *, plain_ok: bool) -> ReasoningPart:
    summaries = draw(st.lists(texts, max_size=2))
    if plain_ok and draw(st.booleans()):
        return ReasoningPart(text=summaries[0] if summaries else "")
    item = {"type": "reasoning", "id": "rs_" + draw(hex_ids),
            "summary": [{"type": "summary_text", "text": s} for s in summaries],
            "encrypted_content": "gAAAA" + draw(hex_ids)}
    return ReasoningPart(text="\n\n".join(summaries), provider_data={W: item})


WEB_SEARCH = OpaquePart(wire=W, kind="web_search_call", payload={
    "type": "web_search_call", "id": "ws_1", "status": "completed",
    "action": {"type": "search", "query": "q"}})


@st.composite
def assistant_parts(draw: st.DrawFn, *, for_reply: bool, broken: bool = False) -> list[Part]:
    parts: list[Part] = []
    if draw(st.booleans()):
        parts.append(draw(reasonings(plain_ok=for_reply)))
    if draw(st.booleans()):
        parts.append(WEB_SEARCH)
    if draw(st.booleans()):
        parts.append(draw(message_texts()))
    ids = draw(st.lists(call_ids, max_size=3, unique=True))
    parts.extend(draw(calls(i, broken=broken and n == len(ids) - 1)) for n, i in enumerate(ids))
    if not parts:
        parts.append(draw(message_texts()))
    return parts


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    messages: list[Message] = []
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        kind = draw(st.sampled_from(["user", "system", "round", "reply"]))
        if kind == "user":
            n = draw(st.integers(min_value=1, max_value=2))
            messages.append(Message(role="user", parts=tuple(
                TextPart(text=draw(texts)) for _ in range(n))))
        elif kind == "system":
            dev = draw(st.booleans())
            messages.append(Message(role="system", parts=(TextPart(text=draw(texts)),),
                                    provider_data={W: {"role": "developer"}} if dev else None))
        else:
            parts = draw(assistant_parts(for_reply=False))
            messages.append(Message(role="assistant", parts=tuple(parts)))
            answered = [p for p in parts if isinstance(p, ToolCallPart)]
            if answered:
                messages.append(Message(role="tool", parts=tuple(
                    ToolResultPart(call_id=c.id, content=draw(safe_texts),
                                   is_error=draw(st.booleans()), name=c.name)
                    for c in answered)))
            else:  # two assistant turns in a row would read back as one
                messages.append(Message.user(draw(texts)))
    return messages


@st.composite
def requests(draw: st.DrawFn) -> Request:
    names = draw(st.lists(tool_names, max_size=3, unique=True))
    tools: list[ToolSpec] = []
    for name in names:
        props = draw(st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=6), max_size=3,
                              unique=True))
        strict = draw(st.booleans())
        schema = {"type": "object", "properties": {p: {"type": "string"} for p in props},
                  "required": props if strict else props[:1], "additionalProperties": False}
        tools.append(ToolSpec(name=name, description=draw(st.sampled_from(["", "does it"])),
                              input_schema=schema, strict=strict))
    choice = None
    if draw(st.booleans()) and tools:
        modes: list[Literal["auto", "required", "none", "tool"]] = [
            "auto", "required", "none", "tool"]
        mode = draw(st.sampled_from(modes))
        choice = ToolChoice(mode=mode, name=draw(st.sampled_from(names)) if mode == "tool"
                            else None, parallel=draw(st.none() | st.booleans()))
    options = draw(st.none() | st.fixed_dictionaries(
        {"store": st.booleans()},
        optional={"include": st.just(["reasoning.encrypted_content"]),
                  "reasoning": st.just({"effort": "low"})}))
    return Request(
        model=draw(st.sampled_from(["gpt-5", "gpt-4.1-mini"])),
        system=draw(st.none() | texts),
        messages=tuple(draw(conversations())),
        tools=tuple(tools),
        tool_choice=choice,
        max_tokens=draw(st.none() | st.integers(min_value=1, max_value=10**5)),
        temperature=draw(st.none() | st.floats(min_value=0, max_value=2)),
        stream=draw(st.booleans()),
        provider_options={W: options} if options else None,
    )


@st.composite
def replies(draw: st.DrawFn) -> Reply:
    raw = draw(st.sampled_from(["completed", "max_output_tokens", "content_filter", "failed",
                                "cancelled", "incomplete"]))
    broken = draw(st.booleans()) and raw in ("completed", "max_output_tokens")
    parts = draw(assistant_parts(for_reply=True, broken=broken))
    calls_ = [p for p in parts if isinstance(p, ToolCallPart)]
    # broken arguments mean a cut-off call only when the reply hit the token limit
    truncated = raw == "max_output_tokens" and any(c.parse_error for c in calls_)
    stop = ("max_tokens" if truncated else "tool_calls") if calls_ else codec.STOP_REASONS[raw]
    usage = Usage(input_tokens=draw(st.integers(0, 10**6)),
                  output_tokens=draw(st.integers(0, 10**5)),
                  cache_read_tokens=draw(st.integers(0, 100)),
                  cache_write_tokens=draw(st.integers(0, 100)),
                  reasoning_tokens=draw(st.integers(0, 100)),
                  cost=draw(st.none() | st.floats(0, 10)))
    error = {"code": "server_error", "message": draw(texts)} if raw == "failed" else None
    return Reply(message=Message(role="assistant", parts=tuple(parts)), stop=stop, raw_stop=raw,
                 usage=usage, model=draw(st.none() | st.just("gpt-5")),
                 id="resp_" + draw(hex_ids), truncated_call=truncated,
                 provider_data={W: {"error": error}} if error and draw(st.booleans()) else None)


# --- codec


def test_contract_names_exist() -> None:
    assert codec.module is wire_module
    for name in ("WIRE", "STOP_REASONS", "encode", "encode_request", "decode_request",
                 "decode_response", "encode_response", "encode_stream", "stream_decoder",
                 "decode_stream", "decode_error"):
        assert hasattr(codec, name), name
    for name in ("encode_request", "stream_decoder", "decode_stream", "ResponsesStreamDecoder"):
        assert not hasattr(wire_module, name), f"{name} is derived once for every wire"
    assert codec.StreamDecoder is wire_module.StreamDecoder
    assert W == "openai-responses"
    assert set(codec.STOP_REASONS.values()) <= {
        "end_turn", "tool_calls", "max_tokens", "stop_sequence", "pause_turn", "refusal",
        "content_filter", "context_window_exceeded", "tool_call_failed", "error", "other"}


# --- request


def test_sdk_check_catches_a_misspelled_key() -> None:
    body = codec.encode_request(Request(model="m", tools=(ToolSpec(name="f"),)))
    body["tools"][0]["parameter"] = body["tools"][0].pop("parameters")
    with pytest.raises(pydantic_core.ValidationError):
        assert_sdk_valid(body)


def test_first_turn_body() -> None:
    request = Request(
        model="gpt-5", system="You are a weather bot.",
        messages=(Message.user("Weather in Paris and Rome?"),),
        tools=(WEATHER,), tool_choice=ToolChoice(mode="auto"),
        provider_options={W: {"reasoning": {"effort": "low", "summary": "auto"}, "store": False,
                              "include": ["reasoning.encrypted_content"]}},
    )
    encoded = codec.encode(request)
    assert encoded.body == {
        "model": "gpt-5",
        "instructions": "You are a weather bot.",
        "input": [{"role": "user", "content": "Weather in Paris and Rome?"}],
        "tools": [{"type": "function", "name": "get_weather",
                   "description": "Current weather for a city.",
                   "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                  "required": ["city"], "additionalProperties": False},
                   "strict": True}],
        "tool_choice": "auto",
        "reasoning": {"effort": "low", "summary": "auto"},
        "store": False,
        "include": ["reasoning.encrypted_content"],
    }
    assert encoded.notes == ()
    assert_sdk_valid(encoded.body)
    assert codec.decode_request(encoded.body) == request

def test_tool_choice_without_tools_is_dropped_with_a_note() -> None:
    encoded = codec.encode(Request(model="m", tool_choice=ToolChoice(mode="required")))
    assert "tool_choice" not in encoded.body
    assert [n.kind for n in encoded.notes] == ["choice_changed"]

def test_foreign_reasoning_and_opaque_parts_are_dropped_with_notes() -> None:
    assistant = Message(role="assistant", parts=(
        ReasoningPart(text="thinking", provider_data={"anthropic-messages": {"signature": "s"}}),
        OpaquePart(wire="anthropic-messages", kind="server_tool_use", payload={"id": "x"}),
        TextPart(text="done"),
    ))
    encoded = codec.encode(Request(model="m", messages=(Message.user("hi"), assistant)))
    assert encoded.body["input"][1:] == [{"role": "assistant", "content": "done"}]
    assert [n.kind for n in encoded.notes] == ["reasoning_dropped", "opaque_dropped"]
    assert encoded.notes[0].subject == "messages[1].parts[0]"

def test_decode_request_reads_every_input_shape() -> None:
    body: dict[str, Any] = {
        "model": "gpt-5",
        "instructions": "be brief",
        "input": [
            {"role": "developer", "content": "use tools"},
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "look"},
                {"type": "input_image", "image_url": "https://x/y.png", "detail": "auto"}]},
            {"type": "web_search_call", "id": "ws_1", "status": "completed",
             "action": {"type": "search", "query": "q"}},
            {"role": "assistant", "content": "seen"},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{\"a\":1}"},
            {"type": "function_call_output", "call_id": "c1",
             "output": [{"type": "input_text", "text": "one"}]},
        ],
        "tools": [{"type": "function", "name": "f", "parameters": None, "strict": None},
                  {"type": "web_search"}],
        "parallel_tool_calls": False,
        "max_output_tokens": 100,
        "store": False,
        "stream": True,
    }
    request = codec.decode_request(body)
    assert request.system == "be brief" and request.stream and request.max_tokens == 100
    assert request.tool_choice == ToolChoice(mode="auto", parallel=False)
    assert request.tools == (ToolSpec(name="f"),)
    assert request.provider_options == {W: {"store": False, "tools": [{"type": "web_search"}]}}
    dev, user, assistant, tool = request.messages
    assert dev.role == "system" and dev.text == "use tools"
    assert dev.provider_data == {W: {"role": "developer"}}
    assert user.parts[0] == TextPart(text="look")
    assert isinstance(user.parts[1], MediaPart) and user.parts[1].url == "https://x/y.png"
    kinds = [type(p).__name__ for p in assistant.parts]
    assert kinds == ["OpaquePart", "TextPart", "ToolCallPart"]
    (result,) = tool.parts
    assert isinstance(result, ToolResultPart)
    assert (result.call_id, result.content, result.name) == ("c1", "one", "f")
    again = codec.encode_request(request)
    assert again["input"][0] == {"role": "developer", "content": "use tools"}
    assert again["input"][2:] == body["input"][2:]
    assert again["tools"][1] == {"type": "web_search"}
    assert_sdk_valid(again)
    assert codec.decode_request(again) == request

def test_input_may_be_a_plain_string() -> None:
    request = codec.decode_request({"model": "m", "input": "hello"})
    assert request.messages == (Message.user("hello"),)

@SETTINGS
@given(requests())
def test_request_round_trip(request: Request) -> None:
    encoded = codec.encode(request)
    assert encoded.notes == ()
    assert_sdk_valid(encoded.body)
    assert codec.decode_request(json.loads(json.dumps(encoded.body))) == request

def test_settings_for_other_wires_give_one_note_per_key() -> None:
    request = Request(model="m", messages=(Message.user("hi"),), provider_options={
        "anthropic-messages": {"top_k": 5, "metadata": {"user_id": "u"}},
        "ollama-chat": {"keep_alive": "5m"},
        W: {"store": False},
    })
    encoded = codec.encode(request)
    assert encoded.body["store"] is False
    assert "top_k" not in encoded.body and "keep_alive" not in encoded.body
    dropped = [(n.subject, n.detail) for n in encoded.notes if n.kind == "field_dropped"]
    assert [s for s, _ in dropped] == ["provider_options['anthropic-messages']"] * 2 + [
        "provider_options['ollama-chat']"]
    assert ["'top_k'" in d for _, d in dropped] == [True, False, False]
    assert "'metadata'" in dropped[1][1] and "'keep_alive'" in dropped[2][1]
    assert all("anthropic-messages" in d for _, d in dropped[:2])
    assert_sdk_valid(encoded.body)

def test_options_that_are_not_an_object_are_noted_not_sent() -> None:
    encoded = codec.encode(Request(model="m", provider_options={W: ["store"]}))
    assert encoded.body == {"model": "m", "input": []}
    assert [(n.kind, n.subject) for n in encoded.notes] == [
        ("field_dropped", f"provider_options[{W!r}]")]

def test_every_dropped_part_is_named_by_message_and_part_index() -> None:
    foreign = ReasoningPart(text="t", provider_data={"anthropic-messages": {"signature": "s"}})
    opaque = OpaquePart(wire="gemini-generate", kind="inlineData", payload={"inlineData": {}})
    request = Request(model="m", messages=(
        Message(role="user", parts=(TextPart(text="a"), opaque)),
        Message(role="assistant", parts=(TextPart(text="b"), foreign, opaque)),
        Message(role="system", parts=(foreign,)),
    ))
    notes = [(n.kind, n.subject) for n in codec.encode(request).notes]
    assert notes == [
        ("opaque_dropped", "messages[0].parts[1]"),
        ("reasoning_dropped", "messages[1].parts[1]"),
        ("opaque_dropped", "messages[1].parts[2]"),
        ("reasoning_dropped", "messages[2].parts[0]"),
    ]

def test_a_request_body_that_is_not_an_object_is_an_error() -> None:
    with pytest.raises(WireFormatError,
                       match="request: the body: expected a JSON object, got a list"):
        codec.decode_request([])  # type: ignore[arg-type]

def test_lenient_where_servers_and_clients_vary() -> None:
    request = codec.decode_request({
        "model": "m", "input": None, "instructions": None, "temperature": 1,
        "tools": [{"type": "function", "name": "f", "parameters": None, "description": None}],
        "stream": None,
    })
    assert request == Request(model="m", temperature=1, tools=(ToolSpec(name="f"),))
    args = codec.decode_request({"input": [
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": {"a": 1}}]})
    assert args.messages[0].tool_calls[0].arguments == {"a": 1}

def test_encode_passes_given_values_through_and_leaves_them_unchanged() -> None:
    plain = ToolSpec(name="f", input_schema={"type": "object", "properties": {}})
    strict_schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    strict = ToolSpec(name="g", input_schema=strict_schema, strict=True)
    reasoning_item = {"type": "reasoning", "id": "rs_1", "summary": [],
                      "encrypted_content": "enc"}
    extra_tools = [{"type": "web_search"}]
    request = Request(model="m", tools=(plain, strict), messages=(
        Message.user("hi"),
        Message(role="assistant", parts=(
            ReasoningPart(text="", provider_data={W: reasoning_item}),
            TextPart(text="ok"))),
    ), provider_options={W: {"tools": extra_tools, "metadata": {"k": "v"}}})
    before = copy.deepcopy(request)
    body = codec.encode_request(request)
    assert body["tools"][0]["parameters"] is plain.input_schema
    assert body["tools"][1]["parameters"] is not strict_schema  # rewritten on a copy
    assert body["tools"][1]["parameters"]["additionalProperties"] is False
    assert body["tools"][2] is extra_tools[0]
    assert body["input"][1] is reasoning_item
    assert body["metadata"] is request.provider_options[W]["metadata"]  # type: ignore[index]
    assert request == before
    assert_sdk_valid(body)


def test_decode_request_takes_model_and_stream_from_the_url_only_when_the_body_lacks_them(
) -> None:
    request = codec.decode_request({"input": "hi"}, model="gpt-x", stream=True)
    assert (request.model, request.stream) == ("gpt-x", True)
    body = {"model": "m", "input": "hi", "stream": False}
    assert codec.decode_request(body, model="gpt-x", stream=True) == codec.decode_request(body)
    with pytest.raises(WireFormatError, match="model: expected a string"):
        codec.decode_request({"model": 4, "input": "hi"}, model="gpt-x")


# --- reply


def test_reply_with_reasoning_text_and_parallel_calls() -> None:
    reply = codec.decode_response(REPLY_WITH_TWO_CALLS)
    assert reply.stop == "tool_calls" and reply.raw_stop == "completed"
    assert reply.id == "resp_a1" and reply.model == "gpt-5-2025-08-07"
    assert reply.usage == Usage(input_tokens=92, output_tokens=140, cache_read_tokens=10,
                                reasoning_tokens=64)
    reasoning, text, paris, rome = reply.message.parts
    assert isinstance(reasoning, ReasoningPart) and reasoning.text == ""
    assert reasoning.provider_data == {W: REPLY_WITH_TWO_CALLS["output"][0]}
    assert isinstance(text, TextPart) and text.text == "Checking both."
    assert text.provider_data is not None and text.provider_data[W]["phase"] == "commentary"
    assert isinstance(paris, ToolCallPart) and isinstance(rome, ToolCallPart)
    assert (paris.id, paris.name, paris.arguments) == ("call_P", "get_weather", {"city": "Paris"})
    assert rome.raw_arguments == "{\"city\": \"Rome\"}"  # exact text kept
    assert paris.provider_data == {W: {"id": "fc_a3", "status": "completed"}}
    assert codec.decode_response(codec.encode_response(reply)) == reply

def test_every_recorded_reply_is_covered() -> None:
    stems = {p.stem.split("__", 1)[1] for p in _corpus("openai_responses")}
    assert stems == set(EXPECTED)

@pytest.mark.parametrize("path", _corpus("openai_responses"), ids=lambda p: p.stem)
def test_recorded_reply_decodes(path: Path) -> None:
    body = _body(path)
    calls, n_reasoning, opaque, text_start = EXPECTED[path.stem.split("__", 1)[1]]
    reply = codec.decode_response(body)
    assert reply.stop == "tool_calls" and not reply.truncated_call
    assert reply.raw_stop == body.get("status")
    assert reply.id == body["id"] and reply.model == body["model"]
    got = [(c.id, c.name, c.arguments) for c in reply.tool_calls]
    assert [(i, n) for i, n, _ in got] == [(i, n) for i, n, _ in calls]
    for (_, _, want), (_, _, have) in zip(calls, got, strict=True):
        assert have == want or want is None
    for call, item in zip(reply.tool_calls,
                          [i for i in body["output"] if i["type"] == "function_call"],
                          strict=True):
        assert call.raw_arguments == item["arguments"]
        assert call.provider_data is not None and call.provider_data[W]["id"] == item["id"]
    reasoning = [p for p in reply.message.parts if isinstance(p, ReasoningPart)]
    assert len(reasoning) == n_reasoning
    for part in reasoning:  # kept whole, encrypted content and all
        assert part.provider_data is not None and part.provider_data[W] in body["output"]
    assert [p.kind for p in reply.message.parts if isinstance(p, OpaquePart)] == opaque
    assert reply.text.startswith(text_start)
    usage = body["usage"]
    assert reply.usage.input_tokens == usage["input_tokens"]
    assert reply.usage.output_tokens == usage["output_tokens"]
    assert reply.usage.cache_read_tokens == usage["input_tokens_details"]["cached_tokens"]
    assert reply.usage.reasoning_tokens == usage["output_tokens_details"]["reasoning_tokens"]
    assert reply.usage.cost == usage.get("cost")
    # The next request replays every output item unchanged and in its original order.
    follow = Request(model="m", messages=(Message.user("go"), reply.message, Message(
        role="tool", parts=tuple(ToolResultPart(call_id=c.id, content="ok")
                                 for c in reply.tool_calls))))
    replayed = codec.encode_request(follow)["input"]
    assert replayed[1: 1 + len(body["output"])] == body["output"]
    if "api.openai.com" in json.loads(path.read_text())["request_url"]:
        assert_sdk_valid(codec.encode_request(follow))
    again = codec.decode_response(codec.encode_response(reply))
    assert again == replace(reply, raw_stop=reply.raw_stop or "completed")

@pytest.mark.parametrize(("fields", "stop", "raw"), [
    ({"status": "completed"}, "end_turn", "completed"),
    ({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}},
     "max_tokens", "max_output_tokens"),
    ({"status": "incomplete", "incomplete_details": {"reason": "content_filter"}},
     "content_filter", "content_filter"),
    ({"status": "incomplete", "incomplete_details": None}, "other", "incomplete"),
    ({"status": "failed", "error": {"code": "server_error", "message": "boom"}}, "error", "failed"),
    ({"status": "cancelled"}, "other", "cancelled"),
    ({}, "end_turn", None),
])
def test_stop_comes_from_status_and_details(fields: dict[str, Any], stop: str,
                                            raw: str | None) -> None:
    reply = codec.decode_response(_reply_body(output=[MSG], **fields))
    assert (reply.stop, reply.raw_stop) == (stop, raw)
    assert reply.text == "hi"
    again = codec.decode_response(codec.encode_response(reply))
    assert again == replace(reply, raw_stop=raw or "completed")

def test_failed_reply_keeps_the_error() -> None:
    error = {"code": "server_error", "message": "boom"}
    reply = codec.decode_response(_reply_body(status="failed", error=error))
    assert reply.provider_data == {W: {"error": error}}
    assert codec.encode_response(reply)["error"] == error

def test_calls_decide_the_stop_and_a_cut_call_is_truncated() -> None:
    call = {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f",
            "arguments": "{\"a\": ", "status": "incomplete"}
    reply = codec.decode_response(_reply_body(
        status="incomplete", incomplete_details={"reason": "max_output_tokens"}, output=[call]))
    assert reply.stop == "max_tokens" and reply.truncated_call
    assert reply.raw_stop == "max_output_tokens"
    assert reply.tool_calls[0].parse_error is not None
    assert reply.tool_calls[0].raw_arguments == "{\"a\": "
    whole = dict(call, arguments="{}", status="completed")
    reply = codec.decode_response(_reply_body(
        status="incomplete", incomplete_details={"reason": "max_output_tokens"}, output=[whole]))
    assert reply.stop == "tool_calls" and not reply.truncated_call

def test_refusal_is_text_and_stops_as_refusal() -> None:
    item = {"type": "message", "id": "msg_r", "role": "assistant", "status": "completed",
            "content": [{"type": "refusal", "refusal": "I can't help with that."}]}
    reply = codec.decode_response(_reply_body(status="completed", output=[item]))
    assert reply.stop == "refusal" and reply.text == "I can't help with that."
    assert codec.decode_response(codec.encode_response(reply)) == reply
    streamed = list(codec.decode_stream(codec.encode_stream(reply)))
    assert "".join(e.text for e in streamed if isinstance(e, TextDelta)) == reply.text
    assert isinstance(streamed[-1], StreamEnd) and streamed[-1].reply == reply

def test_our_reply_bodies_match_the_sdk_model() -> None:
    for reply in (codec.decode_response(REPLY_WITH_TWO_CALLS),
                  Reply(message=Message.assistant("plain"), raw_stop="completed", id="resp_1",
                        model="m"),
                  Reply(message=Message(role="assistant", parts=(
                      ReasoningPart(text="why"),
                      ToolCallPart.from_raw(id="c", name="f", raw_arguments="{\"a\""))),
                      stop="max_tokens", truncated_call=True)):
        body = codec.encode_response(reply)
        Response.model_validate(body)
    request = Request(model="m", system="be kind", tools=(WEATHER,),
                      tool_choice=ToolChoice(mode="required", parallel=False))
    body = codec.encode_response(Reply(message=Message.assistant("ok")), request=request)
    assert body["tools"] == codec.encode_request(request)["tools"]
    assert (body["tool_choice"], body["parallel_tool_calls"]) == ("required", False)
    assert body["instructions"] == "be kind"
    Response.model_validate(body)

def test_reply_text_with_leading_whitespace_is_accepted() -> None:
    raw = "\n\n  " + json.dumps(REPLY_WITH_TWO_CALLS)
    assert codec.decode_response(raw) == codec.decode_response(REPLY_WITH_TWO_CALLS)
    assert codec.decode_response(raw.encode()) == codec.decode_response(REPLY_WITH_TWO_CALLS)
    with pytest.raises(WireFormatError):
        codec.decode_response("[1, 2]")

@pytest.mark.parametrize(("status", "error", "kind"), [
    (400, {"message": "Invalid value for 'input'.", "type": "invalid_request_error",
           "param": "input", "code": None}, InvalidRequestError),
    (400, {"message": "Your input exceeds the context window of this model.",
           "type": "invalid_request_error", "param": "input",
           "code": "context_length_exceeded"}, ContextLengthError),
    (401, {"message": "Incorrect API key provided.", "type": "invalid_request_error",
           "param": None, "code": "invalid_api_key"}, AuthenticationError),
    (403, {"message": "Not allowed.", "type": "permission_denied", "param": None, "code": None},
     PermissionDeniedError),
    (404, {"message": "The model 'x' does not exist.", "type": "invalid_request_error",
           "param": "model", "code": "model_not_found"}, NotFoundError),
    (429, {"message": "Rate limit reached.", "type": "requests", "param": None,
           "code": "rate_limit_exceeded"}, RateLimitError),
    (500, {"message": "The server had an error.", "type": "server_error", "param": None,
           "code": None}, ServerError),
    (503, {"message": "The engine is currently overloaded.", "type": "server_error",
           "param": None, "code": None}, OverloadedError),
])
def test_error_bodies(status: int, error: dict[str, Any], kind: type[Exception]) -> None:
    for body in ({"error": error}, json.dumps({"error": error}),
                 json.dumps({"error": error}).encode()):
        exc = codec.decode_error(status, body, {"Retry-After": "2"})
        assert type(exc) is kind
        assert exc.message == error["message"] and exc.status == status
        assert exc.error_type in (error["type"], error["code"])
        assert exc.retry_after == 2.0 and exc.wire == W

def test_error_bodies_that_are_not_json() -> None:
    exc = codec.decode_error(502, b"<html>Bad gateway</html>")
    assert isinstance(exc, ServerError) and "Bad gateway" in exc.message
    exc = codec.decode_error(500, "")
    assert isinstance(exc, ServerError) and "500" in exc.message
    exc = codec.decode_error(429, {"error": "too many"}, {"retry-after-ms": "1500"})
    assert isinstance(exc, RateLimitError) and exc.message == "too many"
    assert exc.retry_after == 1.5

@SETTINGS
@given(replies())
def test_reply_round_trip(reply: Reply) -> None:
    body = codec.encode_response(reply)
    Response.model_validate(body)
    assert codec.decode_response(json.loads(json.dumps(body))) == reply

@pytest.mark.parametrize("output", [3, "x", [1]])
def test_a_reply_whose_output_is_not_a_list_of_items_is_an_error(output: Any) -> None:
    with pytest.raises(WireFormatError, match=r"output(\[0\])?: expected"):
        codec.decode_response({"id": "r", "status": "completed", "output": output})


# --- stream


@pytest.mark.parametrize("path", _corpus("openai_responses_stream"), ids=lambda p: p.stem)
def test_recorded_stream_assembles(path: Path) -> None:
    body = _body(path)
    expected = STREAMED[path.stem.split("__", 1)[1]]
    events = _events(body)
    end = events[-1]
    assert isinstance(end, StreamEnd)
    reply = end.reply
    assert reply.stop == "tool_calls" and reply.raw_stop == "completed"
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == expected
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [(e.index, e.id, e.name) for e in started] == [
        (i, cid, name) for i, (cid, name, _) in enumerate(expected)]
    fragments = "".join(e.fragment for e in events if isinstance(e, ToolCallDelta))
    assert fragments == reply.tool_calls[0].raw_arguments
    finished = [e.call for e in events if isinstance(e, ToolCallFinished)]
    assert finished == list(reply.tool_calls)
    completed = next(p for p in _sse_payloads(body) if p["type"] == "response.completed")
    assert reply.usage.output_tokens == completed["response"]["usage"]["output_tokens"]
    # The same reply as the completed response gives read whole: it is the truth where it
    # lists its output (its items can differ from output_item.done's: re-issued encrypted
    # reasoning, rotated ids); where it lists none, the items the events carried stand in.
    whole = dict(completed["response"])
    if not whole.get("output"):
        whole["output"] = [p["item"] for p in _sse_payloads(body)
                           if p["type"] == "response.output_item.done"]
    assert reply == codec.decode_response(whole)

def test_stream_keeps_encrypted_content_from_the_completed_response() -> None:
    """The server re-issues the encrypted blob at every step; the completed one goes back."""
    path = CORPUS / ("openai_responses_stream__pydantic-ai__"
                     "test-openai-responses-streaming-usage.json")
    body = _body(path)
    done = next(p["item"] for p in _sse_payloads(body)
                if p["type"] == "response.output_item.done" and p["item"]["type"] == "reasoning")
    added = next(p["item"] for p in _sse_payloads(body)
                 if p["type"] == "response.output_item.added" and p["item"]["type"] == "reasoning")
    completed = next(p["response"] for p in _sse_payloads(body)
                     if p["type"] == "response.completed")
    final = next(i for i in completed["output"] if i["type"] == "reasoning")
    assert len({added["encrypted_content"], done["encrypted_content"],
                final["encrypted_content"]}) == 3
    end = _events(body)[-1]
    assert isinstance(end, StreamEnd)
    reasoning = end.reply.message.parts[0]
    assert isinstance(reasoning, ReasoningPart)
    assert reasoning.provider_data == {W: final}

def test_argument_deltas_are_matched_by_item_id() -> None:
    head = {"type": "response.created", "response": {"id": "resp_s", "model": "m"}}
    added = [{"type": "response.output_item.added", "output_index": i,
              "item": {"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i}",
                       "name": f"t{i}", "arguments": ""}} for i in (0, 1)]
    deltas = [  # interleaved, and with no output_index: the item id alone says which call
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "{\"b\""},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_0", "delta": "{}"},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": ":2}"},
    ]
    done = [{"type": "response.output_item.done", "output_index": i,
             "item": {"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i}",
                      "name": f"t{i}", "arguments": args, "status": "completed"}}
            for i, args in ((0, "{}"), (1, "{\"b\":2}"))]
    end = {"type": "response.done", "response": {"status": "completed", "output": []}}
    raw = _sse(head, *added, *deltas, *done, end) + b"data: [DONE]\n\n"
    events = list(codec.decode_stream([raw]))
    assert [(e.index, e.fragment) for e in events if isinstance(e, ToolCallDelta)] == [
        (1, "{\"b\""), (0, "{}"), (1, ":2}")]
    end_event = events[-1]
    assert isinstance(end_event, StreamEnd)
    assert [(c.id, c.name, c.arguments) for c in end_event.reply.tool_calls] == [
        ("call_0", "t0", {}), ("call_1", "t1", {"b": 2})]
    assert end_event.reply.id == "resp_s"

def test_text_and_reasoning_deltas() -> None:
    reasoning = {"type": "reasoning", "id": "rs_1", "encrypted_content": "enc",
                 "summary": [{"type": "summary_text", "text": "Plan A."},
                             {"type": "summary_text", "text": "Plan B."}]}
    reply = codec.decode_response(_reply_body(status="completed", output=[reasoning, MSG]))
    events = list(codec.decode_stream(codec.encode_stream(reply)))
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Plan A.\n\nPlan B."
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "hi"
    assert isinstance(events[-1], StreamEnd) and events[-1].reply == reply

def test_our_stream_events_match_the_sdk_types() -> None:
    reply = codec.decode_response(REPLY_WITH_TWO_CALLS)
    chunks = codec.encode_stream(reply)
    assert len(chunks) > 10
    kinds = []
    for payload in _sse_payloads(b"".join(chunks).decode()):
        STREAM_EVENT.validate_python(payload)
        kinds.append(payload["type"])
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert kinds.count("response.function_call_arguments.delta") >= 2
    seq = [p["sequence_number"] for p in _sse_payloads(b"".join(chunks).decode())]
    assert seq == sorted(seq) and len(set(seq)) == len(seq)

def test_stream_error_event_raises_the_typed_error() -> None:
    head = _sse({"type": "response.created", "response": {"id": "r"}})
    for payload, kind in (
        ({"type": "error", "code": "rate_limit_exceeded", "message": "slow down", "param": None},
         RateLimitError),
        ({"type": "error", "code": "server_is_overloaded", "message": "busy"}, OverloadedError),
        ({"type": "error", "code": "context_length_exceeded",
          "message": "Your input exceeds the context window of this model."}, ContextLengthError),
        ({"type": "error", "code": "server_error", "message": "oops"}, StreamError),
        ({"type": "error", "error": {"type": "server_error", "message": "nested"}}, StreamError),
    ):
        with pytest.raises(kind) as info:
            list(codec.decode_stream([head, _sse(payload)]))
        assert info.value.wire == W
        assert info.value.message in ("slow down", "busy", "oops", "nested") or kind is \
            ContextLengthError

def test_stream_ending_early_is_an_error() -> None:
    reply = codec.decode_response(REPLY_WITH_TWO_CALLS)
    chunks = codec.encode_stream(reply)
    decoder = codec.stream_decoder()
    for chunk in chunks[:-1]:
        decoder.feed(chunk)
    with pytest.raises(StreamError):
        decoder.finish()

def test_stream_with_data_lines_only_and_no_trailing_blank_line() -> None:
    reply = Reply(message=Message.assistant("héllo"), raw_stop="completed", id="resp_1",
                  model="m")
    text = b"".join(codec.encode_stream(reply)).decode()
    stripped = "\n".join(line for line in text.splitlines() if not line.startswith("event:"))
    events = list(codec.decode_stream([(": keep-alive\n\n" + stripped.rstrip("\n")).encode()]))
    assert isinstance(events[-1], StreamEnd) and events[-1].reply == reply

@SETTINGS
@given(replies(), st.data())
def test_stream_round_trip_split_anywhere(reply: Reply, data: st.DataObject) -> None:
    raw = b"".join(codec.encode_stream(reply))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=12)))
    pieces = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    events = list(codec.decode_stream(pieces))
    end = events[-1]
    assert isinstance(end, StreamEnd) and end.reply == reply
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == reply.text
    reasoning = [p.text for p in reply.message.parts if isinstance(p, ReasoningPart)]
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "".join(reasoning)
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [e.call for e in finished] == list(reply.tool_calls)
    for e in finished:
        fragments = "".join(d.fragment for d in events
                            if isinstance(d, ToolCallDelta) and d.index == e.index)
        assert fragments == e.call.arguments_text


# --- parts


def test_follow_up_replays_every_output_item_in_order_then_the_outputs() -> None:
    reply = codec.decode_response(REPLY_WITH_TWO_CALLS)
    results = Message(role="tool", parts=(
        ToolResultPart(call_id="call_P", content="18°C, cloudy", name="get_weather"),
        ToolResultPart(call_id="call_R", content="weather service timeout", is_error=True,
                       name="get_weather"),
    ))
    request = Request(model="gpt-5", tools=(WEATHER,),
                      messages=(Message.user("Weather in Paris and Rome?"), reply.message, results))
    body = codec.encode_request(request)
    assert body["input"] == [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        *REPLY_WITH_TWO_CALLS["output"],  # reasoning first, phase kept, server ids kept
        {"type": "function_call_output", "call_id": "call_P", "output": "18°C, cloudy"},
        {"type": "function_call_output", "call_id": "call_R",
         "output": "Error: weather service timeout"},
    ]
    assert_sdk_valid(body)
    assert codec.decode_request(body) == request

def test_result_text_conventions() -> None:
    parts = (
        ToolResultPart(call_id="a", content=""),
        ToolResultPart(call_id="b", content="Error: already prefixed", is_error=True),
        ToolResultPart(call_id="c", content="", is_error=True),
    )
    request = Request(model="m", messages=(
        Message(role="assistant", parts=tuple(
            ToolCallPart(id=i, name="f", arguments={}) for i in "abc")),
        Message(role="tool", parts=parts),
    ))
    outputs = [i["output"] for i in codec.encode_request(request)["input"][3:]]
    assert outputs == ["(no output)", "Error: already prefixed", "Error: (no output)"]
    back = codec.decode_request(codec.encode_request(request)).messages[1].parts
    assert [(p.content, p.is_error, p.name) for p in back if isinstance(p, ToolResultPart)] == [
        ("", False, "f"), ("already prefixed", True, "f"), ("", True, "f")]

def test_object_call_arguments_are_sent_as_compact_text() -> None:
    request = Request(model="m", messages=(
        Message(role="assistant", parts=(ToolCallPart(id="c1", name="f", arguments={"q": "ü"}),)),
    ))
    item = codec.encode_request(request)["input"][0]
    assert item == {"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"q":"ü"}'}

def test_tool_names_are_mapped_everywhere_and_back() -> None:
    tool = ToolSpec(name="math.sum", input_schema={"type": "object", "properties": {}})
    call = ToolCallPart(id="call_1", name="math.sum", arguments={})
    request = Request(
        model="m", tools=(tool,), tool_choice=ToolChoice(mode="tool", name="math.sum"),
        messages=(Message.user("add"), Message(role="assistant", parts=(call,)),
                  Message(role="tool", parts=(ToolResultPart(call_id="call_1", content="3"),))),
    )
    encoded = codec.encode(request)
    assert encoded.body["tools"][0]["name"] == "math_sum"
    assert encoded.body["tool_choice"] == {"type": "function", "name": "math_sum"}
    assert encoded.body["input"][1]["name"] == "math_sum"
    assert [(n.kind, n.subject) for n in encoded.notes] == [("tool_name_mapped", "math.sum")]
    reply = Reply(message=Message(role="assistant", parts=(
        ToolCallPart.from_raw(id="call_2", name="math.sum", raw_arguments="{}"),)),
        stop="tool_calls", raw_stop="completed", id="resp_1")
    body = codec.encode_response(reply, request=request)
    assert body["output"][0]["name"] == "math_sum"
    assert codec.decode_response(body, request=request) == reply
    assert codec.decode_response(body).tool_calls[0].name == "math_sum"
    streamed = list(codec.decode_stream(codec.encode_stream(reply, request=request),
                                        request=request))
    assert isinstance(streamed[-1], StreamEnd) and streamed[-1].reply == reply
    assert [e.name for e in streamed if isinstance(e, ToolCallStarted)] == ["math.sum"]

def test_edited_assistant_text_is_sent_fresh_keeping_phase() -> None:
    item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "old", "annotations": []}],
            "phase": "final_answer"}
    part = TextPart(text="new", provider_data={W: item})
    body = codec.encode_request(Request(model="m", messages=(Message(role="assistant",
                                                                      parts=(part,)),)))
    assert body["input"] == [{"role": "assistant", "content": "new", "phase": "final_answer"}]
    assert_sdk_valid(body)

def test_deepseek_readable_reasoning_text_is_kept() -> None:
    path = CORPUS / "openai_responses__pydantic-ai__test-deepseek-responses-structured-output.json"
    reply = codec.decode_response(_body(path))
    first = reply.message.parts[0]
    assert isinstance(first, ReasoningPart) and first.text.startswith("The user asked")
    assert "Tokyo" not in reply.text

def test_missing_call_ids_are_made_up_deterministically() -> None:
    item = {"type": "function_call", "name": "f", "arguments": {"x": 1}}
    body = _reply_body(status="completed", output=[item, dict(item)])
    first, second = codec.decode_response(body).tool_calls
    assert first.id.startswith("call_") and first.id != second.id
    assert codec.decode_response(copy.deepcopy(body)).tool_calls[0].id == first.id
    assert first.arguments == {"x": 1} and first.raw_arguments is None

def test_builtin_tool_items_are_opaque_and_go_back_unchanged() -> None:
    ws = {"type": "web_search_call", "id": "ws_1", "status": "completed",
          "action": {"type": "search", "query": "weather"}}
    reply = codec.decode_response(_reply_body(status="completed", output=[ws, MSG]))
    assert reply.message.parts[0] == OpaquePart(wire=W, kind="web_search_call", payload=ws)
    body = codec.encode_request(Request(model="m", messages=(Message.user("q"), reply.message)))
    assert body["input"][1:] == [ws, MSG]
    assert_sdk_valid(body)

@pytest.mark.parametrize(("body", "message"), [
    ({"input": 3}, "input: expected a string or a list of items, got an integer"),
    ({"input": {"role": "user"}}, "input: expected a string or a list of items, got an object"),
    ({"input": ["hi"]}, "input[0]: expected an object (an input item), got a string"),
    ({"input": [{"role": "user", "content": 5}]},
     "input[0].content: expected a string or a list of content parts, got an integer"),
    ({"input": [{"role": "user", "content": ["x"]}]},
     "input[0].content[0]: expected an object, got a string"),
    ({"input": [{"type": 1}]}, "input[0].type: expected a string, got an integer"),
    ({"input": [{"type": "function_call", "call_id": "c", "arguments": "{}"}]},
     "input[0].name: expected a string, got null"),
    ({"input": [{"type": "function_call", "name": "f", "arguments": 7}]},
     "input[0].arguments: expected a string or an object, got an integer"),
    ({"input": [{"type": "function_call_output", "output": "x"}]},
     "input[0].call_id: expected a string, got null"),
    ({"tools": {"type": "function"}}, "tools: expected a list of tools, got an object"),
    ({"tools": ["f"]}, "tools[0]: expected an object, got a string"),
    ({"tools": [{"type": "function"}]}, "tools[0].name: expected a non-empty string, got null"),
    ({"tools": [{"type": "function", "name": "f", "parameters": "{}"}]},
     "tools[0].parameters: expected an object (a JSON Schema), got a string"),
    ({"tool_choice": 1}, "tool_choice: expected a string or an object, got an integer"),
    ({"parallel_tool_calls": "no"}, "parallel_tool_calls: expected true or false, got a string"),
    ({"max_output_tokens": "10"}, "max_output_tokens: expected an integer, got a string"),
    ({"max_output_tokens": True}, "max_output_tokens: expected an integer, got a boolean"),
    ({"temperature": "hot"}, "temperature: expected a number, got a string"),
    ({"model": 4}, "model: expected a string, got an integer"),
])
def test_a_body_of_the_wrong_shape_is_an_error_naming_the_field(
    body: dict[str, Any], message: str
) -> None:
    with pytest.raises(WireFormatError) as info:
        codec.decode_request(body)
    assert str(info.value) == f"openai-responses request: {message}"

def test_tool_names_that_fit_give_an_empty_name_map() -> None:
    from toolwire.codecs.openai_responses.parts import name_map

    assert name_map([ToolSpec(name="a_b-1"), ToolSpec(name="c")]).to_wire == {}
    assert name_map([ToolSpec(name="a.b"), ToolSpec(name="c")]).to_wire == {"a.b": "a_b"}


# --- schema


def test_tool_choice_forms() -> None:
    tools = (ToolSpec(name="a"), ToolSpec(name="b"))

    def body(choice: ToolChoice) -> dict[str, Any]:
        return codec.encode_request(Request(model="m", tools=tools, tool_choice=choice))

    assert body(ToolChoice(mode="auto"))["tool_choice"] == "auto"
    assert body(ToolChoice(mode="required"))["tool_choice"] == "required"
    assert body(ToolChoice(mode="none"))["tool_choice"] == "none"
    forced = body(ToolChoice(mode="tool", name="b", parallel=False))
    assert forced["tool_choice"] == {"type": "function", "name": "b"}
    assert forced["parallel_tool_calls"] is False
    assert_sdk_valid(forced)
    # An allowed_tools choice cannot be said canonically: it is kept as it came.
    allowed = {"type": "allowed_tools", "mode": "required",
               "tools": [{"type": "function", "name": "a"}]}
    decoded = codec.decode_request({"model": "m", "tool_choice": allowed,
                                    "tools": [{"type": "function", "name": "a",
                                               "parameters": None, "strict": None}]})
    assert decoded.tool_choice == ToolChoice(mode="required")
    assert codec.encode_request(decoded)["tool_choice"] == allowed

def test_strict_is_always_sent_and_strict_schemas_are_rewritten_on_a_copy() -> None:
    loose_schema = {"type": "object", "properties": {"q": {"type": "string"},
                                                     "n": {"type": "integer", "default": 3}},
                    "required": ["q"]}
    tools = (ToolSpec(name="loose", input_schema=loose_schema),
             ToolSpec(name="tight", input_schema=loose_schema, strict=True))
    encoded = codec.encode(Request(model="m", tools=tools))
    loose, tight = encoded.body["tools"]
    assert loose["strict"] is False and loose["parameters"] == loose_schema
    assert tight["strict"] is True
    assert tight["parameters"]["required"] == ["q", "n"]
    assert tight["parameters"]["additionalProperties"] is False
    assert "default" not in tight["parameters"]["properties"]["n"]
    assert loose_schema["required"] == ["q"]  # the caller's schema is untouched
    (note,) = encoded.notes
    assert note.kind == "schema_rewritten" and note.subject == "tight"
    assert "additionalProperties" in note.detail and "'default'" in note.detail
    assert_sdk_valid(encoded.body)

def test_a_strict_tool_whose_root_is_not_an_object_is_sent_loose() -> None:
    tool = ToolSpec(name="t", input_schema={"type": "string"}, strict=True)
    encoded = codec.encode(Request(model="m", tools=(tool,)))
    assert encoded.body["tools"][0]["strict"] is False
    assert encoded.body["tools"][0]["parameters"] == {"type": "string"}
    assert encoded.notes[0].kind == "schema_rewritten"


# --------------------------------------------------------------------------- media

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
PDF = b"%PDF-1.7\n" + b"x" * 64


def test_media_in_input_and_function_outputs_fit_the_sdk_types_and_read_back() -> None:
    from toolwire import Audio, Document, Image

    req = Request(model="gpt-x", tools=(ToolSpec(name="shot"),), messages=(
        Message(role="user", parts=(TextPart(text="compare these"), Image.from_bytes(PNG),
                                    Document.from_bytes(PDF, name="report.pdf"))),
        Message(role="assistant", parts=(ToolCallPart.from_raw(id="call_1", name="shot",
                                                               raw_arguments="{}"),)),
        Message(role="tool", parts=(ToolResultPart(call_id="call_1", name="shot", content=(
            TextPart(text="the screen:"), Image.from_bytes(PNG))),)),
    ))
    enc = codec.encode(req)
    assert_sdk_valid(enc.body)
    user = enc.body["input"][0]["content"]
    assert [i["type"] for i in user] == ["input_text", "input_image", "input_file"]
    output = enc.body["input"][2]["output"]
    assert [i["type"] for i in output] == ["input_text", "input_image"]
    assert enc.notes == ()
    assert codec.decode_request(enc.body) == req
    sound = Message(role="user", parts=(Audio.from_bytes(b"RIFF0000WAVEfmt "),))
    enc = codec.encode(replace(req, messages=(sound,)))
    assert [n.kind for n in enc.notes] == ["media_dropped"]
    assert_sdk_valid(enc.body)


@pytest.mark.parametrize("streamed", [False, True])
def test_a_media_history_fits_the_sdk_types(streamed: bool) -> None:
    """An image and a PDF from the user, an image from a tool, replies whole or streamed."""
    from strategies import media_history

    body = codec.encode_request(media_history("openai-responses", "m", streamed=streamed))
    assert_sdk_valid(body)
    outputs = [i for i in body["input"] if i.get("type") == "function_call_output"]
    assert outputs[0]["output"][1]["type"] == "input_image"
