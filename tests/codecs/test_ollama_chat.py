"""The Ollama native chat codec (``/api/chat``): golden shapes, recorded replies, round trips,
streams split anywhere, errors, name mapping, schema rewrites and the wire's quirks."""

from __future__ import annotations

import base64
import copy
import json
import re
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from strategies import json_scalars, texts
from toolwire.codecs import get_codec
from toolwire.codecs.ollama_chat import codec as oc
from toolwire.errors import (
    ContextLengthError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
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
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
    Usage,
    replace,
)

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"
W = oc.WIRE
CODEC = get_codec(W)
GENERATED = r"\Acall_[0-9a-f]{24}\Z"


def corpus(name: str) -> Any:
    return json.loads((CORPUS / f"{name}.json").read_text())["body"]


def events_of(chunks: list[bytes], request: Request | None = None) -> list[Any]:
    return list(CODEC.decode_stream(chunks, request=request))


WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    input_schema={"type": "object",
                  "properties": {"city": {"type": "string", "description": "City name"}},
                  "required": ["city"]},
)


# Helpers: what the ollama package's types accept, and strategies for the property tests.


def _strip_property(prop: Any, removed: set[str]) -> Any:
    """Drop what the server keeps but ollama 0.6.3's Property model does not declare."""
    if not isinstance(prop, dict):
        return prop
    for key in ("anyOf", "properties", "required"):
        if key in prop:
            removed.add(f"property.{key}")
    return {k: v for k, v in prop.items() if k not in ("anyOf", "properties", "required")}


def check_sdk(body: dict[str, Any]) -> set[str]:
    """Validate a request body against the official ollama SDK types, unknown keys forbidden.

    ChatRequest types ``messages`` as ``Mapping | Message``, so every message is also checked
    against ``Message`` itself. Returns the keys the current server accepts but the SDK does
    not know (call ``id``, ``function.index``, ``tool_call_id``, nested property keywords).
    """
    from ollama._types import ChatRequest, Options, Tool
    from ollama._types import Message as SdkMessage

    removed: set[str] = set()
    body = copy.deepcopy(body)
    for msg in body["messages"]:
        if msg.pop("tool_call_id", None) is not None:
            removed.add("tool_call_id")
        for call in msg.get("tool_calls", ()):
            if call.pop("id", None) is not None:
                removed.add("call.id")
            if call["function"].pop("index", None) is not None:
                removed.add("function.index")
        validated = TypeAdapter(SdkMessage).validate_python(msg, extra="forbid")
        assert validated.model_dump(exclude_unset=True) == msg  # nothing coerced
    for tool in body.get("tools", ()):
        params = tool["function"]["parameters"]
        assert jsonschema_rs.meta.is_valid(params)
        params["properties"] = {k: _strip_property(v, removed)
                                for k, v in params.get("properties", {}).items()}
        TypeAdapter(Tool).validate_python(tool, extra="forbid")
    if "options" in body:
        validated_options = TypeAdapter(Options).validate_python(body["options"], extra="forbid")
        assert validated_options.model_dump(exclude_unset=True) == body["options"]
    adapter = TypeAdapter(ChatRequest)
    assert "generator" not in str(adapter.core_schema)
    adapter.validate_python(body, extra="forbid")
    assert isinstance(body["stream"], bool)
    return removed


def ndjson(lines: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


# Strategies for the property tests of the request, reply and stream sections.
# Local building blocks: st.from_regex is slow enough to dominate these tests' run time.
_lower = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
tool_names = st.builds(lambda head, tail: head + tail, _lower,
                       st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", max_size=8))
call_ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
                   min_size=6, max_size=12).map(lambda s: "call_" + s)
_json = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(_lower, inner, max_size=3), max_leaves=8)
argument_objects = st.dictionaries(_lower, _json, max_size=4)
safe_results = texts.filter(lambda s: not s.startswith("Error:") and s != "(no output)")


@st.composite
def tool_round(draw: st.DrawFn) -> list[Message]:
    n = draw(st.integers(min_value=1, max_value=3))
    ids = draw(st.lists(call_ids, min_size=n, max_size=n, unique=True))
    calls = [ToolCallPart(id=i, name=draw(tool_names), arguments=draw(argument_objects))
             for i in ids]
    parts: list[Any] = []
    if draw(st.booleans()):
        thinking = draw(texts)
        parts.append(ReasoningPart(text=thinking, provider_data={W: thinking}))
    if draw(st.booleans()):
        parts.append(TextPart(text=draw(texts)))
    results = tuple(ToolResultPart(call_id=c.id, content=draw(st.just("") | safe_results),
                                   is_error=draw(st.booleans()), name=c.name) for c in calls)
    return [Message(role="assistant", parts=(*parts, *calls)),
            Message(role="tool", parts=results)]


@st.composite
def requests(draw: st.DrawFn) -> Request:
    messages: list[Message] = [Message.user(draw(texts))]
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        kind = draw(st.sampled_from(["user", "round", "assistant", "system"]))
        if kind == "round":
            messages.extend(draw(tool_round()))
        else:
            role: Any = kind
            messages.append(Message(role=role, parts=(TextPart(text=draw(texts)),)))
    props = draw(st.lists(_lower, max_size=3, unique=True))
    tools = tuple(
        ToolSpec(name=name, description=draw(texts), input_schema={
            "type": "object",
            "properties": {p: {"type": draw(st.sampled_from(["string", "integer"])),
                               "description": draw(texts)} for p in props},
            "required": props[:1]})
        for name in draw(st.lists(tool_names, max_size=3, unique=True)))
    options = draw(st.none() | st.fixed_dictionaries({}, optional={
        "think": st.booleans(), "keep_alive": st.just("5m"),
        "options": st.fixed_dictionaries({"num_ctx": st.integers(1, 10**5)})}))
    return Request(
        model=draw(tool_names), messages=tuple(messages),
        system=draw(st.none() | texts), tools=tools,
        max_tokens=draw(st.none() | st.integers(1, 10**6)),
        temperature=draw(st.none() | st.floats(0, 2, allow_nan=False)),
        stream=draw(st.booleans()),
        provider_options={W: options} if options else None,
    )


