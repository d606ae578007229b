"""The gemini-generate codec: golden bodies, recorded replies, round trips, streams, errors."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdk_types import gemini_body
from strategies import argument_objects, call_ids, json_values, texts, tool_names, tool_specs
from toolwire.codecs import get_codec
from toolwire.codecs.gemini_generate import codec as G
from toolwire.errors import (
    AuthenticationError,
    ConfigError,
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
from toolwire.events import (
    ReasoningDelta,
    StreamEnd,
    TextDelta,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from toolwire.transcript import (
    MediaPart,
    Message,
    OpaquePart,
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
    replace,
)

WIRE = "gemini-generate"
C = get_codec(WIRE)  # the codec with the functions derived once for every wire
CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"
SIG_A = base64.b64encode(b"\x0a\xdc\x01signature-a").decode()
SIG_B = base64.b64encode(b"\x0a\xcd\x01sig-b").decode()
WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
WEATHER = ToolSpec(name="get_weather", description="Current weather for a city.",
                   input_schema=WEATHER_SCHEMA)


def corpus(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CORPUS / f"{name}.json").read_text())
    return data


def sse(*chunks: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in chunks)


def assemble(chunks: list[bytes], request: Request | None = None) -> tuple[list[Any], Reply]:
    events = list(C.decode_stream(chunks, request=request))
    end = events[-1]
    assert isinstance(end, StreamEnd)
    return events[:-1], end.reply


def gen_id(call: ToolCallPart) -> bool:
    data = (call.provider_data or {}).get(WIRE) or {}
    return bool(data.get("_generated_id"))


BODY = gemini_body()


def check_body(body: dict[str, Any]) -> None:
    """Validate a request body against the official SDK types, unknown keys forbidden."""
    BODY.validate_python(body, extra="forbid")


def check_reply(body: dict[str, Any]) -> None:
    from google.genai import types as gt

    gt.GenerateContentResponse.model_validate(body, extra="forbid")


signatures = st.binary(min_size=4, max_size=24).map(lambda b: base64.b64encode(b).decode())
maybe_signature = st.none() | signatures
flags = st.booleans()
call_counts = st.integers(1, 3)
id_lists = {n: st.lists(call_ids, min_size=n, max_size=n, unique=True) for n in (1, 2, 3)}
history_kinds = st.lists(st.sampled_from(["user", "round", "text", "image"]), max_size=5)
reply_kinds = st.lists(st.sampled_from(["text", "thought", "sig", "calls", "code"]), max_size=5)
tool_lists = st.lists(tool_specs(), max_size=3, unique_by=lambda t: t.name)
models = st.from_regex(r"\Agemini-[a-z0-9.]{1,8}\Z")
response_ids = st.none() | st.from_regex(r"\A[A-Za-z0-9_-]{6,20}\Z")
maybe_text = st.none() | texts
maybe_max_tokens = st.none() | st.integers(1, 65536)
maybe_temperature = st.none() | st.floats(0, 2, allow_nan=False)
plain_choices = st.none() | st.sampled_from(
    [ToolChoice(mode=m) for m in ("auto", "required", "none")])
option_sets: st.SearchStrategy[dict[str, Any] | None] = st.sampled_from([
    None,
    {WIRE: {"generationConfig": {"thinkingConfig": {"includeThoughts": True}}}},
    {WIRE: {"tools": [{"googleSearch": {}}]}},
])
finish_with_calls = st.sampled_from(["STOP", "MAX_TOKENS"])
finish_plain = st.sampled_from(sorted(G.FINISH_REASONS))
counts = st.integers(0, 5000)
reply_extras = st.sampled_from([None, {WIRE: {"candidate": {"index": 0, "finishMessage": "ok"},
                                              "usageMetadata": {"trafficType": "ON_DEMAND"}}}])
model_versions = st.none() | st.just("gemini-3-flash")
HYP = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def draw_calls(draw: st.DrawFn) -> list[ToolCallPart]:
    out = []
    for i, call_id in enumerate(draw(id_lists[draw(call_counts)])):
        data = {WIRE: {"thoughtSignature": draw(signatures)}} if i == 0 and draw(flags) else None
        out.append(ToolCallPart(id=call_id, name=draw(tool_names),
                                arguments=draw(argument_objects), provider_data=data))
    return out


# --- codec


def test_module_has_the_codec_contract() -> None:
    for name in ("WIRE", "STOP_REASONS", "encode", "encode_request", "decode_request",
                 "decode_response", "encode_response", "encode_stream", "stream_decoder",
                 "decode_stream", "decode_error"):
        assert hasattr(C, name), name
    for name in ("encode_request", "stream_decoder", "decode_stream"):
        assert not hasattr(G, name), f"{name} is derived by Codec, not written by the wire"
    assert G.WIRE == WIRE
    assert get_codec(WIRE).module is G
    assert isinstance(C.stream_decoder().wrapped, G.StreamDecoder)  # type: ignore[attr-defined]


# --- request


def test_sdk_check_catches_a_misspelled_field() -> None:
    good = C.encode_request(Request(model="m", messages=(Message.user("hi"),), tools=(WEATHER,)))
    check_body(good)
    bad = json.loads(json.dumps(good))
    bad["tools"][0]["functionDeclarations"][0]["parameter"] = {}
    with pytest.raises(ValueError, match="parameter"):
        check_body(bad)


def test_request_golden_matches_the_documented_shape() -> None:
    request = Request(
        model="gemini-3-flash",
        system="You are a weather bot.",
        messages=(Message.user("Weather in Paris and Rome?"),),
        tools=(WEATHER,),
        tool_choice=ToolChoice(mode="auto"),
    )
    encoded = G.encode(request)
    assert encoded.body == {
        "systemInstruction": {"parts": [{"text": "You are a weather bot."}]},
        "contents": [{"role": "user", "parts": [{"text": "Weather in Paris and Rome?"}]}],
        "tools": [{"functionDeclarations": [{
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parametersJsonSchema": WEATHER_SCHEMA,
        }]}],
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
    }
    assert encoded.notes == ()
    check_body(encoded.body)
    assert "model" not in encoded.body
    assert G.decode_request(encoded.body, model="gemini-3-flash") == request


def test_bad_schema_field_setting_is_a_config_error() -> None:
    request = Request(model="m", provider_options={WIRE: {"_schema_field": "schema"}})
    with pytest.raises(ConfigError, match="_schema_field"):
        G.encode(request)


def test_tool_choice_modes() -> None:
    tools = (WEATHER, ToolSpec(name="other"))

    def config(choice: ToolChoice) -> Any:
        return C.encode_request(Request(model="m", tools=tools, tool_choice=choice))["toolConfig"]

    assert config(ToolChoice(mode="auto")) == {"functionCallingConfig": {"mode": "AUTO"}}
    assert config(ToolChoice(mode="required")) == {"functionCallingConfig": {"mode": "ANY"}}
    assert config(ToolChoice(mode="none")) == {"functionCallingConfig": {"mode": "NONE"}}
    assert config(ToolChoice(mode="tool", name="get_weather")) == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}}
    encoded = G.encode(Request(model="m", tools=tools,
                               tool_choice=ToolChoice(mode="auto", parallel=False)))
    assert [n.kind for n in encoded.notes] == ["choice_changed"]
    assert "parallel" not in json.dumps(encoded.body)


def test_tool_config_that_the_canonical_choice_cannot_hold_is_kept() -> None:
    body = {"contents": [], "toolConfig": {"functionCallingConfig": {
        "mode": "ANY", "allowedFunctionNames": ["a", "b"]}}}
    request = G.decode_request(body)
    assert request.tool_choice == ToolChoice(mode="required")
    assert C.encode_request(request) == body
    validated = {"contents": [], "toolConfig": {"functionCallingConfig": {"mode": "VALIDATED"}}}
    assert G.decode_request(validated).tool_choice == ToolChoice(mode="auto")
    assert C.encode_request(G.decode_request(validated)) == validated


def test_provider_options_merge_into_the_body_and_read_back() -> None:
    options = {
        "generationConfig": {"thinkingConfig": {"thinkingBudget": 0, "includeThoughts": True}},
        "tools": [{"googleSearch": {}}],
        "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
    }
    request = Request(model="m", messages=(Message.user("hi"),), tools=(WEATHER,),
                      max_tokens=100, temperature=0.5, provider_options={WIRE: options})
    body = C.encode_request(request)
    assert body["generationConfig"] == {"temperature": 0.5, "maxOutputTokens": 100,
                                        "thinkingConfig": {"thinkingBudget": 0,
                                                           "includeThoughts": True}}
    assert body["tools"][1] == {"googleSearch": {}}
    check_body(body)
    assert G.decode_request(body, model="m") == request


def test_settings_for_other_wires_give_one_note_per_key() -> None:
    request = Request(model="m", messages=(Message.user("hi"),), provider_options={
        "anthropic-messages": {"top_k": 5},
        "openai-chat": {"seed": 7, "top_p": 0.5},
        WIRE: {"safetySettings": []},
    })
    encoded = G.encode(request)
    assert encoded.body["safetySettings"] == []
    assert not {"top_k", "seed", "top_p"} & set(encoded.body)
    notes = [(n.kind, n.subject, n.detail) for n in encoded.notes]
    assert [(k, s) for k, s, _ in notes] == [
        ("field_dropped", "provider_options['anthropic-messages']"),
        ("field_dropped", "provider_options['openai-chat']"),
        ("field_dropped", "provider_options['openai-chat']"),
    ]
    assert "'top_k'" in notes[0][2] and "'seed'" in notes[1][2] and "'top_p'" in notes[2][2]
    check_body(encoded.body)


def test_own_options_that_are_not_an_object_are_noted_not_sent() -> None:
    encoded = G.encode(Request(model="m", provider_options={WIRE: ["safetySettings"]}))
    assert encoded.body == {"contents": []}
    assert [(n.kind, n.subject) for n in encoded.notes] == [
        ("field_dropped", f"provider_options[{WIRE!r}]")]


def test_encode_passes_given_values_through_and_leaves_them_unchanged() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    args = {"q": "x", "nested": {"deep": [1]}}
    thought = {"text": "hmm", "thought": True, "thoughtSignature": SIG_A}
    safety = [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}]
    request = Request(model="m", tools=(ToolSpec(name="f", input_schema=schema),), messages=(
        Message.user("hi"),
        Message(role="assistant", parts=(
            ReasoningPart(text="hmm", provider_data={WIRE: thought}),
            ToolCallPart(id="c1", name="f", arguments=args))),
    ), provider_options={WIRE: {"safetySettings": safety,
                                "_declarations": {"f": {"response": {"type": "object"}}}}})
    before = json.dumps([schema, args, thought, safety])
    body = C.encode_request(request)
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert declaration["parametersJsonSchema"] is schema
    assert declaration["response"] == {"type": "object"}
    model_parts = body["contents"][1]["parts"]
    assert model_parts[0] is thought
    assert model_parts[1]["functionCall"]["args"] is args
    assert body["safetySettings"] is safety
    assert json.dumps([schema, args, thought, safety]) == before
    check_body(body)


def test_history_with_calls_results_and_signatures() -> None:
    reply = G.decode_response({
        "candidates": [{"content": {"role": "model", "parts": [
            {"text": "I'll check both cities."},
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
             "thoughtSignature": SIG_A},
            {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}},
        ]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 61, "candidatesTokenCount": 28,
                          "thoughtsTokenCount": 133, "totalTokenCount": 222},
        "modelVersion": "gemini-3-flash", "responseId": "x3anaO",
    })
    paris, rome = reply.tool_calls
    assert reply.stop == "tool_calls" and reply.raw_stop == "STOP"
    assert paris.provider_data == {WIRE: {"thoughtSignature": SIG_A, "_generated_id": True}}
    assert rome.provider_data == {WIRE: {"_generated_id": True}}  # no signature invented
    assert paris.id != rome.id and paris.id.startswith("call_")
    results = Message(role="tool", parts=(
        ToolResultPart(call_id=paris.id, content="18°C, cloudy", name="get_weather"),
        ToolResultPart(call_id=rome.id, content="weather service timeout after 10s",
                       is_error=True, name="get_weather"),
    ))
    request = Request(model="gemini-3-flash", tools=(WEATHER,), messages=(
        Message.user("Weather in Paris and Rome?"), reply.message, results))
    encoded = G.encode(request)
    assert encoded.body["contents"] == [
        {"role": "user", "parts": [{"text": "Weather in Paris and Rome?"}]},
        {"role": "model", "parts": [
            {"text": "I'll check both cities."},
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
             "thoughtSignature": SIG_A},
            {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "get_weather", "response": {"output": "18°C, cloudy"}}},
            {"functionResponse": {"name": "get_weather",
                                  "response": {"error": "weather service timeout after 10s"}}}]},
    ]
    assert encoded.notes == ()
    check_body(encoded.body)
    # Read back: results without ids are matched to the calls by name and order.
    back = G.decode_request(encoded.body)
    calls = back.messages[1].tool_calls
    tool = back.messages[2]
    assert tool.role == "tool"
    assert [r.call_id for r in tool.tool_results] == [c.id for c in calls]
    assert [r.is_error for r in tool.tool_results] == [False, True]
    assert tool.tool_results[0].content == "18°C, cloudy"
    assert C.encode_request(back) == encoded.body


def test_results_echo_call_ids_that_came_from_the_wire() -> None:
    call = ToolCallPart(id="grBScFvZ", name="lookup", arguments={"order_id": "A-1"},
                        provider_data={WIRE: {"thoughtSignature": SIG_A}})
    request = Request(model="m", messages=(
        Message(role="assistant", parts=(call,)),
        Message(role="tool", parts=(ToolResultPart(call_id="grBScFvZ", content="ok"),)),
        Message.user("and now?"),
    ))
    contents = C.encode_request(request)["contents"]
    assert contents[0]["parts"] == [{"functionCall": {
        "name": "lookup", "args": {"order_id": "A-1"}, "id": "grBScFvZ"},
        "thoughtSignature": SIG_A}]
    # One user content: the result (name taken from the call) and then the next user text.
    assert contents[1:] == [{"role": "user", "parts": [
        {"functionResponse": {"name": "lookup", "id": "grBScFvZ", "response": {"output": "ok"}}},
        {"text": "and now?"}]}]
    back = G.decode_request({"contents": contents})
    assert [m.role for m in back.messages] == ["assistant", "tool", "user"]
    assert back.messages[1].tool_results[0] == ToolResultPart(
        call_id="grBScFvZ", content="ok", name="lookup")


def test_function_role_and_odd_result_objects_decode() -> None:
    body = {"contents": [
        {"role": "model", "parts": [{"functionCall": {"name": "a", "args": {}}},
                                    {"functionCall": {"name": "b", "args": {}}}]},
        {"role": "function", "parts": [
            {"functionResponse": {"name": "b", "response": {"result": 3}}},
            {"functionResponse": {"name": "a", "response": {"output": {"x": [1]}}}}]},
    ]}
    request = G.decode_request(body)
    calls = request.messages[0].tool_calls
    results = request.messages[1].tool_results
    assert request.messages[1].role == "tool"
    # matched by name, not by position
    assert results[0].call_id == calls[1].id and results[1].call_id == calls[0].id
    assert results[0].content == '{"result":3}' and results[1].content == '{"x":[1]}'
    assert not results[0].is_error


def test_system_message_mid_conversation_and_strict_are_noted() -> None:
    request = Request(model="m", tools=(ToolSpec(name="t", strict=True),), messages=(
        Message.user("a"), Message(role="system", parts=(TextPart(text="be brief"),))))
    encoded = G.encode(request)
    assert encoded.body["contents"][1] == {"role": "user", "parts": [{"text": "be brief"}]}
    assert {n.kind for n in encoded.notes} == {"role_changed", "field_dropped"}


def test_fill_signature_marks_foreign_call_turns_only() -> None:
    foreign = ToolCallPart(id="toolu_1", name="t", arguments={})
    own_call = ToolCallPart(id="c2", name="t", arguments={},
                            provider_data={WIRE: {"thoughtSignature": SIG_A}})
    messages = (Message(role="assistant", parts=(foreign, foreign)),
                Message(role="assistant", parts=(own_call,)))
    plain = C.encode_request(Request(model="m", messages=messages))
    assert "thoughtSignature" not in plain["contents"][0]["parts"][0]
    filled = C.encode_request(Request(model="m", messages=messages, provider_options={
        WIRE: {"_fill_signature": "skip_thought_signature_validator"}}))
    first, second = filled["contents"][0]["parts"]
    assert first["thoughtSignature"] == "skip_thought_signature_validator"
    assert "thoughtSignature" not in second
    assert filled["contents"][1]["parts"][0]["thoughtSignature"] == SIG_A


def test_decode_request_keeps_unknown_keys_and_reads_the_model() -> None:
    body = {"contents": [{"parts": [{"text": "hi"}]}], "cachedContent": "cachedContents/abc",
            "model": "models/gemini-2.5-pro", "system_instruction": {"parts": [{"text": "s"}]}}
    request = G.decode_request(body, stream=True)
    assert request.model == "gemini-2.5-pro" and request.stream
    assert request.system == "s"
    assert request.messages == (Message.user("hi"),)
    assert request.provider_options == {WIRE: {"cachedContent": "cachedContents/abc"}}
    assert C.encode_request(request)["cachedContent"] == "cachedContents/abc"


@pytest.mark.parametrize(("body", "message"), [
    ({"contents": "x"}, "contents: expected a list of contents, got a string"),
    ({"contents": {"role": "user"}}, "contents: expected a list of contents, got an object"),
    ({"contents": ["hi"]}, "contents[0]: expected an object (a content), got a string"),
    ({"contents": [{"role": 1, "parts": []}]}, "contents[0].role: expected 'user', 'model' "
     "or 'function', got an integer"),
    ({"contents": [{"role": "wizard", "parts": []}]}, "contents[0].role: expected 'user', "
     "'model' or 'function', got a string"),
    ({"contents": [{"role": "user", "parts": "hi"}]},
     "contents[0].parts: expected a list of parts, got a string"),
    ({"contents": [{"role": "user", "parts": ["hi"]}]},
     "contents[0].parts[0]: expected an object (a part), got a string"),
    ({"contents": [{"role": "user", "parts": [{"text": 5}]}]},
     "contents[0].parts[0].text: expected a string, got an integer"),
    ({"contents": [{"role": "model", "parts": [{"functionCall": "f"}]}]},
     "contents[0].parts[0].functionCall: expected an object, got a string"),
    ({"contents": [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}]},
     "contents[0].parts[0].functionCall.name: expected a string, got null"),
    ({"contents": [{"role": "model", "parts": [{"functionCall": {"name": "f", "args": [1]}}]}]},
     "contents[0].parts[0].functionCall.args: expected an object, got a list"),
    ({"contents": [{"role": "user", "parts": [{"functionResponse": []}]}]},
     "contents[0].parts[0].functionResponse: expected an object, got a list"),
    ({"systemInstruction": 5},
     "systemInstruction: expected an object (a content) or a string, got an integer"),
    ({"systemInstruction": {"parts": "be brief"}},
     "systemInstruction.parts: expected a list of parts, got a string"),
    ({"tools": {"functionDeclarations": []}}, "tools: expected a list of tools, got an object"),
    ({"tools": ["f"]}, "tools[0]: expected an object (a tool), got a string"),
    ({"tools": [{"functionDeclarations": {"name": "f"}}]},
     "tools[0].functionDeclarations: expected a list of declarations, got an object"),
    ({"tools": [{"functionDeclarations": ["f"]}]},
     "tools[0].functionDeclarations[0]: expected an object (a function declaration), got a "
     "string"),
    ({"tools": [{"functionDeclarations": [{"description": "no name"}]}]},
     "tools[0].functionDeclarations[0].name: expected a non-empty string, got null"),
    ({"tools": [{"function_declarations": [{"name": "f", "parameters": "{}"}]}]},
     "tools[0].functionDeclarations[0].parameters: expected an object, got a string"),
    ({"toolConfig": "AUTO"}, "toolConfig: expected an object, got a string"),
    ({"toolConfig": {"functionCallingConfig": "ANY"}},
     "toolConfig.functionCallingConfig: expected an object, got a string"),
    ({"generationConfig": 0.5}, "generationConfig: expected an object, got a number"),
    ({"model": 3}, "model: expected a string, got an integer"),
])
def test_a_body_of_the_wrong_shape_is_an_error_naming_the_field(
    body: dict[str, Any], message: str
) -> None:
    with pytest.raises(WireFormatError) as info:
        G.decode_request(body)
    assert str(info.value) == message


def test_a_request_body_that_is_not_an_object_is_an_error() -> None:
    with pytest.raises(WireFormatError, match="request body: expected an object, got a list"):
        G.decode_request([])  # type: ignore[arg-type]


def test_lenient_where_clients_vary() -> None:
    request = G.decode_request({
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}, {"role": "user"}],
        "system_instruction": "be brief", "tools": None, "toolConfig": None,
        "generationConfig": {"temperature": "warm"},
    })
    assert request.system == "be brief"
    assert [m.text for m in request.messages] == ["hi", ""]
    assert request.temperature is None
    assert request.provider_options == {WIRE: {"generationConfig": {"temperature": "warm"}}}


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    messages: list[Message] = []
    for kind in draw(history_kinds):
        if kind == "user":
            messages.append(Message.user(draw(texts)))
        elif kind == "image":
            image = MediaPart(kind="image", media_type="image/png",
                              data=draw(st.binary(min_size=1, max_size=24)))
            messages.append(Message(role="user", parts=(TextPart(text=draw(texts)), image)))
        elif kind == "text":
            sig = draw(maybe_signature)
            data = {WIRE: {"thoughtSignature": sig}} if sig else None
            said = draw(texts)
            thought = {"text": said, "thought": True}
            messages.append(Message(role="assistant", parts=(
                ReasoningPart(text=said, provider_data={WIRE: thought}),
                TextPart(text=draw(texts), provider_data=data))))
        else:
            made = draw_calls(draw)
            lead = [TextPart(text=draw(texts))] if draw(flags) else []
            messages.append(Message(role="assistant", parts=(*lead, *made)))
            messages.append(Message(role="tool", parts=tuple(
                ToolResultPart(call_id=c.id, content=draw(texts), is_error=draw(flags),
                               name=c.name) for c in made)))
    return messages


@st.composite
def requests(draw: st.DrawFn) -> Request:
    tools: list[ToolSpec] = draw(tool_lists)
    choice = draw(plain_choices)
    named: bool = draw(flags)
    if tools and named:
        choice = ToolChoice(mode="tool", name=tools[draw(st.integers(0, len(tools) - 1))].name)
    return Request(
        model=draw(models),
        system=draw(maybe_text),
        messages=tuple(draw(histories())),
        tools=tuple(tools),
        tool_choice=choice,
        max_tokens=draw(maybe_max_tokens),
        temperature=draw(maybe_temperature),
        stream=draw(flags),
        provider_options=draw(option_sets),
    )


@HYP
@given(requests())
def test_request_round_trip(request: Request) -> None:
    body = C.encode_request(request)
    assert G.decode_request(body, model=request.model, stream=request.stream) == request
    check_body(body)
    # results always travel in one user content right after the calls
    for i, content in enumerate(body["contents"]):
        if any("functionResponse" in p for p in content["parts"]):
            previous = body["contents"][i - 1]
            n_calls = sum("functionCall" in p for p in previous["parts"])
            n_results = sum("functionResponse" in p for p in content["parts"])
            assert previous["role"] == "model" and n_calls == n_results


# --- reply


def test_final_reply_text_signature_is_kept_and_echoed() -> None:
    body = {"candidates": [{"content": {"role": "model", "parts": [
        {"text": "Paris is 18°C and cloudy.", "thoughtSignature": SIG_B}]},
        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 130, "candidatesTokenCount": 17,
                          "totalTokenCount": 147}, "modelVersion": "gemini-3-flash"}
    reply = G.decode_response(body)
    assert reply.message.parts == (TextPart(text="Paris is 18°C and cloudy.",
                                            provider_data={WIRE: {"thoughtSignature": SIG_B}}),)
    assert reply.stop == "end_turn" and reply.usage == Usage(input_tokens=130, output_tokens=17)
    assert reply.model == "gemini-3-flash" and reply.id is None
    assert G.encode_response(reply) == body
    check_reply(body)
    nxt = C.encode_request(Request(model="m", messages=(reply.message,)))
    assert nxt["contents"][0]["parts"] == [{"text": "Paris is 18°C and cloudy.",
                                            "thoughtSignature": SIG_B}]


def test_thought_parts_become_reasoning_and_usage_counts_thoughts() -> None:
    body = {"candidates": [{"content": {"role": "model", "parts": [
        {"text": "**Planning**", "thought": True},
        {"text": "Done."}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 100, "cachedContentTokenCount": 60,
                          "candidatesTokenCount": 5, "thoughtsTokenCount": 40,
                          "toolUsePromptTokenCount": 7, "totalTokenCount": 152}}
    reply = G.decode_response(body)
    assert reply.message.parts[0] == ReasoningPart(
        text="**Planning**", provider_data={WIRE: {"text": "**Planning**", "thought": True}})
    assert reply.text == "Done."
    assert reply.usage == Usage(input_tokens=107, output_tokens=45, cache_read_tokens=60,
                                reasoning_tokens=40)
    again = G.encode_response(reply)
    assert again["usageMetadata"] == body["usageMetadata"]
    assert G.decode_response(again) == reply


@pytest.mark.parametrize(("raw", "stop"), [
    ("MALFORMED_FUNCTION_CALL", "tool_call_failed"),
    ("UNEXPECTED_TOOL_CALL", "tool_call_failed"),
    ("MAX_TOKENS", "max_tokens"),
    ("SAFETY", "content_filter"),
    ("RECITATION", "content_filter"),
    ("OTHER", "other"),
    ("SOMETHING_NEW", "other"),
    (10, "tool_call_failed"),
])
def test_finish_reasons_without_parts(raw: Any, stop: str) -> None:
    body = {"candidates": [{"finishReason": raw, "finishMessage": "Malformed function call"}]}
    reply = G.decode_response(body)
    assert reply.stop == stop and reply.message.parts == ()
    assert reply.raw_stop == (raw if isinstance(raw, str) else "MALFORMED_FUNCTION_CALL")


def test_stop_map_is_total_over_documented_values() -> None:
    from google.genai import types as gt

    for reason in gt.FinishReason:
        assert reason.value in G.STOP_REASONS
    for block in gt.BlockedReason:
        assert block.value in G.STOP_REASONS
    assert set(G.STOP_REASONS.values()) <= set(__import__("toolwire.transcript").transcript
                                               .STOP_REASONS)


def test_blocked_prompt_is_a_refusal_or_filter() -> None:
    body = {"promptFeedback": {"blockReason": "SAFETY", "safetyRatings": []},
            "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8}}
    reply = G.decode_response(body)
    assert reply.stop == "content_filter" and reply.raw_stop == "SAFETY"
    assert reply.message.parts == () and reply.usage.input_tokens == 8
    assert G.decode_response(G.encode_response(reply)) == reply
    other = G.decode_response({"promptFeedback": {"blockReason": "OTHER"}})
    assert other.stop == "refusal"
    _, streamed = assemble([sse(body)])
    assert streamed == reply
    made = G.encode_response(Reply(message=Message(role="assistant"), stop="refusal"))
    assert "candidates" not in made and made["promptFeedback"] == {"blockReason": "OTHER"}


def test_cut_off_string_arguments_mean_truncated() -> None:
    body = {"candidates": [{"content": {"parts": [
        {"functionCall": {"name": "w", "args": '{"path": "a.txt", "text": "ab'}}]},
        "finishReason": "MAX_TOKENS"}]}
    reply = G.decode_response(body)
    (call,) = reply.tool_calls
    assert call.parse_error is not None and call.raw_arguments is not None
    assert reply.stop == "max_tokens" and reply.truncated_call
    assert G.decode_response(G.encode_response(reply)) == reply
    whole = G.decode_response({"candidates": [{"content": {"parts": [
        {"functionCall": {"name": "w", "args": '{"a": 1}'}}]}, "finishReason": "MAX_TOKENS"}]})
    assert whole.stop == "tool_calls" and whole.tool_calls[0].arguments == {"a": 1}


@pytest.mark.parametrize(("body", "message"), [
    ({"candidates": "x"}, "candidates: expected a list of candidates, got a string"),
    ({"candidates": [3]}, r"candidates\[0\]: expected an object \(a candidate\), got an integer"),
    ({"candidates": [{"content": "hi"}]}, r"candidates\[0\]\.content: expected an object"),
    ({"candidates": [{"content": {"parts": "hi"}}]},
     r"candidates\[0\]\.content\.parts: expected a list of parts"),
])
def test_a_reply_of_the_wrong_shape_is_an_error(body: dict[str, Any], message: str) -> None:
    with pytest.raises(WireFormatError, match=message):
        G.decode_response(body)


CORPUS_EXPECT: dict[str, tuple[list[str], list[dict[str, Any]], list[str | None], list[bool]]] = {
    # name: (tool names, arguments, wire ids (None = made up), signature present per call)
    "gemini__langchaingo__testgoogleaitoolcallresponse": (
        ["calculate"], [{"expression": "15 * 7"}], [None], [False]),
    "gemini__langchaingo__testgoogleaiwithtools": (
        ["getWeather"], [{"location": "New York"}], [None], [False]),
    "gemini__prism__gemini-generate-text-with-multiple-tools-1": (
        ["search_games", "get_weather"], [{"city": "Detroit"}, {"city": "Detroit"}],
        [None, None], [False, False]),
    "gemini__pydantic-ai__test-google-deferred-capability-announcement-live__1": (
        ["lookup_refund_policy"], [{"order_id": "A-4417"}], ["grBScFvZ"], [True]),
    "gemini__pydantic-ai__test-google-instructions-only-with-tool-calls": (
        ["generate_topic"] * 3, [{}, {}, {}], [None, None, None], [True, False, False]),
    "gemini__pydantic-ai__test-google-model-retry__1": (
        ["get_capital"], [{"country": "La France"}], [None], [True]),
    "gemini__pydantic-ai__test-google-tool-output": (
        ["get_user_country"], [{}], [None], [False]),
    "gemini__pydantic-ai__test-google-vertex-tool-combination-omits-include-server-side-tool-inv": (
        ["get_user_city"], [{}], ["vcyiitct"], [True]),
    "gemini__pydantic-ai__test-tool-choice-matrix-required-google": (
        ["get_weather"], [{"city": "Paris"}], [None], [True]),
    "gemini_stream__pydantic-ai__test-google-model-iter-stream__1": (
        ["get_temperature"], [{"city": "Paris"}], [None], [False]),
    "gemini_stream__pydantic-ai__test-native-output-with-function-tools-stream": (
        ["get_user_country"], [{}], ["96c1su3s"], [True]),
}


def test_every_gemini_corpus_file_is_covered() -> None:
    found = {p.stem for p in CORPUS.glob("gemini*.json")}
    assert found == set(CORPUS_EXPECT)


@pytest.mark.parametrize("name", sorted(CORPUS_EXPECT))
def test_corpus_reply_decodes(name: str) -> None:
    entry = corpus(name)
    names, args, wire_ids, signed = CORPUS_EXPECT[name]
    if entry["streaming"]:
        raw = entry["body"].encode()
        events, reply = assemble([raw[i : i + 37] for i in range(0, len(raw), 37)])
        finished = [e.call for e in events if isinstance(e, ToolCallFinished)]
        assert finished == list(reply.tool_calls)
        assert [e.name for e in events if isinstance(e, ToolCallStarted)] == names
    else:
        reply = G.decode_response(entry["body"])
        assert G.decode_response(G.encode_response(reply)) == reply
        _, streamed = assemble(G.encode_stream(reply))
        assert streamed == reply
    calls = reply.tool_calls
    assert [c.name for c in calls] == names
    assert [c.arguments for c in calls] == args
    assert all(c.raw_arguments is None and c.parse_error is None for c in calls)
    for call, wire_id, has_sig in zip(calls, wire_ids, signed, strict=True):
        if wire_id is None:
            assert gen_id(call) and call.id.startswith("call_")
        else:
            assert call.id == wire_id and not gen_id(call)
        data = (call.provider_data or {}).get(WIRE) or {}
        assert ("thoughtSignature" in data) == has_sig
    assert reply.stop == "tool_calls" and reply.raw_stop == "STOP"
    assert not reply.truncated_call
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0
    assert reply.message.parts == calls  # an empty text part with nothing on it is dropped
    assert len({c.id for c in calls}) == len(calls)


def test_corpus_signatures_are_echoed_verbatim() -> None:
    entry = corpus("gemini__pydantic-ai__test-google-model-retry__1")
    part = entry["body"]["candidates"][0]["content"]["parts"][0]
    reply = G.decode_response(entry["body"])
    body = C.encode_request(Request(model="m", messages=(Message.user("q"), reply.message)))
    sent = body["contents"][1]["parts"][0]
    assert sent["thoughtSignature"] == part["thoughtSignature"]
    assert sent["functionCall"] == {"name": "get_capital", "args": {"country": "La France"}}


def test_integer_enum_replies_decode() -> None:
    reply = G.decode_response(corpus("gemini__langchaingo__testgoogleaiwithtools")["body"])
    assert reply.raw_stop == "STOP" and reply.model == "gemini-2.0-flash"
    assert reply.id == "WB-jaP3dOIP7nsEPuraKqAc"


@pytest.mark.parametrize(("status", "grpc", "message", "cls"), [
    (400, "INVALID_ARGUMENT", "Invalid JSON payload received. Unknown name \"x\"",
     InvalidRequestError),
    (400, "INVALID_ARGUMENT", "The input token count (1200000) exceeds the maximum number of "
     "tokens allowed (1048576).", ContextLengthError),
    (401, "UNAUTHENTICATED", "API key not valid.", AuthenticationError),
    (403, "PERMISSION_DENIED", "Permission denied.", PermissionDeniedError),
    (404, "NOT_FOUND", "models/gemini-9 is not found", NotFoundError),
    (429, "RESOURCE_EXHAUSTED", "Quota exceeded", RateLimitError),
    (500, "INTERNAL", "An internal error has occurred.", ServerError),
    (503, "UNAVAILABLE", "The model is overloaded. Please try again later.", OverloadedError),
])
def test_error_bodies(status: int, grpc: str, message: str, cls: type[ProviderError]) -> None:
    body = {"error": {"code": status, "message": message, "status": grpc}}
    for form in (body, json.dumps(body), json.dumps(body).encode(), [body]):
        error = G.decode_error(status, form)
        assert type(error) is cls
        assert error.message == message and error.error_type == grpc
        assert error.status == status and error.wire == WIRE


def test_retry_delay_comes_from_retry_info_or_headers() -> None:
    body = {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED",
                      "details": [
                          {"@type": "type.googleapis.com/google.rpc.QuotaFailure",
                           "violations": [{"quotaId": "PerMinute"}]},
                          {"@type": "type.googleapis.com/google.rpc.RetryInfo",
                           "retryDelay": "37s"}]}}
    error = G.decode_error(429, body)
    assert isinstance(error, RateLimitError) and error.retry_after == 37.0 and error.retryable
    assert G.decode_error(429, body, {"Retry-After": "5"}).retry_after == 5.0
    plain = G.decode_error(502, "<html>Bad gateway</html>")
    assert isinstance(plain, ServerError) and "Bad gateway" in plain.message
    assert G.decode_error(429, {"error": {"message": "x"}}).retry_after is None


def test_error_body_given_to_decode_response_raises() -> None:
    with pytest.raises(OverloadedError):
        G.decode_response({"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}})


@st.composite
def replies(draw: st.DrawFn) -> Reply:
    """Replies the wire (and its stream) can carry: no two text parts of one kind side by side."""
    parts: list[Any] = []
    last = None
    for kind in draw(reply_kinds):
        family = "text" if kind == "sig" else kind
        if family == last and family in ("text", "thought", "calls"):
            continue
        last = family
        if kind == "text":
            sig = draw(maybe_signature)
            parts.append(TextPart(text=draw(texts),
                                  provider_data={WIRE: {"thoughtSignature": sig}} if sig else None))
        elif kind == "thought":
            said = draw(texts)
            payload: dict[str, Any] = {"text": said, "thought": True}
            if draw(flags):
                payload["thoughtSignature"] = draw(signatures)
            parts.append(ReasoningPart(text=said, provider_data={WIRE: payload}))
        elif kind == "sig":
            only = {"text": "", "thoughtSignature": draw(signatures)}
            parts.append(ReasoningPart(provider_data={WIRE: only}))
        elif kind == "calls":
            parts.extend(draw_calls(draw))
        else:
            code = {"executableCode": {"language": "PYTHON", "code": draw(texts)}}
            parts.append(OpaquePart(wire=WIRE, kind="executableCode", payload=code))
    message = Message(role="assistant", parts=tuple(parts))
    stop: StopReason = "tool_calls"
    if message.tool_calls:
        raw = draw(finish_with_calls)
    else:
        raw = draw(finish_plain)
        stop = G.FINISH_REASONS[raw]
    output = draw(counts)
    usage = Usage(input_tokens=draw(counts), output_tokens=output,
                  cache_read_tokens=draw(counts), reasoning_tokens=min(output, draw(counts)))
    return Reply(message=message, stop=stop, raw_stop=raw, usage=usage,
                 model=draw(model_versions), id=draw(response_ids),
                 provider_data=draw(reply_extras))


@HYP
@given(replies())
def test_reply_round_trip(reply: Reply) -> None:
    body = G.encode_response(reply)
    assert G.decode_response(body) == reply
    check_reply(body)


# --- stream


def test_stream_text_pieces_and_late_signature() -> None:
    head = {"modelVersion": "gemini-3-flash", "responseId": "r1"}
    raw = sse(
        {"candidates": [{"content": {"role": "model", "parts": [
            {"text": "Thinking", "thought": True}]}}], **head},
        {"candidates": [{"content": {"role": "model", "parts": [
            {"text": " more", "thought": True}]}}], **head},
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Héllo "}]}}],
         "usageMetadata": {"promptTokenCount": 5, "totalTokenCount": 5}, **head},
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "wörld"}]}}], **head},
        {"candidates": [{"content": {"role": "model", "parts": [
            {"text": "", "thoughtSignature": SIG_B}]}, "finishReason": "STOP"}],
         "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 3,
                           "thoughtsTokenCount": 9, "totalTokenCount": 17}, **head},
    )
    events, reply = assemble([raw[i : i + 5] for i in range(0, len(raw), 5)])
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["Thinking", " more"]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Héllo ", "wörld"]
    assert reply.message.parts == (
        ReasoningPart(text="Thinking more",
                      provider_data={WIRE: {"text": "Thinking more", "thought": True}}),
        TextPart(text="Héllo wörld", provider_data={WIRE: {"thoughtSignature": SIG_B}}),
    )
    assert reply.usage == Usage(input_tokens=5, output_tokens=12, reasoning_tokens=9)
    assert reply.id == "r1" and reply.stop == "end_turn"


def test_stream_calls_arrive_whole_with_events() -> None:
    raw = sse(
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "I'll check"}]},
                         "index": 0}], "responseId": "x"},
        {"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
             "thoughtSignature": SIG_A},
            {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}]},
            "finishReason": "STOP", "index": 0}], "responseId": "x",
         "usageMetadata": {"promptTokenCount": 61, "candidatesTokenCount": 28,
                           "totalTokenCount": 89}},
    )
    events, reply = assemble([raw])
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["TextDelta", "ToolCallStarted", "ToolCallDelta", "ToolCallFinished",
                     "ToolCallStarted", "ToolCallDelta", "ToolCallFinished"]
    deltas = [e.fragment for e in events if isinstance(e, ToolCallDelta)]
    assert [json.loads(d) for d in deltas] == [{"city": "Paris"}, {"city": "Rome"}]
    assert reply.stop == "tool_calls"
    assert [e.call for e in events if isinstance(e, ToolCallFinished)] == list(reply.tool_calls)
    whole = G.decode_response({"candidates": [{"content": {"role": "model", "parts": [
        {"text": "I'll check"},
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
         "thoughtSignature": SIG_A},
        {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}]},
        "finishReason": "STOP", "index": 0}], "responseId": "x",
        "usageMetadata": {"promptTokenCount": 61, "candidatesTokenCount": 28,
                          "totalTokenCount": 89}})
    assert reply == whole


def test_stream_tolerates_keepalives_done_and_keeps_signature_only_parts() -> None:
    call = {"functionCall": {"name": "t", "args": {}}, "thoughtSignature": SIG_A}
    raw = (b": keep-alive\r\n\r\n"
           + sse({"candidates": [{"content": {"role": "model", "parts": [call]}}]},
                 {"candidates": [{"content": {"role": "model", "parts": [
                     {"text": "", "thoughtSignature": SIG_B}]}, "finishReason": "STOP"}]},
                 {"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}}]})
           + b"data: [DONE]\n\n")
    _, reply = assemble([raw])
    (first, second) = reply.message.parts
    assert isinstance(first, ToolCallPart)
    assert first.provider_data == {WIRE: {"thoughtSignature": SIG_A, "_generated_id": True}}
    assert second == ReasoningPart(provider_data={WIRE: {"text": "", "thoughtSignature": SIG_B}})
    body = C.encode_request(Request(model="m", messages=(reply.message,)))
    assert body["contents"][0]["parts"] == [
        {"functionCall": {"name": "t", "args": {}}, "thoughtSignature": SIG_A},
        {"text": "", "thoughtSignature": SIG_B}]


def test_stream_without_finish_reason_ended_early() -> None:
    raw = sse({"candidates": [{"content": {"parts": [{"text": "partial"}]}}]})
    decoder = C.stream_decoder()
    assert [type(e) for e in decoder.feed(raw)] == [TextDelta]
    with pytest.raises(StreamError, match="finishReason"):
        decoder.finish()
    with pytest.raises(StreamError):
        C.stream_decoder().finish()
    cut = sse({"candidates": [{"content": {"parts": [{"text": "a"}]}, "finishReason": "STOP"}]})
    with pytest.raises(StreamError, match="not JSON"):
        assemble([cut[:30]])


@pytest.mark.parametrize(("code", "status", "message", "cls"), [
    (503, "UNAVAILABLE", "The model is overloaded.", OverloadedError),
    (500, "INTERNAL", "Internal error encountered.", ServerError),
    (429, "RESOURCE_EXHAUSTED", "Quota exceeded.", RateLimitError),
    (0, None, "Something broke.", StreamError),
])
def test_stream_error_event_raises_the_typed_error(
    code: int, status: str | None, message: str, cls: type[ProviderError]
) -> None:
    error: dict[str, Any] = {"message": message}
    if code:
        error.update(code=code, status=status)
    raw = sse({"candidates": [{"content": {"parts": [{"text": "a"}]}}]}, {"error": error})
    with pytest.raises(cls) as info:
        assemble([raw])
    assert type(info.value) is cls
    assert info.value.wire == WIRE and info.value.message == message
    assert info.value.error_type == status


def test_encode_stream_splits_text_and_keeps_calls_whole() -> None:
    call = ToolCallPart(id="c1", name="t", arguments={"a": [1, 2]})
    reply = Reply(message=Message(role="assistant", parts=(TextPart(text="abcdefghi"), call)),
                  stop="tool_calls", raw_stop="STOP", id="r")
    chunks = G.encode_stream(reply)
    assert all(c.startswith(b"data: ") and c.endswith(b"\r\n\r\n") for c in chunks)
    bodies = [json.loads(c[6:]) for c in chunks]
    texts_sent = [p["text"] for b in bodies for p in b["candidates"][0]["content"]["parts"]
                  if "text" in p]
    assert texts_sent == ["abc", "def", "ghi"]
    assert bodies[-1]["candidates"][0]["finishReason"] == "STOP"
    assert bodies[-1]["candidates"][0]["content"]["parts"] == [
        {"functionCall": {"name": "t", "args": {"a": [1, 2]}, "id": "c1"}}]
    assert all("finishReason" not in b["candidates"][0] for b in bodies[:-1])
    for body in bodies:
        check_reply(body)


def test_json_values_in_arguments_survive_the_stream() -> None:
    @HYP
    @given(json_values)
    def check(value: Any) -> None:
        call = ToolCallPart(id="c", name="t", arguments={"v": value})
        reply = Reply(message=Message(role="assistant", parts=(call,)), stop="tool_calls",
                      raw_stop="STOP")
        assert assemble(G.encode_stream(reply))[1] == reply

    check()


@HYP
@given(replies(), st.lists(st.integers(0, 10**6), max_size=12))
def test_stream_round_trip_split_anywhere(reply: Reply, cuts: list[int]) -> None:
    raw = b"".join(G.encode_stream(reply))
    points = sorted({c % (len(raw) + 1) for c in cuts})
    pieces = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    events, streamed = assemble(pieces)
    assert streamed == reply
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == reply.text
    assert [e.call for e in events if isinstance(e, ToolCallFinished)] == list(reply.tool_calls)
    started = [(e.index, e.id, e.name) for e in events if isinstance(e, ToolCallStarted)]
    assert started == [(i, c.id, c.name) for i, c in enumerate(reply.tool_calls)]


# --- parts


def test_reasoning_and_opaque_parts_of_other_wires_are_dropped_with_notes() -> None:
    request = Request(model="m", messages=(
        Message.user("q"),
        Message(role="assistant", parts=(
            ReasoningPart(text="hmm", provider_data={"anthropic-messages": {"signature": "s"}}),
            OpaquePart(wire="anthropic-messages", kind="server_tool_use", payload={"id": "x"}),
            TextPart(text="answer"),
        )),
        Message(role="assistant", parts=(ReasoningPart(text="only"),)),
    ))
    encoded = G.encode(request)
    assert encoded.body["contents"] == [
        {"role": "user", "parts": [{"text": "q"}]},
        {"role": "model", "parts": [{"text": "answer"}]},
    ]
    kinds = [n.kind for n in encoded.notes]
    assert kinds == ["reasoning_dropped", "opaque_dropped", "reasoning_dropped", "message_dropped"]


def test_own_reasoning_and_opaque_parts_go_back_verbatim() -> None:
    thought = {"text": "Let me think", "thought": True, "thoughtSignature": SIG_B}
    code = {"executableCode": {"language": "PYTHON", "code": "print(1)"}}
    signature_only = {"text": "", "thoughtSignature": SIG_A}
    body = {"contents": [{"role": "model", "parts": [thought, code, signature_only]}]}
    request = G.decode_request(body)
    parts = request.messages[0].parts
    assert parts[0] == ReasoningPart(text="Let me think", provider_data={WIRE: thought})
    assert parts[1] == OpaquePart(wire=WIRE, kind="executableCode", payload=code)
    assert parts[2] == ReasoningPart(text="", provider_data={WIRE: {"text": "",
                                                                    "thoughtSignature": SIG_A}})
    assert C.encode_request(request) == body
    check_body(body)


def test_every_dropped_part_is_named_by_message_and_part_index() -> None:
    foreign = ReasoningPart(text="t", provider_data={"anthropic-messages": {"signature": "s"}})
    opaque = OpaquePart(wire="openai-responses", kind="web_search_call", payload={"id": "w"})
    call = ToolCallPart(id="c1", name="f", arguments={})
    request = Request(model="m", messages=(
        Message(role="user", parts=(TextPart(text="a"), opaque)),
        Message(role="assistant", parts=(TextPart(text="b"), foreign, call)),
        Message(role="tool", parts=(ToolResultPart(call_id="c1", content="x", name="f"),)),
        Message(role="user", parts=(foreign, TextPart(text="c"))),
    ))
    encoded = G.encode(request)
    assert [(n.kind, n.subject) for n in encoded.notes] == [
        ("opaque_dropped", "messages[0].parts[1]"),
        ("reasoning_dropped", "messages[1].parts[1]"),
        ("reasoning_dropped", "messages[3].parts[0]"),  # joined to the results' content
    ]
    assert len(encoded.body["contents"]) == 3
    check_body(encoded.body)


def test_arguments_that_are_not_an_object_are_replaced_with_a_note() -> None:
    bad = ToolCallPart.from_raw(id="c", name="t", raw_arguments='{"a": ')
    encoded = G.encode(Request(model="m", messages=(Message(role="assistant", parts=(bad,)),)))
    assert encoded.body["contents"][0]["parts"][0]["functionCall"]["args"] == {}
    assert [n.kind for n in encoded.notes] == ["arguments_replaced"]


def test_non_text_values_are_read_leniently() -> None:
    reply = G.decode_response({"candidates": [{"content": {"parts": [
        {"text": None}, "junk", {"functionCall": {"name": "t"}}]}, "finishReason": "STOP"}]})
    (call,) = reply.message.parts
    assert isinstance(call, ToolCallPart) and call.arguments == {}


def test_generated_ids_are_stable_and_never_sent() -> None:
    body = corpus("gemini__pydantic-ai__test-google-instructions-only-with-tool-calls")["body"]
    first = G.decode_response(body)
    assert first == G.decode_response(body)
    ids = [c.id for c in first.tool_calls]
    assert len(set(ids)) == 3 and all(gen_id(c) for c in first.tool_calls)
    rendered = G.encode_response(first)
    assert all("id" not in p["functionCall"] for p in rendered["candidates"][0]["content"]["parts"])
    assert G.decode_response(rendered) == first
    _, streamed = assemble(G.encode_stream(first))
    assert streamed == first
    check_reply(rendered)


def test_dotted_names_are_legal_on_gemini_and_bad_ones_are_mapped_everywhere() -> None:
    tools = (ToolSpec(name="math.sum"), ToolSpec(name="my tool!"))
    call = ToolCallPart(id="c1", name="my tool!", arguments={"a": 1})
    request = Request(model="m", tools=tools, tool_choice=ToolChoice(mode="tool", name="my tool!"),
                      messages=(Message(role="assistant", parts=(call,)), Message(
                          role="tool", parts=(ToolResultPart(call_id="c1", content="2",
                                                             name="my tool!"),))))
    encoded = G.encode(request)
    decl_names = [d["name"] for d in encoded.body["tools"][0]["functionDeclarations"]]
    assert decl_names[0] == "math.sum"
    mapped = decl_names[1]
    assert mapped != "my tool!" and G.decode_request(encoded.body).tools[1].name == mapped
    assert encoded.body["toolConfig"]["functionCallingConfig"]["allowedFunctionNames"] == [mapped]
    assert encoded.body["contents"][0]["parts"][0]["functionCall"]["name"] == mapped
    assert encoded.body["contents"][1]["parts"][0]["functionResponse"]["name"] == mapped
    assert [(n.kind, n.subject) for n in encoded.notes] == [("tool_name_mapped", "my tool!")]
    reply = G.decode_response({"candidates": [{"content": {"parts": [
        {"functionCall": {"name": mapped, "args": {}}},
        {"functionCall": {"name": "math.sum", "args": {"a": 1}}}]}, "finishReason": "STOP"}]},
        request=request)
    assert [c.name for c in reply.tool_calls] == ["my tool!", "math.sum"]
    assert G.encode_response(reply, request=request)["candidates"][0]["content"]["parts"][0][
        "functionCall"]["name"] == mapped


def test_tool_names_that_fit_give_an_empty_name_map() -> None:
    from toolwire.codecs.gemini_generate.parts import name_map

    assert name_map([ToolSpec(name="a.b:c-1"), ToolSpec(name="_x")]).to_wire == {}
    assert set(name_map([ToolSpec(name="my tool!")]).to_wire) == {"my tool!"}


def test_history_names_outside_the_tools_are_mapped_once_per_request() -> None:
    calls = tuple(Message(role="assistant", parts=(
        ToolCallPart(id=f"c{i}", name="old tool", arguments={}),)) for i in range(3))
    body = C.encode_request(Request(model="m", messages=(Message.user("hi"), *calls)))
    names = {c["parts"][0]["functionCall"]["name"] for c in body["contents"][1:]}
    assert len(names) == 1 and names != {"old tool"}


# --- schema


def test_parameters_setting_rewrites_a_copy_and_stays_out_of_the_body() -> None:
    request = Request(model="m", messages=(Message.user("x"),), tools=(WEATHER,),
                      provider_options={WIRE: {"_schema_field": "parameters"}})
    encoded = G.encode(request)
    decl = encoded.body["tools"][0]["functionDeclarations"][0]
    assert decl["parameters"] == {"type": "OBJECT", "properties": {"city": {"type": "STRING"}},
                                  "required": ["city"]}
    assert "parametersJsonSchema" not in decl
    assert "_schema_field" not in encoded.body
    assert WEATHER.input_schema == WEATHER_SCHEMA  # the user's schema is untouched
    (note,) = encoded.notes
    assert note.kind == "schema_rewritten" and note.subject == "get_weather"
    assert "additionalProperties" in note.detail and "upper case" in note.detail
    check_body(encoded.body)


def test_schema_rewrite_covers_each_unsupported_keyword() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "name": {"type": ["string", "null"], "format": "email"},
            "mode": {"const": "fast"},
            "level": {"type": "integer", "enum": [1, 2, 3]},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "either": {"type": ["string", "integer"]},
            "pick": {"oneOf": [{"type": "string"}, {"type": "boolean"}]},
            "maybe": {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "when": {"type": "string", "format": "date-time"},
        },
        "required": ["name"],
        "additionalProperties": False,
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}},
                            "additionalProperties": False}},
    }
    tool = ToolSpec(name="t", input_schema=schema)
    encoded = G.encode(Request(model="m", tools=(tool,),
                               provider_options={WIRE: {"_schema_field": "parameters"}}))
    params = encoded.body["tools"][0]["functionDeclarations"][0]["parameters"]
    props = params["properties"]
    assert params["type"] == "OBJECT" and "$schema" not in params and "$defs" not in params
    assert "additionalProperties" not in params
    assert props["name"] == {"type": "STRING", "nullable": True}
    assert props["mode"] == {"type": "STRING", "enum": ["fast"]}
    assert props["level"] == {"type": "STRING", "enum": ["1", "2", "3"]}
    assert props["ratio"] == {"type": "NUMBER", "minimum": 0, "maximum": 1}
    assert props["either"] == {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]}
    assert props["pick"] == {"anyOf": [{"type": "STRING"}, {"type": "BOOLEAN"}]}
    assert props["maybe"] == {"type": "OBJECT", "properties": {"x": {"type": "NUMBER"}},
                              "nullable": True}
    assert props["tags"] == {"type": "ARRAY", "items": {"type": "STRING"}}
    assert props["when"] == {"type": "STRING", "format": "date-time"}
    (note,) = encoded.notes
    for word in ("$schema", "const", "enum values turned into strings", "exclusiveMinimum",
                 "exclusiveMaximum", "oneOf", "type list", "$ref", "uniqueItems",
                 "format 'email'", "additionalProperties"):
        assert word in note.detail, word
    check_body(encoded.body)


def test_schema_rewrite_handles_recursion_and_empty_tools() -> None:
    tree = {"type": "object", "properties": {"child": {"$ref": "#"}}}
    empty = ToolSpec(name="ping")
    encoded = G.encode(Request(model="m", tools=(ToolSpec(name="tree", input_schema=tree), empty),
                               provider_options={WIRE: {"_schema_field": "parameters"}}))
    tree_decl, ping_decl = encoded.body["tools"][0]["functionDeclarations"]
    child = tree_decl["parameters"]["properties"]["child"]
    assert child["properties"]["child"] == {"type": "OBJECT"}
    assert "parameters" not in ping_decl  # Gemini rejects an OBJECT with empty properties
    kinds = {n.subject: n.detail for n in encoded.notes}
    assert "recursive" in kinds["tree"] and "left out" in kinds["ping"]
    back = G.decode_request(encoded.body)
    assert back.tools[1] == empty
    assert back.provider_options == {WIRE: {"_schema_field": "parameters"}}


def test_parameters_bodies_read_back_as_json_schema() -> None:
    schema = {"type": "object", "properties": {"n": {"type": ["integer", "null"]},
                                               "s": {"type": "string", "enum": ["a"]}},
              "required": ["n"]}
    request = Request(model="m", tools=(ToolSpec(name="t", input_schema=schema),),
                      provider_options={WIRE: {"_schema_field": "parameters"}})
    body = C.encode_request(request)
    assert body["tools"][0]["functionDeclarations"][0]["parameters"]["properties"]["n"] == {
        "type": "INTEGER", "nullable": True}
    assert G.decode_request(body, model="m") == request


def test_declaration_fields_beyond_the_canonical_ones_survive() -> None:
    body = {"contents": [], "tools": [{"functionDeclarations": [
        {"name": "slow", "description": "d", "parametersJsonSchema": {"type": "object"},
         "behavior": "NON_BLOCKING"}]}]}
    request = G.decode_request(body)
    assert request.tools == (ToolSpec(name="slow", description="d",
                                      input_schema={"type": "object"}),)
    assert C.encode_request(request) == body


# --------------------------------------------------------------------------- media


def test_media_go_as_inline_data_and_result_media_next_to_the_function_response() -> None:
    from strategies import PNG, media_request
    from toolwire import Document

    req = media_request("gemini-2.5-flash", Document.from_url("https://example.com/r.pdf"))
    enc = get_codec(WIRE).encode(req)
    check_body(enc.body)
    user = enc.body["contents"][0]["parts"]
    assert user[1] == {"inlineData": {"mimeType": "image/png",
                                      "data": base64.b64encode(PNG).decode()}}
    assert user[2] == {"fileData": {"mimeType": "application/pdf",
                                    "fileUri": "https://example.com/r.pdf"}}
    tool = enc.body["contents"][2]["parts"]
    assert tool[0]["functionResponse"]["response"] == {"output": "the screen:"}
    assert "parts" not in tool[0]["functionResponse"]
    assert tool[1] == {"text": "[media returned by tool call c1]"}
    assert "inlineData" in tool[2]
    assert [n.kind for n in enc.notes] == ["media_moved"]
    # Read back: the media return to their result, the URL stays a URL.
    assert C.decode_request(enc.body, model="gemini-2.5-flash") == req


@pytest.mark.parametrize(("model", "setting", "inside"), [
    ("gemini-3-pro-preview", None, True),
    ("models/gemini-3.1-flash", None, True),
    ("gemini-2.5-flash", None, False),
    ("gemini-2.0-flash", None, False),
    ("gemini-2.5-flash", True, True),
    ("gemini-3-pro-preview", False, False),
])
def test_result_media_go_inside_the_function_response_only_for_models_that_take_them(
        model: str, setting: bool | None, inside: bool) -> None:
    from strategies import PNG, media_request

    req = media_request(model)
    if setting is not None:
        req = replace(req, provider_options={WIRE: {"_result_parts": setting}})
    enc = C.encode(req)
    check_body(enc.body)
    turn = enc.body["contents"][2]["parts"]
    image = {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(PNG).decode()}}
    if inside:
        assert turn == [{"functionResponse": {"name": "shot", "id": "c1",
                                              "response": {"output": "the screen:"},
                                              "parts": [image]}}]
    else:
        assert turn[1:] == [{"text": "[media returned by tool call c1]"}, image]
    named = [("field_dropped", "messages[0].parts[2]")]  # the PDF's name is not sent
    moved = [] if inside else [("media_moved", "c1")]
    assert [(n.kind, n.subject) for n in enc.notes] == named + moved
    back = C.decode_request(enc.body, model=model)
    assert back.messages[2] == req.messages[2]
    # The setting comes back only where the body did otherwise than the model's default.
    default = "gemini-3" in model
    assert back.provider_options == (None if setting in (None, default)
                                     else {WIRE: {"_result_parts": setting}})
    # With no model named, nothing is said about it (a conversion lists no setting as lost).
    assert C.decode_request(enc.body).provider_options is None


def test_a_wrong_result_parts_setting_is_a_config_error() -> None:
    from strategies import media_request

    req = replace(media_request("m"), provider_options={WIRE: {"_result_parts": "yes"}})
    with pytest.raises(ConfigError, match="_result_parts must be true or false"):
        C.encode(req)


def test_media_of_two_results_after_the_responses_go_back_to_their_own_calls() -> None:
    from strategies import PDF, PNG
    from toolwire import Document, Image

    calls = (ToolCallPart(id="a", name="shot", arguments={}),
             ToolCallPart(id="b", name="scan", arguments={}))
    req = Request(model="gemini-2.5-pro", messages=(
        Message.user("two things"),
        Message(role="assistant", parts=calls),
        Message(role="tool", parts=(
            ToolResultPart(call_id="a", name="shot", content=(Image.from_bytes(PNG),)),
            ToolResultPart(call_id="b", name="scan", content=(
                TextPart(text="page 1"), Document.from_bytes(PDF))))),
        Message.user("and now?"),
    ))
    enc = C.encode(req)
    check_body(enc.body)
    texts = [p.get("text") for p in enc.body["contents"][2]["parts"]]
    assert texts == [None, None, "[media returned by tool call a]", None,
                     "[media returned by tool call b]", None, "and now?"]
    assert C.decode_request(enc.body, model="gemini-2.5-pro") == req


def test_broken_media_parts_are_named() -> None:
    for part, match in (({"inlineData": {"mimeType": "image/png", "data": "@@"}}, "base64"),
                        ({"inlineData": {"data": "AAAA"}}, "mimeType"),
                        ({"fileData": {"mimeType": "image/png"}}, "fileUri"),
                        ({"inlineData": []}, "inlineData")):
        with pytest.raises(WireFormatError, match=match):
            C.decode_request({"contents": [{"role": "user", "parts": [part]}]}, model="m")


@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-3-pro-preview"])
@pytest.mark.parametrize("streamed", [False, True])
def test_a_media_history_fits_the_sdk_types(streamed: bool, model: str) -> None:
    """An image and a PDF from the user, an image from a tool (inside the function response
    or after it), replies whole or streamed."""
    from strategies import media_history

    body = C.encode_request(media_history(WIRE, model, streamed=streamed))
    check_body(body)
    response = body["contents"][2]["parts"][0]["functionResponse"]
    assert ("parts" in response) == model.startswith("gemini-3")


@pytest.mark.parametrize("written", ["+/8=", "-_8=", "-_8"], ids=["standard", "url-safe",
                                                                 "url-safe unpadded"])
def test_inline_data_is_read_in_either_base64_alphabet(written: str) -> None:
    """A bytes field of Google's JSON takes the standard or the URL-safe base64 alphabet,
    padded or not; the google-genai SDK writes the URL-safe one."""
    from toolwire.transcript import MediaPart

    body = {"contents": [{"role": "user", "parts": [
        {"inlineData": {"mimeType": "image/png", "data": written}}, {"text": "what is it?"}]}]}
    request = get_codec("gemini-generate").decode_request(body, model="gemini-2.5-flash")
    media = [p for p in request.messages[0].parts if isinstance(p, MediaPart)]
    assert [m.data for m in media] == [b"\xfb\xff"]
