"""The contract every codec keeps, checked over the whole registry.

Every wire has a module with every function of the `Codec` protocol; the same conversation goes
through each codec and back unchanged; reasoning and provider blocks of another wire are dropped
with a note and never leak into the body; tool names the wire refuses are mapped the same way in
the tool list, the tool choice and the history, and mapped back on the way in.
"""

from __future__ import annotations

import inspect
import json
from typing import Any, get_args

import pytest

from toolwire.codecs import Codec, WireModule, get_codec
from toolwire.codecs.base import Note
from toolwire.codecs.registry import get_wire
from toolwire.events import StreamEnd
from toolwire.transcript import (
    JSON,
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
)
from wire_data import SECRET, data, looped, table

PROTOCOL_FUNCTIONS = sorted(  # what each wire's codec module defines itself
    name for name, value in vars(WireModule).items()
    if not name.startswith("_") and inspect.isfunction(value)
)
DERIVED_FUNCTIONS = sorted(  # what `Codec` writes once for every wire
    name for name, value in vars(Codec).items()
    if not name.startswith("_") and inspect.isfunction(value)
)

REASONING_PAYLOADS: dict[str, JSON] = table("SECRET_REASONING")
"""Each wire's reasoning as that wire sends it, with the secret in the provider-only fields."""


def decode_body(wire: str, body: dict[str, Any], *, model: str = "m") -> Request:
    """A request body read back; wires with the model in the URL (Gemini, Converse) are told
    the model and streaming as their URL would."""
    codec = get_codec(wire)
    if get_wire(wire).model_in_path:
        return codec.decode_request(body, model=model, stream=False)
    return codec.decode_request(body)


def as_json(value: Any) -> Any:
    """A body as it leaves the process: through JSON text and back."""
    return json.loads(json.dumps(value))


def make_call(wire: str, call_id: str, name: str, arguments: JSON) -> ToolCallPart:
    """A call the way ``wire`` decodes one (text arguments kept for text wires)."""
    if data(wire).TEXT_ARGUMENTS:
        raw = json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)
        return ToolCallPart.from_raw(id=call_id, name=name, raw_arguments=raw)
    return ToolCallPart(id=call_id, name=name, arguments=arguments)


WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                  "required": ["city"]},
)
ADD = ToolSpec(
    name="add",
    description="Add two integers.",
    input_schema={"type": "object",
                  "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                  "required": ["a", "b"]},
)


def conversation(wire: str) -> Request:
    """System, a task, two calls with text, their results (one an error), a last user turn."""
    return Request(
        model="m",
        system="You are careful with numbers.",
        tools=(WEATHER, ADD),
        max_tokens=512,
        messages=(
            Message.user("What is the weather in Zürich, and what is 2 + 2?"),
            Message(role="assistant", parts=(
                TextPart(text="Let me look both up."),
                make_call(wire, "call_w1", "get_weather", {"city": "Zürich"}),
                make_call(wire, "call_a2", "add", {"a": 2, "b": "two"}),
            )),
            Message(role="tool", parts=(
                ToolResultPart(call_id="call_w1", content="18°C and sunny", name="get_weather"),
                ToolResultPart(call_id="call_a2", content="b must be an integer",
                               is_error=True, name="add"),
            )),
            Message.user("Use 2 for b and go on."),
        ),
    )


# --------------------------------------------------------------------------- the registry


@pytest.mark.parametrize("wire", looped())
def test_every_wire_has_a_module_with_the_whole_protocol(wire: str) -> None:
    codec = get_codec(wire)
    assert wire == codec.WIRE == codec.module.WIRE
    assert {"encode_response", "encode_stream", "decode_request"} <= set(PROTOCOL_FUNCTIONS)
    assert {"encode_request", "stream_decoder", "decode_stream"} <= set(DERIVED_FUNCTIONS)
    for name in DERIVED_FUNCTIONS:
        assert callable(getattr(codec, name)), f"{wire} has no function {name}"
    for name in PROTOCOL_FUNCTIONS:
        function = getattr(codec.module, name, None)
        assert callable(function), f"{wire} has no function {name}"
        # the decoders come wrapped, so they raise nothing but toolwire errors
        assert inspect.unwrap(getattr(codec, name)) is function
        wanted = inspect.signature(getattr(WireModule, name))
        got = inspect.signature(function)
        for param in list(wanted.parameters.values())[1:]:  # past self
            assert param.name in got.parameters, f"{wire}.{name} lacks {param.name!r}"
            assert got.parameters[param.name].kind == param.kind, f"{wire}.{name}({param.name})"


@pytest.mark.parametrize("wire", looped())
def test_stop_reasons_map_to_normalised_values(wire: str) -> None:
    stops = get_codec(wire).STOP_REASONS
    assert stops, f"{wire} maps no stop reasons"
    valid = set(get_args(StopReason))
    assert all(isinstance(raw, str) for raw in stops)
    bad = {raw: value for raw, value in stops.items() if value not in valid}
    assert not bad, f"{wire} maps stop reasons to unknown values: {bad}"


def test_unknown_wire_names_the_wires() -> None:
    with pytest.raises(ValueError, match="anthropic-messages"):
        get_codec("anthropic")


# --------------------------------------------------------------------------- round trip


@pytest.mark.parametrize("wire", looped())
def test_a_conversation_with_calls_and_an_error_result_round_trips(wire: str) -> None:
    request = conversation(wire)
    encoded = get_codec(wire).encode(request)
    assert encoded.notes == ()
    back = decode_body(wire, as_json(encoded.body))
    assert back == request
    results = back.messages[2].tool_results
    assert [(r.call_id, r.is_error) for r in results] == [("call_w1", False), ("call_a2", True)]


@pytest.mark.parametrize("wire", looped())
def test_a_reply_with_two_calls_round_trips_whole_and_streamed(wire: str) -> None:
    codec = get_codec(wire)
    request = conversation(wire)
    reply = Reply(
        message=Message(role="assistant", parts=(
            TextPart(text="Checking both."),
            make_call(wire, "call_x1", "get_weather", {"city": "Rome"}),
            make_call(wire, "call_x2", "add", {"a": 2, "b": 2}),
        )),
        stop="tool_calls",
    )
    whole = codec.decode_response(as_json(codec.encode_response(reply, request=request)),
                                  request=request)
    events = list(codec.decode_stream(codec.encode_stream(reply, request=request),
                                      request=request))
    end = events[-1]
    assert isinstance(end, StreamEnd)
    for got in (whole, end.reply):
        assert got.stop == "tool_calls"
        assert got.text == "Checking both."
        assert [(c.id, c.name, c.arguments) for c in got.tool_calls] == [
            ("call_x1", "get_weather", {"city": "Rome"}), ("call_x2", "add", {"a": 2, "b": 2})]


# --------------------------------------------------------------------------- other wires' data


def foreign_parts(source: str) -> Request:
    """A turn made in ``source``: its reasoning, its provider data and a server-tool block."""
    marker = {"thoughtSignature": SECRET, "note": SECRET}
    return Request(
        model="m",
        max_tokens=100,
        tools=(WEATHER,),
        messages=(
            Message.user("Weather in Oslo?"),
            Message(
                role="assistant",
                parts=(
                    ReasoningPart(text="Look it up first.",
                                  provider_data={source: REASONING_PAYLOADS[source]}),
                    TextPart(text="Looking.", provider_data={source: dict(marker)}),
                    ToolCallPart(id="call_o1", name="get_weather", arguments={"city": "Oslo"},
                                 provider_data={source: dict(marker)}),
                    OpaquePart(wire=source, kind="server_tool_use",
                               payload={"type": "server_tool_use", "id": SECRET}),
                ),
                provider_data={source: dict(marker)},
            ),
            Message(role="tool", parts=(
                ToolResultPart(call_id="call_o1", content="-2°C", name="get_weather",
                               provider_data={source: dict(marker)}),
            )),
        ),
        provider_options={source: {"secret_option": SECRET}},
    )


def kinds(notes: tuple[Note, ...]) -> set[str]:
    return {n.kind for n in notes}


PAIRS = [(x, y) for x in looped() for y in looped() if x != y]


@pytest.mark.parametrize(("source", "target"), PAIRS, ids=[f"{x}->{y}" for x, y in PAIRS])
def test_another_wires_reasoning_and_blocks_are_dropped_with_a_note(
    source: str, target: str
) -> None:
    encoded = get_codec(target).encode(foreign_parts(source))
    assert {"reasoning_dropped", "opaque_dropped"} <= kinds(encoded.notes)
    back = decode_body(target, as_json(encoded.body))
    assistant = back.messages[1]
    assert not [p for p in assistant.parts if isinstance(p, ReasoningPart | OpaquePart)]
    assert assistant.text == "Looking."
    assert [(c.id, c.name, c.arguments) for c in assistant.tool_calls] == [
        ("call_o1", "get_weather", {"city": "Oslo"})]


@pytest.mark.parametrize(("source", "target"), PAIRS, ids=[f"{x}->{y}" for x, y in PAIRS])
def test_provider_data_never_leaks_into_another_wires_body(source: str, target: str) -> None:
    body = json.dumps(get_codec(target).encode_request(foreign_parts(source)),
                      ensure_ascii=False)
    assert SECRET not in body


@pytest.mark.parametrize("wire", looped())
def test_own_reasoning_goes_back_to_its_own_wire(wire: str) -> None:
    request = foreign_parts(wire)
    encoded = get_codec(wire).encode(request)
    assert "reasoning_dropped" not in kinds(encoded.notes)
    back = decode_body(wire, as_json(encoded.body))
    reasoning = [p for p in back.messages[1].parts if isinstance(p, ReasoningPart)]
    assert len(reasoning) == 1
    assert reasoning[0].provider_data == {wire: REASONING_PAYLOADS[wire]}


# --------------------------------------------------------------------------- tool names

DOTTED = ToolSpec(name="math.sum", description="Sum numbers.",
                  input_schema={"type": "object",
                                "properties": {"xs": {"type": "array",
                                                      "items": {"type": "number"}}}})


def dotted_request(wire: str) -> Request:
    return Request(
        model="m",
        max_tokens=100,
        tools=(DOTTED, WEATHER),
        tool_choice=ToolChoice(mode="tool", name="math.sum"),
        messages=(
            Message.user("Add 1 and 2."),
            Message(role="assistant", parts=(make_call(wire, "call_s1", "math.sum",
                                                       {"xs": [1, 2]}),)),
            Message(role="tool", parts=(ToolResultPart(call_id="call_s1", content="3",
                                                       name="math.sum"),)),
            Message.user("Now 3 and 4."),
        ),
    )


def names_in_body(wire: str, body: dict[str, Any]) -> dict[str, list[str]]:
    """Where tool names appear in each wire's request body: tools, choice, calls, results."""
    return data(wire).tool_names(body)  # type: ignore[no-any-return]


@pytest.mark.parametrize("wire", looped())
def test_a_dotted_tool_name_is_mapped_the_same_way_everywhere(wire: str) -> None:
    request = dotted_request(wire)
    encoded = get_codec(wire).encode(request)
    places = names_in_body(wire, as_json(encoded.body))
    sent = places["tools"][0]
    assert places["tools"][1] == "get_weather"
    for where in ("choice", "calls", "results"):
        assert all(name == sent for name in places[where]), (where, places)
    mapped = [n for n in encoded.notes if n.kind == "tool_name_mapped"]
    if sent == "math.sum":
        assert not mapped
    else:
        assert [(n.subject, sent in n.detail) for n in mapped] == [("math.sum", True)]
    assert decode_body(wire, as_json(encoded.body)).messages[1].tool_calls[0].name == sent


@pytest.mark.parametrize("wire", looped())
def test_a_call_under_the_mapped_name_decodes_to_the_users_name(wire: str) -> None:
    codec = get_codec(wire)
    request = dotted_request(wire)
    sent = names_in_body(wire, as_json(codec.encode_request(request)))["tools"][0]
    as_sent = Reply(message=Message(role="assistant", parts=(
        make_call(wire, "call_s2", sent, {"xs": [3, 4]}),)), stop="tool_calls")
    body = as_json(codec.encode_response(as_sent))
    assert codec.decode_response(body, request=request).tool_calls[0].name == "math.sum"
    assert codec.decode_response(body).tool_calls[0].name == sent
    events = list(codec.decode_stream(codec.encode_stream(as_sent), request=request))
    end = events[-1]
    assert isinstance(end, StreamEnd)
    assert end.reply.tool_calls[0].name == "math.sum"
    started = [e for e in events if type(e).__name__ == "ToolCallStarted"]
    assert [getattr(e, "name", None) for e in started] == ["math.sum"]