@st.composite
def replies(draw: st.DrawFn) -> Reply:
    parts: list[Any] = []
    if draw(st.booleans()):
        thinking = draw(texts)
        parts.append(ReasoningPart(text=thinking, provider_data={W: thinking}))
    if draw(st.booleans()):
        parts.append(TextPart(text=draw(texts)))
    n = draw(st.integers(min_value=0, max_value=3))
    ids = draw(st.lists(call_ids, min_size=n, max_size=n, unique=True))
    parts.extend(ToolCallPart(id=i, name=draw(tool_names), arguments=draw(argument_objects))
                 for i in ids)
    raw = "stop" if n else draw(st.sampled_from(sorted(oc.STOP_REASONS)))
    extras = draw(st.none() | st.fixed_dictionaries(
        {"created_at": st.just("2026-08-21T10:00:02.112Z")},
        optional={"total_duration": st.integers(1, 10**10)}))
    return Reply(
        message=Message(role="assistant", parts=tuple(parts)),
        stop="tool_calls" if n else oc.STOP_REASONS[raw], raw_stop=raw,
        usage=Usage(input_tokens=draw(st.integers(0, 10**6)),
                    output_tokens=draw(st.integers(0, 10**6))),
        model=draw(st.none() | tool_names),
        provider_data={W: extras} if extras else None,
    )


def check_sdk_reply(body: dict[str, Any]) -> None:
    """A reply body we produce fits the SDK's ChatResponse, unknown keys forbidden (call ``id``
    and ``function.index``, which current servers send and ollama 0.6.3 does not declare, aside)."""
    from ollama import ChatResponse

    body = copy.deepcopy(body)
    for call in body["message"].get("tool_calls", ()):
        call.pop("id")
        call["function"].pop("index")
    validated = TypeAdapter(ChatResponse).validate_python(body, extra="forbid")
    assert validated.model_dump(exclude_unset=True) == body


# --- codec


def test_contract_names_and_registry() -> None:
    assert get_codec("ollama-chat").module is oc
    for name in ("WIRE", "STOP_REASONS", "encode", "decode_request", "decode_response",
                 "encode_response", "encode_stream", "StreamDecoder", "decode_error",
                 "encode_error", "check_body"):
        assert hasattr(oc, name), name
    for name in ("encode_request", "stream_decoder", "decode_stream"):
        assert hasattr(CODEC, name), name
        assert not hasattr(oc, name), f"{name} is derived once for every wire, in Codec"
    assert set(oc.STOP_REASONS) == {"stop", "length", "load", "unload"}
    assert oc.STOP_REASONS["length"] == "max_tokens"


# --- request


def test_sdk_check_catches_a_misspelled_field() -> None:
    body = CODEC.encode_request(Request(model="m", messages=(Message.user("hi"),)))
    body["messages"][0]["contnet"] = "x"
    with pytest.raises(Exception, match="extra"):
        check_sdk(body)


def test_golden_request() -> None:
    request = Request(
        model="qwen3", system="You are a weather bot.",
        messages=(Message.user("Weather in Paris and Rome?"),), tools=(WEATHER,),
        provider_options={W: {"think": False}},
    )
    encoded = oc.encode(request)
    assert encoded.notes == ()
    assert encoded.body == {
        "model": "qwen3",
        "messages": [{"role": "system", "content": "You are a weather bot."},
                     {"role": "user", "content": "Weather in Paris and Rome?"}],
        "tools": [{"type": "function", "function": {
            "name": "get_weather", "description": "Current weather for a city.",
            "parameters": {"type": "object",
                           "properties": {"city": {"type": "string",
                                                   "description": "City name"}},
                           "required": ["city"]}}}],
        "stream": False,
        "think": False,
    }
    assert check_sdk(encoded.body) == set()
    assert oc.decode_request(encoded.body) == request


def test_golden_results_turn() -> None:
    reply = oc.decode_response(GOLDEN_REPLY)
    results = Message(role="tool", parts=(
        ToolResultPart(call_id="call_k3x9a2bd", content="18°C, cloudy", name="get_weather"),
        ToolResultPart(call_id="call_p0q8z1mm", content="weather service timeout",
                       is_error=True, name="get_weather"),
    ))
    request = Request(model="qwen3", messages=(Message.user("Weather?"), reply.message, results),
                      tools=(WEATHER,))
    body = CODEC.encode_request(request)
    assert body["messages"][1:] == [
        {"role": "assistant", "content": "I'll check both cities.", "tool_calls": [
            {"id": "call_k3x9a2bd",
             "function": {"index": 0, "name": "get_weather", "arguments": {"city": "Paris"}}},
            {"id": "call_p0q8z1mm",
             "function": {"index": 1, "name": "get_weather", "arguments": {"city": "Rome"}}}]},
        {"role": "tool", "tool_name": "get_weather", "tool_call_id": "call_k3x9a2bd",
         "content": "18°C, cloudy"},
        {"role": "tool", "tool_name": "get_weather", "tool_call_id": "call_p0q8z1mm",
         "content": "Error: weather service timeout"},
    ]
    assert check_sdk(body) == {"call.id", "function.index", "tool_call_id"}
    assert oc.decode_request(body) == request


@settings(max_examples=100, deadline=None)
@given(requests())
def test_request_round_trip(request: Request) -> None:
    encoded = oc.encode(request)
    assert encoded.notes == ()
    assert oc.decode_request(encoded.body) == request
    assert check_sdk(encoded.body) <= {"call.id", "function.index", "tool_call_id"}
    assert json.loads(json.dumps(encoded.body)) == encoded.body


def test_stream_is_always_sent_and_defaults_to_true_when_read() -> None:
    for stream in (True, False):
        body = CODEC.encode_request(Request(model="q", stream=stream))
        assert body["stream"] is stream
    assert oc.decode_request({"model": "q", "messages": []}).stream is True


def test_decode_request_takes_model_and_stream_a_url_gave_when_the_body_has_none() -> None:
    bare: dict[str, Any] = {"messages": [{"role": "user", "content": "hi"}]}
    req = oc.decode_request(bare, model="qwen3", stream=False)
    assert (req.model, req.stream) == ("qwen3", False)
    given = oc.decode_request({**bare, "model": "q", "stream": True}, model="other", stream=False)
    assert (given.model, given.stream) == ("q", True)  # the body wins when it says
    assert oc.decode_request(bare).model == ""  # as before: a missing model reads as empty


def test_options_carry_temperature_and_max_tokens() -> None:
    request = Request(model="q", temperature=0.2, max_tokens=300,
                      provider_options={W: {"options": {"num_ctx": 8192}, "keep_alive": "1m"},
                                        "anthropic-messages": {"thinking": {}}})
    body = CODEC.encode_request(request)
    assert body["options"] == {"num_ctx": 8192, "temperature": 0.2, "num_predict": 300}
    assert body["keep_alive"] == "1m" and "thinking" not in body
    check_sdk(body)
    back = oc.decode_request(body)
    assert (back.temperature, back.max_tokens) == (0.2, 300)
    assert back.provider_options == {W: {"options": {"num_ctx": 8192}, "keep_alive": "1m"}}
    # num_predict -1 (no limit) is not a max_tokens value
    odd = oc.decode_request({"model": "q", "messages": [], "options": {"num_predict": -1}})
    assert odd.max_tokens is None and odd.provider_options == {W: {"options": {"num_predict": -1}}}


def test_tool_choice_has_no_form_on_this_wire() -> None:
    base = Request(model="q", tools=(WEATHER,), messages=(Message.user("hi"),))

    def encode(choice: ToolChoice) -> tuple[dict[str, Any], list[str]]:
        encoded = oc.encode(replace(base, tool_choice=choice))
        return encoded.body, [n.detail for n in encoded.notes if n.kind == "choice_changed"]

    body, notes = encode(ToolChoice(mode="none"))
    assert "tools" not in body and len(notes) == 1 and "tools out of the request" in notes[0]
    body, notes = encode(ToolChoice(mode="required"))
    assert "tools" in body and "tool_choice" not in body and "'required'" in notes[0]
    body, notes = encode(ToolChoice(mode="tool", name="get_weather"))
    assert "tools" in body and "get_weather" in notes[0]
    body, notes = encode(ToolChoice(mode="auto", parallel=False))
    assert "tools" in body and len(notes) == 1 and "parallel" in notes[0]
    assert encode(ToolChoice(mode="auto"))[1] == []


def test_tool_results_error_and_empty_conventions() -> None:
    call = ToolCallPart(id="call_e", name="f", arguments={})
    results = (ToolResultPart(call_id="call_e", content="", name="f"),
               ToolResultPart(call_id="call_e", content="Error: already prefixed",
                              is_error=True, name="f"),
               ToolResultPart(call_id="call_e", content="", is_error=True))
    encoded = oc.encode(Request(model="q", messages=(
        Message.user("go"), Message(role="assistant", parts=(call,)),
        Message(role="tool", parts=results))))
    assert [m["content"] for m in encoded.body["messages"][2:]] == [
        "(no output)", "Error: already prefixed", "Error: (no output)"]
    assert encoded.body["messages"][4]["tool_name"] == "f"  # found from the call
    back = oc.decode_request(encoded.body).messages[2].tool_results
    assert [(r.content, r.is_error) for r in back] == [
        ("", False), ("already prefixed", True), ("", True)]


def test_results_without_ids_are_matched_by_name_then_order() -> None:
    body = {"model": "q", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "a", "arguments": {}}},
            {"function": {"name": "b", "arguments": {}}}]},
        {"role": "tool", "tool_name": "b", "content": "B"},
        {"role": "tool", "content": "A"},
        {"role": "tool", "tool_name": "zzz", "tool_call_id": "call_other", "content": "?"},
        {"role": "user", "content": "next", "images": ["aGk="]},
    ]}
    request = oc.decode_request(body)
    calls = request.messages[1].tool_calls
    results = request.messages[2].tool_results
    assert [(r.call_id, r.name, r.content) for r in results] == [
        (calls[1].id, "b", "B"), (calls[0].id, "a", "A"), ("call_other", "zzz", "?")]
    assert request.messages[3].media == (
        MediaPart(kind="image", media_type="image/png", data=b"hi"),)
    again = CODEC.encode_request(request)
    assert again["messages"][-1] == {"role": "user", "content": "next", "images": ["aGk="]}
    assert again["messages"][1]["tool_calls"][0] == {
        "function": {"index": 0, "name": "a", "arguments": {}}}


def test_tool_results_inside_a_user_message_are_sent_as_tool_messages_first() -> None:
    call = ToolCallPart(id="call_u", name="f", arguments={})
    user = Message(role="user", parts=(ToolResultPart(call_id="call_u", content="ok", name="f"),
                                       TextPart(text="and now?")))
    body = CODEC.encode_request(Request(model="q", messages=(
        Message.user("go"), Message(role="assistant", parts=(call,)), user)))
    assert body["messages"][2:] == [
        {"role": "tool", "tool_name": "f", "tool_call_id": "call_u", "content": "ok"},
        {"role": "user", "content": "and now?"}]


def test_roles_are_read_case_insensitively_and_system_only_first() -> None:
    request = oc.decode_request({"model": "q", "messages": [
        {"role": "SYSTEM", "content": "be brief"}, {"role": "User", "content": "hi"},
        {"role": "system", "content": "later"}]})
    assert request.system == "be brief"
    assert [m.role for m in request.messages] == ["user", "system"]


def test_settings_for_other_wires_give_one_note_per_key() -> None:
    request = Request(model="q", messages=(Message.user("hi"),), provider_options={
        "anthropic-messages": {"top_k": 5},
        "openai-responses": {"store": False, "metadata": {}},
        W: {"keep_alive": "5m"},
    })
    encoded = oc.encode(request)
    assert encoded.body["keep_alive"] == "5m"
    assert not {"top_k", "store", "metadata"} & set(encoded.body)
    notes = [(n.kind, n.subject, n.detail) for n in encoded.notes]
    assert [(k, s) for k, s, _ in notes] == [
        ("field_dropped", "provider_options['anthropic-messages']"),
        ("field_dropped", "provider_options['openai-responses']"),
        ("field_dropped", "provider_options['openai-responses']"),
    ]
    assert "'top_k'" in notes[0][2] and "'store'" in notes[1][2] and "'metadata'" in notes[2][2]
    check_sdk(encoded.body)


def test_own_options_that_are_not_an_object_are_noted_not_sent() -> None:
    encoded = oc.encode(Request(model="q", provider_options={W: "keep_alive=5m"}))
    assert encoded.body == {"model": "q", "messages": [], "stream": False}
    assert [(n.kind, n.subject) for n in encoded.notes] == [
        ("field_dropped", f"provider_options[{W!r}]")]


@pytest.mark.parametrize(("body", "message"), [
    ({"messages": "x"}, "messages: expected a list of messages, got a string"),
    ({"messages": {"role": "user"}}, "messages: expected a list of messages, got an object"),
    ({"messages": ["hi"]}, "messages[0]: expected an object, got a string"),
    ({"messages": [{"role": "system", "content": "s"}, 3]},
     "messages[1]: expected an object, got an integer"),
    ({"messages": [{"role": 1}]}, "messages[0].role: expected a string, got an integer"),
    ({"messages": [{"role": "robot"}]},
     "messages[0].role: expected user, assistant, system or tool, got 'robot'"),
    ({"messages": [{"role": "user", "content": ["x"]}]},
     "messages[0].content: expected a string, got a list"),
    ({"messages": [{"role": "assistant", "tool_calls": "f()"}]},
     "messages[0].tool_calls: expected a list of tool calls, got a string"),
    ({"messages": [{"role": "assistant", "tool_calls": {"function": {"name": "f"}}}]},
     "messages[0].tool_calls: expected a list of tool calls, got an object"),
    ({"messages": [{"role": "assistant", "tool_calls": ["f"]}]},
     "messages[0].tool_calls[0]: expected an object, got a string"),
    ({"messages": [{"role": "assistant", "tool_calls": [{"function": "f"}]}]},
     "messages[0].tool_calls[0].function: expected an object, got a string"),
    ({"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": 3}}]}]},
     "messages[0].tool_calls[0].function.name: expected a string, got an integer"),
    ({"messages": [{"role": "assistant",
                    "tool_calls": [{"function": {"name": "f", "arguments": [1]}}]}]},
     "messages[0].tool_calls[0].function.arguments: expected an object or a string, got a list"),
    ({"messages": [{"role": "tool", "content": "x", "tool_call_id": 4}]},
     "messages[0].tool_call_id: expected a string, got an integer"),
    ({"messages": [{"role": "tool", "content": {"a": 1}}]},
     "messages[0].content: expected a string, got an object"),
    ({"tools": {"function": {"name": "f"}}}, "tools: expected a list of tools, got an object"),
    ({"tools": ["f"]}, "tools[0]: expected an object, got a string"),
    ({"tools": [{"type": "function", "function": {"name": ""}}]},
     "tools[0].function.name: expected a non-empty string, got a string"),
    ({"tools": [{"type": "function", "function": {"name": "f", "parameters": "{}"}}]},
     "tools[0].function.parameters: expected an object, got a string"),
    ({"options": "fast"}, "options: expected an object, got a string"),
    ({"stream": "no"}, "stream: expected true or false, got a string"),
    ({"model": 3}, "model: expected a string, got an integer"),
])
def test_a_body_of_the_wrong_shape_is_an_error_naming_the_field(
    body: dict[str, Any], message: str
) -> None:
    with pytest.raises(WireFormatError) as info:
        oc.decode_request({"model": "q", **body})
    assert str(info.value) == message


def test_lenient_where_servers_vary() -> None:
    request = oc.decode_request({"model": "q", "messages": None, "tools": None})
    assert request == Request(model="q", stream=True)
    body = {"model": "q", "messages": [
        {"role": "assistant", "content": None, "tool_calls": [
            {"function": {"name": "f", "arguments": "{\"a\": 1}"}},
            {"function": {"name": "g"}}]}]}
    calls = oc.decode_request(body).messages[0].tool_calls
    assert calls[0].raw_arguments == "{\"a\": 1}" and calls[0].arguments == {"a": 1}
    assert calls[1].arguments == {}
    assert all(re.match(GENERATED, c.id) for c in calls) and calls[0].id != calls[1].id


def test_encode_passes_given_values_through_and_leaves_them_unchanged() -> None:
    kept = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    cut = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}},
           "additionalProperties": False}
    args = {"city": "Oslo", "nested": {"deep": [1, 2]}}
    request = Request(model="q", tools=(ToolSpec(name="a", input_schema=kept),
                                        ToolSpec(name="b", input_schema=cut)),
                      messages=(Message.user("hi"), Message(role="assistant", parts=(
                          ToolCallPart(id="c1", name="a", arguments=args),))),
                      provider_options={W: {"format": {"type": "object"}}})
    before = copy.deepcopy(request)
    body = CODEC.encode_request(request)
    assert body["tools"][0]["function"]["parameters"] is kept
    rewritten = body["tools"][1]["function"]["parameters"]
    assert rewritten == {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert body["messages"][1]["tool_calls"][0]["function"]["arguments"] is args
    assert body["format"] is request.provider_options[W]["format"]  # type: ignore[index]
    assert request == before
    check_sdk(body)


# --- reply


GOLDEN_REPLY: dict[str, Any] = {
    "model": "qwen3", "created_at": "2026-08-21T10:00:02.112Z",
    "message": {"role": "assistant", "content": "I'll check both cities.", "tool_calls": [
        {"id": "call_k3x9a2bd",
         "function": {"index": 0, "name": "get_weather", "arguments": {"city": "Paris"}}},
        {"id": "call_p0q8z1mm",
         "function": {"index": 1, "name": "get_weather", "arguments": {"city": "Rome"}}}]},
    "done": True, "done_reason": "stop",
    "total_duration": 1840000000, "load_duration": 21000000,
    "prompt_eval_count": 142, "prompt_eval_duration": 210000000,
    "eval_count": 41, "eval_duration": 1600000000,
}


def test_golden_reply_decodes_and_encodes_back_exactly() -> None:
    reply = oc.decode_response(GOLDEN_REPLY)
    assert reply.text == "I'll check both cities."
    assert [(c.id, c.name, c.arguments, c.raw_arguments) for c in reply.tool_calls] == [
        ("call_k3x9a2bd", "get_weather", {"city": "Paris"}, None),
        ("call_p0q8z1mm", "get_weather", {"city": "Rome"}, None),
    ]
    assert (reply.stop, reply.raw_stop, reply.truncated_call) == ("tool_calls", "stop", False)
    assert reply.usage == Usage(input_tokens=142, output_tokens=41)
    assert reply.model == "qwen3" and reply.id is None
    assert reply.provider_data == {W: {"created_at": "2026-08-21T10:00:02.112Z",
                                       "total_duration": 1840000000, "load_duration": 21000000,
                                       "prompt_eval_duration": 210000000,
                                       "eval_duration": 1600000000}}
    assert oc.encode_response(reply) == GOLDEN_REPLY
    check_sdk_reply(oc.encode_response(reply))


def test_corpus_cloud_call_with_thinking_id_and_index() -> None:
    body = corpus("ollama__langchaingo__testcloudtoolcall")
    reply = oc.decode_response(body)
    thinking = "User asks about weather in San Francisco. Use function getWeather."
    assert reply.message.parts == (
        ReasoningPart(text=thinking, provider_data={W: thinking}),
        ToolCallPart(id="call_mo1wm122", name="getWeather",
                     arguments={"location": "San Francisco, CA"}),
    )
    assert reply.text == ""
    assert (reply.stop, reply.raw_stop) == ("tool_calls", "stop")
    assert reply.usage == Usage(input_tokens=145, output_tokens=44)
    assert reply.model == "gpt-oss:120b"
    # sent back: thinking echoed, the server's id kept, arguments as an object
    turn = Request(model="gpt-oss:120b", messages=(
        Message.user("Weather in SF?"), reply.message,
        Message(role="tool", parts=(ToolResultPart(call_id="call_mo1wm122", content="sunny",
                                                   name="getWeather"),))))
    encoded = oc.encode(turn)
    assert encoded.notes == ()
    assert encoded.body["messages"][1:] == [
        {"role": "assistant", "content": "", "thinking": thinking, "tool_calls": [
            {"id": "call_mo1wm122", "function": {"index": 0, "name": "getWeather",
                                                 "arguments": {"location": "San Francisco, CA"}}}]},
        {"role": "tool", "tool_name": "getWeather", "tool_call_id": "call_mo1wm122",
         "content": "sunny"},
    ]
    check_sdk(encoded.body)
    assert oc.encode_response(reply) == {
        **body, "message": {**body["message"], "tool_calls": body["message"]["tool_calls"]}}


@settings(max_examples=100, deadline=None)
@given(replies())
def test_reply_round_trip(reply: Reply) -> None:
    body = oc.encode_response(reply)
    assert oc.decode_response(json.loads(json.dumps(body))) == reply
    assert body["done"] is True and isinstance(body["done_reason"], str)
    check_sdk_reply(body)


@pytest.mark.parametrize(("status", "message", "cls"), [
    (400, "invalid tool call arguments", InvalidRequestError),
    (404, "model 'qwen9' not found", NotFoundError),
    (429, "too many requests", RateLimitError),
    (500, "llama runner process has terminated", ServerError),
    (502, "could not reach the cloud model", ServerError),
    (503, "server busy", OverloadedError),
    (400, "the input length exceeds the context length", ContextLengthError),
])
def test_error_bodies(status: int, message: str, cls: type[ProviderError]) -> None:
    for body in ({"error": message}, json.dumps({"error": message}),
                 json.dumps({"error": message}).encode()):
        error = oc.decode_error(status, body, {"Retry-After": "3"})
        assert type(error) is cls
        assert (error.message, error.status, error.wire, error.retry_after) == (
            message, status, W, 3.0)
        assert error.body == {"error": message}


def test_error_in_the_openai_style_of_the_v1_layer_and_plain_text() -> None:
    error = oc.decode_error(404, {"error": {"message": "model not found",
                                            "type": "not_found_error", "param": None}})
    assert isinstance(error, NotFoundError) and error.error_type == "not_found_error"
    assert error.message == "model not found"
    plain = oc.decode_error(502, b"Bad Gateway")
    assert isinstance(plain, ServerError) and plain.message == "Bad Gateway"
    assert oc.decode_error(500, "").message == "HTTP 500"


def test_decode_response_rejects_bodies_that_are_not_replies() -> None:
    with pytest.raises(WireFormatError):
        oc.decode_response({"model": "q"})
    with pytest.raises(ProviderError, match="boom"):
        oc.decode_response({"error": "boom"})
    with pytest.raises(WireFormatError):
        oc.decode_request({"model": "q", "messages": [{"role": "robot", "content": "x"}]})


def test_stop_reasons_without_calls() -> None:
    def reply(raw: str | None) -> Reply:
        body: dict[str, Any] = {"model": "q", "message": {"role": "assistant",
                                                          "content": "hi"}, "done": True}
        if raw is not None:
            body["done_reason"] = raw
        return oc.decode_response(body)

    assert reply("stop").stop == "end_turn"
    assert reply("length").stop == "max_tokens" and not reply("length").truncated_call
    assert reply("unload").stop == "other" and reply("something-new").stop == "other"
    assert (reply(None).stop, reply(None).raw_stop) == ("end_turn", None)
    calls = Reply(message=Message(role="assistant", parts=(
        ToolCallPart(id="call_q", name="f", arguments={}),)), stop="tool_calls")
    assert oc.encode_response(calls)["done_reason"] == "stop"
    long = Reply(message=Message.assistant("cut"), stop="max_tokens")
    assert oc.encode_response(long)["done_reason"] == "length"


def test_a_reply_with_calls_that_are_not_a_list_is_an_error() -> None:
    with pytest.raises(WireFormatError, match=r"message\.tool_calls: expected a list"):
        oc.decode_response({"model": "q", "message": {"role": "assistant", "tool_calls": "x"},
                            "done": True})
    line = json.dumps({"model": "q", "message": {"role": "assistant", "tool_calls": 1},
                       "done": True}) + "\n"
    with pytest.raises(WireFormatError, match=r"message\.tool_calls: expected a list"):
        events_of([line.encode()])


# --- stream


GOLDEN_STREAM = [
    {"model": "qwen3", "created_at": "2026-08-21T10:00:01.901Z",
     "message": {"role": "assistant", "content": "I'll"}, "done": False},
    {"model": "qwen3", "created_at": "2026-08-21T10:00:01.933Z",
     "message": {"role": "assistant", "content": " check both cities."}, "done": False},
    {"model": "qwen3", "created_at": "2026-08-21T10:00:02.050Z",
     "message": {"role": "assistant", "content": "", "tool_calls": [
         GOLDEN_REPLY["message"]["tool_calls"][0]]}, "done": False},
    {"model": "qwen3", "created_at": "2026-08-21T10:00:02.101Z",
     "message": {"role": "assistant", "content": "", "tool_calls": [
         GOLDEN_REPLY["message"]["tool_calls"][1]]}, "done": False},
    {"model": "qwen3", "created_at": "2026-08-21T10:00:02.112Z",
     "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop",
     "total_duration": 1840000000, "prompt_eval_count": 142, "eval_count": 41},
]


def test_golden_stream_events() -> None:
    events = events_of([ndjson(GOLDEN_STREAM)])
    paris, rome = oc.decode_response(GOLDEN_REPLY).tool_calls
    assert events[:-1] == [
        TextDelta(text="I'll"), TextDelta(text=" check both cities."),
        ToolCallStarted(index=0, id="call_k3x9a2bd", name="get_weather"),
        ToolCallDelta(index=0, fragment='{"city":"Paris"}'),
        ToolCallFinished(index=0, call=paris),
        ToolCallStarted(index=1, id="call_p0q8z1mm", name="get_weather"),
        ToolCallDelta(index=1, fragment='{"city":"Rome"}'),
        ToolCallFinished(index=1, call=rome),
    ]
    end = events[-1]
    assert isinstance(end, StreamEnd)
    whole = oc.decode_response(GOLDEN_REPLY)
    assert end.reply.message == whole.message
    assert (end.reply.stop, end.reply.raw_stop, end.reply.usage) == (
        "tool_calls", "stop", whole.usage)
    assert end.reply.provider_data == {W: {"created_at": "2026-08-21T10:00:02.112Z",
                                           "total_duration": 1840000000}}


@pytest.mark.parametrize(("name", "expected"), [
    ("ollama_stream__prism__ollama-stream-multi-tool-conversation-1",
     [("weather", {"city": "Detroit"})]),
    ("ollama_stream__prism__ollama-stream-with-tools-1",
     [("weather", {"city": "Detroit"}), ("search", {"query": "Detroit Tigers game time today"})]),
])
def test_corpus_streams_assemble(name: str, expected: list[tuple[str, Any]]) -> None:
    text: str = corpus(name)
    raw = text.encode()
    for size in (1, 7, len(raw)):
        events = events_of([raw[i:i + size] for i in range(0, len(raw), size)])
        end = events[-1]
        assert isinstance(end, StreamEnd)
        reply = end.reply
        assert [(c.name, c.arguments) for c in reply.tool_calls] == expected
        assert all(re.match(GENERATED, c.id) for c in reply.tool_calls)
        assert (reply.stop, reply.raw_stop) == ("tool_calls", "stop")
        started = [e for e in events if isinstance(e, ToolCallStarted)]
        finished = [e for e in events if isinstance(e, ToolCallFinished)]
        assert [(e.index, e.id, e.name) for e in started] == [
            (i, c.id, c.name) for i, c in enumerate(reply.tool_calls)]
        assert [e.call for e in finished] == list(reply.tool_calls)
        last = json.loads(text.splitlines()[-1])
        assert reply.usage == Usage(input_tokens=last["prompt_eval_count"],
                                    output_tokens=last["eval_count"])


def test_stream_ids_match_the_whole_body_when_ids_are_missing() -> None:
    whole = corpus("ollama__prism__ollama-generate-text-with-multiple-tools-1")
    reply = oc.decode_response(whole)
    chunks = oc.encode_stream(reply)
    stripped = []
    for chunk in chunks:
        line = json.loads(chunk)
        for call in line["message"].get("tool_calls", ()):
            del call["id"]
        stripped.append((json.dumps(line) + "\n").encode())
    end = events_of(stripped)[-1]
    assert isinstance(end, StreamEnd) and end.reply == reply


@settings(max_examples=100, deadline=None)
@given(replies(), st.lists(st.integers(min_value=0, max_value=10**6), max_size=12))
def test_stream_split_anywhere(reply: Reply, cuts: list[int]) -> None:
    lines = oc.encode_stream(reply)
    for line in lines:
        check_sdk_reply(json.loads(line))
    data = b"".join(lines)
    points = sorted({c % (len(data) + 1) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    events = events_of(chunks)
    end = events[-1]
    assert isinstance(end, StreamEnd) and end.reply == reply
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == reply.text
    reasoning = "".join(p.text for p in reply.message.parts if isinstance(p, ReasoningPart))
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == reasoning
    assert [e.call for e in events if isinstance(e, ToolCallFinished)] == list(reply.tool_calls)


def test_stream_is_split_into_several_lines() -> None:
    reply = Reply(message=Message(role="assistant", parts=(
        ReasoningPart(text="think about it", provider_data={W: "think about it"}),
        TextPart(text="Héllo wörld, ça va?"),
        ToolCallPart(id="call_a", name="f", arguments={"x": 1}),
        ToolCallPart(id="call_b", name="g", arguments={}))), stop="tool_calls", raw_stop="stop")
    lines = [json.loads(c) for c in oc.encode_stream(reply)]
    assert len(lines) == 3 + 3 + 2 + 1
    assert [ln["done"] for ln in lines] == [False] * 8 + [True]
    assert [len(ln["message"].get("tool_calls", ())) for ln in lines] == [0] * 6 + [1, 1, 0]
    assert all(ln["message"]["role"] == "assistant" for ln in lines)


def test_mid_stream_error_line_raises_after_the_events_before_it() -> None:
    data = ndjson(GOLDEN_STREAM[:2]) + b'{"error":"an error was encountered while running"}\n'
    decoder = CODEC.stream_decoder()
    events = decoder.feed(data)
    assert events == [TextDelta(text="I'll"), TextDelta(text=" check both cities.")]
    with pytest.raises(StreamError, match="encountered while running") as info:
        decoder.finish()
    assert info.value.wire == W and info.value.retryable
    with pytest.raises(StreamError):
        decoder.feed(b"{}\n")
    with pytest.raises(StreamError):
        events_of([data])


def test_mid_stream_error_is_typed_when_its_message_says_what_it_is() -> None:
    with pytest.raises(ContextLengthError):
        events_of([b'{"error":"prompt is too long for the context window"}\n'])
    with pytest.raises(OverloadedError):
        events_of([b'{"error":"server overloaded, please retry"}\n'])


def test_stream_ending_early_or_broken() -> None:
    with pytest.raises(StreamError, match="ended before"):
        events_of([ndjson(GOLDEN_STREAM[:3])])
    with pytest.raises(StreamError, match="not JSON"):
        events_of([b'{"model": "q", "mess\n'])
    # a final line without its newline still ends the stream
    data = ndjson(GOLDEN_STREAM)[:-1]
    end = events_of([data])[-1]
    assert isinstance(end, StreamEnd) and end.reply.raw_stop == "stop"


# --- parts


def test_corpus_calls_without_ids_get_stable_ids_that_are_never_sent() -> None:
    body = corpus("ollama__prism__ollama-generate-text-with-multiple-tools-1")
    reply = oc.decode_response(body)
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("search", {"query": "time of Detroit Tigers game today"}),
        ("weather", {"city": "Detroit"}),
    ]
    ids = [c.id for c in reply.tool_calls]
    assert all(re.match(GENERATED, i) for i in ids) and len(set(ids)) == 2
    assert [c.id for c in oc.decode_response(copy.deepcopy(body)).tool_calls] == ids
    other = {**body, "created_at": "2025-06-09T19:00:00Z"}
    assert {c.id for c in oc.decode_response(other).tool_calls}.isdisjoint(ids)
    assert (reply.stop, reply.raw_stop, reply.usage.input_tokens, reply.usage.output_tokens) == (
        "tool_calls", "stop", 235, 111)
    results = Message(role="tool", parts=tuple(
        ToolResultPart(call_id=c.id, content=f"r{i}", name=c.name)
        for i, c in enumerate(reply.tool_calls)))
    body_out = CODEC.encode_request(Request(model="q", messages=(
        Message.user("go"), reply.message, results)))
    assert body_out["messages"][1]["tool_calls"] == [
        {"function": {"index": 0, "name": "search",
                      "arguments": {"query": "time of Detroit Tigers game today"}}},
        {"function": {"index": 1, "name": "weather", "arguments": {"city": "Detroit"}}},
    ]
    assert body_out["messages"][2:] == [
        {"role": "tool", "tool_name": "search", "content": "r0"},
        {"role": "tool", "tool_name": "weather", "content": "r1"},
    ]
    check_sdk(body_out)
    # read back, the results are matched to the calls by name and order
    back = oc.decode_request(body_out)
    calls, answers = back.messages[1].tool_calls, back.messages[2].tool_results
    assert [a.call_id for a in answers] == [c.id for c in calls]
    assert [a.name for a in answers] == ["search", "weather"]


def test_tool_names_are_mapped_everywhere_and_back() -> None:
    tool = ToolSpec(name="math.sum", description="Add.",
                    input_schema={"type": "object", "properties": {}})
    call = ToolCallPart(id="call_1", name="math.sum", arguments={"a": 1})
    request = Request(model="q", tools=(tool,), messages=(
        Message.user("add"), Message(role="assistant", parts=(call,)),
        Message(role="tool", parts=(ToolResultPart(call_id="call_1", content="3",
                                                   name="math.sum"),))))
    encoded = oc.encode(request)
    body = encoded.body
    assert body["tools"][0]["function"]["name"] == "math_sum"
    assert body["messages"][1]["tool_calls"][0]["function"]["name"] == "math_sum"
    assert body["messages"][2]["tool_name"] == "math_sum"
    assert [(n.kind, n.subject) for n in encoded.notes] == [("tool_name_mapped", "math.sum")]
    wire_reply = {"model": "q", "message": {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "math_sum", "arguments": {"a": 2}}}]}, "done": True,
        "done_reason": "stop"}
    assert oc.decode_response(wire_reply, request=request).tool_calls[0].name == "math.sum"
    assert oc.decode_response(wire_reply).tool_calls[0].name == "math_sum"
    end = events_of([ndjson([wire_reply])], request=request)
    assert isinstance(end[0], ToolCallStarted) and end[0].name == "math.sum"
    reply = oc.decode_response(wire_reply, request=request)
    sent = oc.encode_response(reply, request=request)
    assert sent["message"]["tool_calls"][0]["function"]["name"] == "math_sum"


def test_arguments_are_always_objects_on_the_wire() -> None:
    broken = ToolCallPart.from_raw(id="call_x", name="f", raw_arguments='{"a": 1')
    listy = ToolCallPart.from_raw(id="call_y", name="f", raw_arguments="[1, 2]")
    texty = ToolCallPart.from_raw(id="call_z", name="f", raw_arguments='{"a": 1}')
    encoded = oc.encode(Request(model="q", messages=(
        Message.user("go"), Message(role="assistant", parts=(broken, listy, texty)))))
    args = [c["function"]["arguments"] for c in encoded.body["messages"][1]["tool_calls"]]
    assert args == [{}, {}, {"a": 1}]
    assert [(n.kind, n.subject) for n in encoded.notes] == [
        ("arguments_replaced", "call_x"), ("arguments_replaced", "call_y")]
    assert "did not parse" in encoded.notes[0].detail
    assert "not a JSON object" in encoded.notes[1].detail
    check_sdk(encoded.body)


def test_string_arguments_are_accepted_on_decode() -> None:
    body: dict[str, Any] = {"model": "q", "message": {
        "role": "assistant", "content": "",
        "tool_calls": [{"id": "call_s", "function": {"name": "f", "arguments": '{"a": 1}'}}]},
        "done": True, "done_reason": "stop"}
    call = oc.decode_response(body).tool_calls[0]
    assert (call.arguments, call.raw_arguments) == ({"a": 1}, '{"a": 1}')
    body["message"]["tool_calls"][0]["function"]["arguments"] = '{"a": '
    body["done_reason"] = "length"
    cut = oc.decode_response(body)
    assert (cut.stop, cut.truncated_call, cut.raw_stop) == ("max_tokens", True, "length")
    missing = {**body, "message": {"role": "assistant", "tool_calls": [{"function": {
        "name": "f"}}]}}
    assert oc.decode_response(missing).tool_calls[0].arguments == {}


def test_reasoning_and_opaque_parts_of_other_wires_are_dropped_with_notes() -> None:
    assistant = Message(role="assistant", parts=(
        ReasoningPart(text="secret", provider_data={"anthropic-messages": {"signature": "s"}}),
        ReasoningPart(text="plain reasoning"),
        OpaquePart(wire="anthropic-messages", kind="server_tool_use", payload={"id": "x"}),
        TextPart(text="done"),
    ))
    encoded = oc.encode(Request(model="q", messages=(Message.user("hi"), assistant)))
    assert encoded.body["messages"][1] == {"role": "assistant", "content": "done",
                                           "thinking": "plain reasoning"}
    assert [n.kind for n in encoded.notes] == ["reasoning_dropped", "opaque_dropped"]
    assert "anthropic-messages" in encoded.notes[0].detail


def test_every_dropped_part_is_named_by_message_and_part_index() -> None:
    foreign = ReasoningPart(text="t", provider_data={"anthropic-messages": {"signature": "s"}})
    opaque = OpaquePart(wire="gemini-generate", kind="inlineData", payload={"inlineData": {}})
    call = ToolCallPart(id="c1", name="f", arguments={})
    request = Request(model="q", messages=(
        Message(role="user", parts=(TextPart(text="a"), opaque, ReasoningPart(text="r"))),
        Message(role="assistant", parts=(TextPart(text="b"), foreign, opaque, call)),
        Message(role="tool", parts=(ToolResultPart(call_id="c1", content="x", name="f"),
                                    TextPart(text="stray"))),
    ))
    notes = [(n.kind, n.subject) for n in oc.encode(request).notes]
    assert notes == [
        ("opaque_dropped", "messages[0].parts[1]"),
        ("reasoning_dropped", "messages[0].parts[2]"),
        ("reasoning_dropped", "messages[1].parts[1]"),
        ("opaque_dropped", "messages[1].parts[2]"),
        ("part_dropped", "messages[2].parts[1]"),
    ]


def test_made_up_ids_do_not_change_when_an_earlier_call_has_an_id() -> None:
    first: dict[str, Any] = {"function": {"name": "f", "arguments": {"a": 1}}}
    second: dict[str, Any] = {"function": {"name": "g", "arguments": {}}}
    reply: dict[str, Any] = {"model": "q", "created_at": "t", "done": True,
             "message": {"role": "assistant", "content": "", "tool_calls": [first, second]}}
    plain = oc.decode_response(reply).tool_calls
    with_id = copy.deepcopy(reply)
    with_id["message"]["tool_calls"][0]["id"] = "given"
    named = oc.decode_response(with_id).tool_calls
    assert named[0].id == "given" and named[1].id == plain[1].id
    streamed = events_of([(json.dumps(reply) + "\n").encode()])[-1].reply.tool_calls
    assert [c.id for c in streamed] == [c.id for c in plain]


def test_tool_names_that_fit_give_an_empty_name_map() -> None:
    from toolwire.codecs.ollama_chat.parts import name_map

    assert name_map([ToolSpec(name="a_b-1"), ToolSpec(name="c")]).to_wire == {}
    assert name_map([ToolSpec(name="a.b")]).to_wire == {"a.b": "a_b"}


# --- schema


def test_schema_is_cut_to_what_the_server_keeps_with_a_note_per_tool() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Args", "type": "object", "additionalProperties": False,
        "$defs": {"Unit": {"type": "string", "enum": ["c", "f"], "title": "Unit"}},
        "properties": {
            "city": {"type": "string", "minLength": 1, "description": "City", "default": "Rome"},
            "unit": {"$ref": "#/$defs/Unit", "description": "Unit to use"},
            "days": {"type": "integer", "minimum": 1, "maximum": 7},
            "mode": {"const": "fast"},
            "where": {"oneOf": [{"type": "string", "format": "uri"}, {"type": "null"}]},
            "box": {"type": "object", "additionalProperties": False,
                    "properties": {"w": {"type": "number", "exclusiveMinimum": 0}},
                    "required": ["w"]},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 5}},
        },
        "required": ["city"],
    }
    original = copy.deepcopy(schema)
    tools = (ToolSpec(name="weather", input_schema=schema),
             ToolSpec(name="plain", input_schema={"type": "object", "properties": {}}))
    encoded = oc.encode(Request(model="q", tools=tools))
    assert schema == original  # rewritten on a copy
    params = encoded.body["tools"][0]["function"]["parameters"]
    assert params == {
        "type": "object",
        "$defs": {"Unit": {"type": "string", "enum": ["c", "f"], "title": "Unit"}},
        "properties": {
            "city": {"type": "string", "description": "City"},
            "unit": {"type": "string", "enum": ["c", "f"], "description": "Unit to use"},
            "days": {"type": "integer"},
            "mode": {"enum": ["fast"]},
            "where": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "box": {"type": "object", "properties": {"w": {"type": "number"}}, "required": ["w"]},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 5}},
        },
        "required": ["city"],
    }
    assert [(n.kind, n.subject) for n in encoded.notes] == [("schema_rewritten", "weather")]
    detail = encoded.notes[0].detail
    for piece in ("removed $schema at /", "removed title at /",
                  "removed additionalProperties at /", "removed minLength at /properties/city",
                  "removed default at /properties/city", "inlined $ref #/$defs/Unit",
                  "removed title at /properties/unit", "removed minimum at /properties/days",
                  "removed maximum at /properties/days", "sent const as enum at /properties/mode",
                  "sent oneOf as anyOf at /properties/where",
                  "removed format at /properties/where/oneOf/0",
                  "removed additionalProperties at /properties/box",
                  "removed exclusiveMinimum at /properties/box/properties/w"):
        assert piece in detail, piece
    assert check_sdk(encoded.body) == {"property.anyOf", "property.properties",
                                       "property.required"}


def test_recursive_and_unknown_refs_do_not_loop() -> None:
    schema = {"type": "object", "$defs": {"Node": {"type": "object", "properties": {
        "child": {"$ref": "#/$defs/Node"}}}},
        "properties": {"root": {"$ref": "#/$defs/Node"}, "x": {"$ref": "#/$defs/Missing"}}}
    encoded = oc.encode(Request(model="q", tools=(ToolSpec(name="t", input_schema=schema),)))
    props = encoded.body["tools"][0]["function"]["parameters"]["properties"]
    assert props["root"] == {"type": "object", "properties": {"child": {}}}
    assert props["x"] == {}
    detail = encoded.notes[0].detail
    assert "inlined $ref #/$defs/Node at /properties/root" in detail
    assert ("removed $ref #/$defs/Node at /properties/root/properties/child "
            "(cannot be inlined)") in detail
    assert "removed $ref #/$defs/Missing at /properties/x (cannot be inlined)" in detail


def test_top_level_ref_and_missing_type() -> None:
    schema = {"$ref": "#/definitions/A", "definitions": {"A": {
        "properties": {"a": {"type": "string"}}, "required": ["a"]}}}
    encoded = oc.encode(Request(model="q", tools=(ToolSpec(name="t", input_schema=schema),)))
    params = encoded.body["tools"][0]["function"]["parameters"]
    assert params == {"type": "object", "properties": {"a": {"type": "string"}},
                      "required": ["a"]}
    detail = encoded.notes[0].detail
    assert "inlined $ref #/definitions/A at /" in detail
    assert "removed definitions at /" in detail and "added type 'object' at /" in detail


def test_strict_is_dropped_with_a_note() -> None:
    encoded = oc.encode(Request(model="q", tools=(ToolSpec(name="f", strict=True),)))
    assert [(n.kind, n.subject) for n in encoded.notes] == [("field_dropped", "f")]
    assert "strict" not in json.dumps(encoded.body)


# --------------------------------------------------------------------------- media

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
PDF = b"%PDF-1.7\n" + b"x" * 64


def test_images_ride_in_images_and_documents_become_a_placeholder() -> None:
    from toolwire import Document, Image

    req = Request(model="llava", tools=(ToolSpec(name="shot"),), messages=(
        Message(role="user", parts=(TextPart(text="compare these"), Image.from_bytes(PNG))),
        Message(role="assistant", parts=(ToolCallPart(id="call_1", name="shot", arguments={}),)),
        Message(role="tool", parts=(ToolResultPart(call_id="call_1", name="shot", content=(
            TextPart(text="the screen:"), Image.from_bytes(PNG))),)),
    ))
    enc = CODEC.encode(req)
    assert enc.body["messages"][0]["images"] == [base64.b64encode(PNG).decode()]
    assert enc.body["messages"][2]["images"] == [base64.b64encode(PNG).decode()]
    assert enc.notes == ()
    # The SDK types ``images`` as its Image model, which it writes as the same base64 text.
    from ollama._types import Image as SdkImage

    plain = copy.deepcopy(enc.body)
    for msg in plain["messages"]:
        for text in msg.pop("images", ()):
            assert SdkImage(value=text).model_dump() == text
    check_sdk(plain)
    assert CODEC.decode_request(enc.body) == req
    with_pdf = Message(role="user", parts=(TextPart(text="read"), Document.from_bytes(PDF)))
    enc = CODEC.encode(replace(req, messages=(with_pdf,)))
    assert "omitted" in enc.body["messages"][0]["content"]
    assert [n.kind for n in enc.notes] == ["media_dropped"]
    with pytest.raises(WireFormatError, match=r"images\.0"):
        CODEC.decode_request({"model": "m", "messages": [
            {"role": "user", "content": "x", "images": ["@@"]}]})


@pytest.mark.parametrize("streamed", [False, True])
def test_a_media_history_fits_the_sdk_types(streamed: bool) -> None:
    """An image from the user and one from a tool (the PDF a placeholder text), replies whole
    or streamed; the SDK types images as its Image model, which writes the same base64."""
    from ollama._types import Image as SdkImage

    from strategies import media_history

    body = CODEC.encode_request(media_history("ollama-chat", "m", streamed=streamed))
    plain = copy.deepcopy(body)
    for msg in plain["messages"]:
        for text in msg.pop("images", ()):
            assert SdkImage(value=text).model_dump() == text
    check_sdk(plain)
    assert [len(m.get("images", ())) for m in body["messages"]] == [1, 0, 1, 0, 0]
