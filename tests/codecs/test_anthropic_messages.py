"""The anthropic-messages codec: golden bodies, recorded replies, streams, quirks, round trips."""

from __future__ import annotations

import collections.abc
import copy
import json
import types
import typing
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

import jsonschema_rs
import pytest
import typing_extensions as te
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import Message as SDKMessage
from anthropic.types import RawMessageStreamEvent
from anthropic.types.message_create_params import (
    MessageCreateParamsNonStreaming,
    MessageCreateParamsStreaming,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter

from strategies import texts
from toolwire import (
    ContextLengthError,
    InvalidRequestError,
    MediaPart,
    Message,
    OpaquePart,
    OverloadedError,
    RateLimitError,
    ReasoningPart,
    Reply,
    Request,
    ServerError,
    StreamError,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from toolwire.codecs import get_codec
from toolwire.codecs.anthropic_messages import codec as am
from toolwire.codecs.anthropic_messages.parts import ToolNames, full_name_map
from toolwire.errors import (
    AuthenticationError,
    NotFoundError,
    PermissionDeniedError,
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
from toolwire.transcript import STOP_REASONS as CANONICAL_STOPS
from toolwire.transcript import replace
from toolwire.transcript_json import dump, from_json

W = "anthropic-messages"
CODEC = get_codec(W)
HERE = Path(__file__).parent.parent / "fixtures"
CORPUS = HERE / "corpus"


def corpus(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CORPUS / name).read_text())
    return data


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(
        f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events
    )


def run_stream(data: bytes, request: Request | None = None) -> tuple[list[Any], Reply]:
    events = list(CODEC.decode_stream([data], request=request))
    end = events[-1]
    assert isinstance(end, StreamEnd)
    return events[:-1], end.reply


# Helpers: what the official SDK's types accept, and strategies for the property tests.
#
# The SDK's request types say Iterable[...]; pydantic would never look inside those. Rebuild the
# TypedDicts with list[...] so every message, block and tool is checked, unknown keys forbidden.

_rebuilt: dict[Any, Any] = {}


def _is_model(tp: Any) -> bool:
    if isinstance(tp, type):
        return issubclass(tp, BaseModel)
    origin, args = get_origin(tp), get_args(tp)
    if origin in (typing.Annotated, te.Annotated):
        return _is_model(args[0])
    return origin in (Union, types.UnionType) and all(_is_model(a) for a in args)


def _listify(tp: Any) -> Any:
    if te.is_typeddict(tp):
        if tp not in _rebuilt:
            hints = te.get_type_hints(tp, include_extras=True)
            fields = {}
            for key, hint in hints.items():
                if get_origin(hint) in (te.Required, te.NotRequired):
                    hint = get_args(hint)[0]
                wrap = te.Required if key in tp.__required_keys__ else te.NotRequired
                fields[key] = wrap[_listify(hint)]
            new = te.TypedDict(tp.__name__, fields)  # type: ignore[operator]
            if hasattr(tp, "__pydantic_config__"):
                new.__pydantic_config__ = tp.__pydantic_config__
            _rebuilt[tp] = new
        return _rebuilt[tp]
    origin, args = get_origin(tp), get_args(tp)
    if origin is None or origin in (te.Literal, typing.Literal):
        return tp
    if origin is collections.abc.Iterable or getattr(origin, "__name__", "") == "SequenceNotStr":
        return list[_listify(args[0])]  # type: ignore[misc]
    if origin in (Union, types.UnionType):
        # MessageContentParam also admits the reply models (ContentBlock); a request body we
        # build must fit the param types themselves.
        kept = [a for a in args if not _is_model(a)]
        return Union[tuple(_listify(a) for a in kept or args)]  # noqa: UP007
    if origin in (typing.Annotated, te.Annotated):
        return te.Annotated[(_listify(args[0]), *tp.__metadata__)]
    if origin in (te.Required, te.NotRequired):
        return origin[_listify(args[0])]
    if origin in (list, dict):
        return origin[tuple(_listify(a) for a in args)]
    return tp


CREATE = TypeAdapter(_listify(MessageCreateParamsNonStreaming))
REPLY_MODEL = TypeAdapter(SDKMessage)
STREAM_EVENT = TypeAdapter(RawMessageStreamEvent)


def check_request_body(body: dict[str, Any]) -> None:
    # The streaming params type differs from the other only in `stream: true`.
    assert set(get_type_hints(MessageCreateParamsStreaming)) == set(
        get_type_hints(MessageCreateParamsNonStreaming))
    plain = {k: v for k, v in body.items() if k != "stream"}
    assert body.get("stream", False) in (True, False)
    validated = CREATE.validate_python(copy.deepcopy(plain), extra="forbid")
    assert validated == plain  # nothing coerced on the way
    for tool in body.get("tools", []):
        if "input_schema" in tool:
            assert jsonschema_rs.meta.is_valid(tool["input_schema"]), tool


# Strategies for the property tests of the request, reply and stream sections.
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
signatures = st.text(alphabet=_B64, min_size=8, max_size=40)
ids = st.builds("{}_{}".format, st.sampled_from(["toolu", "srvtoolu"]),
                st.text(alphabet=_B64[:62], min_size=6, max_size=20))


@st.composite
def thinking_parts(draw: st.DrawFn) -> ReasoningPart:
    if draw(st.booleans()):
        block = {"type": "redacted_thinking", "data": draw(signatures)}
        return ReasoningPart(text="", provider_data={W: block})
    text = draw(st.one_of(texts, st.just("")))
    block = {"type": "thinking", "thinking": text, "signature": draw(signatures)}
    return ReasoningPart(text=text, provider_data={W: block})


@st.composite
def server_parts(draw: st.DrawFn) -> OpaquePart:
    sid = draw(ids)
    if draw(st.booleans()):
        payload = {"type": "server_tool_use", "id": sid, "name": "web_search",
                   "input": {"query": draw(texts)}}
    else:
        payload = {"type": "web_search_tool_result", "tool_use_id": sid, "content": [
            {"type": "web_search_result", "url": "https://example.org/", "title": draw(texts),
             "encrypted_content": draw(signatures), "page_age": None}]}
    return OpaquePart(wire=W, kind=payload["type"], payload=payload)


# Lighter than the shared regex-based strategies, so the three property tests stay fast.
_keys = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
_names = st.builds("{}{}".format, st.sampled_from("abcdefgh"),
                   st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", max_size=12))
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), st.text(max_size=20))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=3)), max_leaves=6)
_args = st.dictionaries(_keys, _values, max_size=4)


@st.composite
def object_calls(draw: st.DrawFn) -> ToolCallPart:
    cid, name, args = draw(ids), draw(_names), draw(_args)
    pd = None
    if draw(st.booleans()):
        pd = {W: {"type": "tool_use", "id": cid, "name": name, "input": args,
                  "caller": {"type": "direct"}}}
    return ToolCallPart(id=cid, name=name, arguments=args, provider_data=pd)


@st.composite
def rounds(draw: st.DrawFn) -> list[Message]:
    """An assistant turn (maybe thinking, maybe text, 1-3 calls) and the tool message after it."""
    calls = draw(st.lists(object_calls(), min_size=1, max_size=3, unique_by=lambda c: c.id))
    lead: list[Any] = draw(st.lists(thinking_parts(), max_size=2))
    if draw(st.booleans()):
        lead.append(TextPart(text=draw(texts)))
    results = [ToolResultPart(call_id=c.id, content=draw(texts), is_error=draw(st.booleans()),
                              name=c.name) for c in calls]
    return [Message(role="assistant", parts=(*lead, *calls)),
            Message(role="tool", parts=tuple(results))]


@st.composite
def specs(draw: st.DrawFn) -> ToolSpec:
    props = draw(st.lists(_keys, max_size=3, unique=True))
    schema = {"type": "object", "properties": {p: {"type": "string"} for p in props},
              "required": props[:1], "additionalProperties": False}
    return ToolSpec(name=draw(_names), description=draw(st.one_of(st.just(""), texts)),
                    input_schema=schema, strict=draw(st.booleans()))


@st.composite
def requests(draw: st.DrawFn) -> Request:
    messages: list[Message] = [Message.user(draw(texts))]
    for _ in range(draw(st.integers(0, 2))):
        messages += draw(rounds())
        if draw(st.booleans()):
            extra: list[Any] = [TextPart(text=t) for t in draw(st.lists(texts, min_size=1,
                                                                          max_size=2))]
            if draw(st.booleans()):
                extra.append(MediaPart(kind="image", media_type="image/png",
                                       url="https://example.org/a.png"))
            messages.append(Message(role="user", parts=tuple(extra)))
        else:
            messages += [Message.assistant(draw(texts)), Message.user(draw(texts))]
    choice = draw(st.one_of(
        st.none(),
        st.builds(ToolChoice, mode=st.sampled_from(["auto", "required"]),
                  parallel=st.sampled_from([None, True, False])),
        st.builds(ToolChoice, mode=st.just("tool"), name=_names,
                  parallel=st.sampled_from([None, False])),
        st.just(ToolChoice(mode="none")),
    ))
    options = draw(st.sampled_from([None, {W: {"metadata": {"user_id": "u-1"}}},
                                    {W: {"thinking": {"type": "adaptive"}}}]))
    return Request(
        model=draw(st.sampled_from(["claude-haiku-4-5", "claude-sonnet-4-5"])),
        system=draw(st.one_of(st.none(), texts)),
        messages=tuple(messages),
        tools=tuple(draw(st.lists(specs(), max_size=3))),
        tool_choice=choice,
        max_tokens=draw(st.integers(1, 64000)),
        stream=draw(st.booleans()),
        provider_options=options,
    )


_STOPS = {"end_turn": "end_turn", "stop_sequence": "stop_sequence", "pause_turn": "pause_turn",
          "refusal": "refusal", "max_tokens": "max_tokens",
          "model_context_window_exceeded": "context_window_exceeded"}


@st.composite
def replies(draw: st.DrawFn) -> Reply:
    pool = st.one_of(thinking_parts(), server_parts(), object_calls(),
                     st.builds(TextPart, text=st.one_of(texts, st.just(""))))
    parts = draw(st.lists(pool, max_size=5))
    extras: dict[str, Any] = {}
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    truncated = False
    if calls and isinstance(parts[-1], ToolCallPart) and draw(st.booleans()):
        raw, stop, truncated = "max_tokens", "max_tokens", True
    elif calls:
        raw, stop = "tool_use", "tool_calls"
    else:
        raw = draw(st.sampled_from(sorted(_STOPS)))
        stop = _STOPS[raw]
        if raw == "stop_sequence":
            extras["stop_sequence"] = "###"
    if draw(st.booleans()):
        extras["usage"] = {"service_tier": "standard",
                           "server_tool_use": {"web_search_requests": draw(st.integers(0, 3)),
                                               "web_fetch_requests": 0}}
    base, read, write, out = (draw(st.integers(0, 5000)) for _ in range(4))
    return Reply(
        message=Message(role="assistant", parts=tuple(parts)),
        stop=stop, raw_stop=raw, truncated_call=truncated,
        usage=Usage(input_tokens=base + read + write, output_tokens=out, cache_read_tokens=read,
                    cache_write_tokens=write, reasoning_tokens=draw(st.integers(0, out))),
        model="claude-haiku-4-5",
        id="msg_" + draw(st.text(alphabet=_B64[:62], min_size=8, max_size=8)),
        provider_data={W: extras} if extras else None,
    )


# --- codec


def test_module_contract() -> None:
    assert CODEC.module is am
    assert am.WIRE == W
    for name in ("encode", "decode_request", "decode_response", "encode_response",
                 "encode_stream", "StreamDecoder", "decode_error", "encode_error", "check_body"):
        assert callable(getattr(am, name))
    for name in ("encode_request", "stream_decoder", "decode_stream"):
        assert callable(getattr(CODEC, name))
        assert not hasattr(am, name), f"{name} is derived once for every wire, in Codec"
    assert set(am.STOP_REASONS) == {"end_turn", "tool_use", "max_tokens", "stop_sequence",
                                    "pause_turn", "refusal", "model_context_window_exceeded",
                                    "compaction"}
    assert set(am.STOP_REASONS.values()) <= set(CANONICAL_STOPS)


# --- request


def test_conformance_adapter_checks_arrays_eagerly() -> None:
    assert "generator" not in json.dumps(CREATE.core_schema, default=str)
    body = {"model": "m", "max_tokens": 5,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "x", "oops": 1}]}]}
    with pytest.raises(ValueError):
        CREATE.validate_python(body, extra="forbid")


WEATHER = ToolSpec(
    name="forecast",
    description="Forecast for one town.",
    input_schema={"type": "object", "properties": {"town": {"type": "string"}},
                  "required": ["town"], "additionalProperties": False},
    strict=True,
)


def test_golden_first_request() -> None:
    req = Request(model="claude-haiku-4-5", system="You answer about weather.",
                  messages=[Message.user("Rain in Lyon or Graz?")], tools=[WEATHER],
                  tool_choice=ToolChoice(mode="auto"), max_tokens=800)
    enc = am.encode(req)
    assert enc.body == {
        "model": "claude-haiku-4-5",
        "max_tokens": 800,
        "system": "You answer about weather.",
        "messages": [{"role": "user", "content": "Rain in Lyon or Graz?"}],
        "tools": [{"name": "forecast", "description": "Forecast for one town.",
                   "input_schema": dict(WEATHER.input_schema), "strict": True}],
        "tool_choice": {"type": "auto"},
    }
    assert enc.notes == ()
    check_request_body(enc.body)
    assert am.decode_request(enc.body) == req


def test_golden_follow_up_request_echoes_turn_and_sends_results_first() -> None:
    thinking = {"type": "thinking", "thinking": "Two towns.", "signature": "c2ln"}
    assistant = Message(role="assistant", parts=(
        ReasoningPart(text="Two towns.", provider_data={W: thinking}),
        TextPart(text="Checking both."),
        ToolCallPart(id="toolu_lyon", name="forecast", arguments={"town": "Lyon"}),
        ToolCallPart(id="toolu_graz", name="forecast", arguments={"town": "Graz"}),
    ))
    results = Message(role="tool", parts=(
        ToolResultPart(call_id="toolu_lyon", content="light rain", name="forecast"),
        ToolResultPart(call_id="toolu_graz", content="service down", is_error=True,
                       name="forecast"),
    ))
    req = Request(model="claude-haiku-4-5", max_tokens=800, tools=[WEATHER], messages=[
        Message.user("Rain in Lyon or Graz?"), assistant, results,
        Message.user("Also, keep it short."),
    ])
    body = CODEC.encode_request(req)
    assert body["messages"] == [
        {"role": "user", "content": "Rain in Lyon or Graz?"},
        {"role": "assistant", "content": [
            thinking,
            {"type": "text", "text": "Checking both."},
            {"type": "tool_use", "id": "toolu_lyon", "name": "forecast", "input": {"town": "Lyon"}},
            {"type": "tool_use", "id": "toolu_graz", "name": "forecast", "input": {"town": "Graz"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_lyon", "content": "light rain"},
            {"type": "tool_result", "tool_use_id": "toolu_graz", "content": "service down",
             "is_error": True},
            {"type": "text", "text": "Also, keep it short."},
        ]},
    ]
    check_request_body(body)
    back = am.decode_request(body)
    assert back == req  # the merged user message splits into the tool and user messages again
    assert body["messages"][1]["content"][0] is not thinking  # a copy, not the stored object


def test_decode_result_content_as_blocks_and_missing_content() -> None:
    body = {"model": "m", "max_tokens": 9, "messages": [
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_a", "name": "f", "input": {}},
            {"type": "tool_use", "id": "toolu_b", "name": "g", "input": {}},
            {"type": "tool_use", "id": "toolu_c", "name": "h", "input": {}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a",
             "content": [{"type": "text", "text": "timeout after 10s"}], "is_error": True},
            {"type": "tool_result", "tool_use_id": "toolu_b"},
            {"type": "tool_result", "tool_use_id": "toolu_c",
             "cache_control": {"type": "ephemeral"},
             "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]},
        ]},
    ]}
    req = am.decode_request(body)
    a, b, c = req.messages[1].parts
    assert req.messages[1].role == "tool"
    assert a == ToolResultPart(call_id="toolu_a", content="timeout after 10s", is_error=True,
                               name="f")
    assert b == ToolResultPart(call_id="toolu_b", content="", name="g")
    assert isinstance(c, ToolResultPart) and c.content == "one\ntwo" and c.name == "h"
    again = CODEC.encode_request(req)
    # Nothing lost: block lists and cache_control come back exactly; the lone text block and
    # the missing content come back in their simplest equivalent form.
    assert again["messages"][1]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "timeout after 10s",
         "is_error": True},
        {"type": "tool_result", "tool_use_id": "toolu_b"},
        body["messages"][1]["content"][2],
    ]
    check_request_body(again)


def test_max_tokens_default_and_note() -> None:
    enc = am.encode(Request(model="m", messages=[Message.user("hi")]))
    assert enc.body["max_tokens"] == am.DEFAULT_MAX_TOKENS == 4096
    assert [n.kind for n in enc.notes] == ["max_tokens_defaulted"]


def test_temperature_is_dropped_with_a_note_unless_forced() -> None:
    enc = am.encode(Request(model="m", max_tokens=5, temperature=0.2, messages=[Message.user("x")]))
    assert "temperature" not in enc.body
    assert [n.kind for n in enc.notes] == ["field_dropped"]
    forced = am.encode(Request(model="m", max_tokens=5, temperature=0.2,
                               messages=[Message.user("x")],
                               provider_options={W: {"temperature": 0.2}}))
    assert forced.body["temperature"] == 0.2 and forced.notes == ()


@pytest.mark.parametrize(("choice", "wire"), [
    (ToolChoice(mode="auto"), {"type": "auto"}),
    (ToolChoice(mode="auto", parallel=False), {"type": "auto", "disable_parallel_tool_use": True}),
    (ToolChoice(mode="required"), {"type": "any"}),
    (ToolChoice(mode="required", parallel=True), {"type": "any",
                                                  "disable_parallel_tool_use": False}),
    (ToolChoice(mode="tool", name="forecast", parallel=False),
     {"type": "tool", "name": "forecast", "disable_parallel_tool_use": True}),
    (ToolChoice(mode="none"), {"type": "none"}),
])
def test_tool_choice_both_ways(choice: ToolChoice, wire: dict[str, Any]) -> None:
    req = Request(model="m", max_tokens=5, tools=[WEATHER], tool_choice=choice,
                  messages=[Message.user("x")])
    body = CODEC.encode_request(req)
    assert body["tool_choice"] == wire
    check_request_body(body)
    assert am.decode_request(body).tool_choice == choice


def test_tool_choice_cases_the_wire_cannot_say() -> None:
    enc = am.encode(Request(model="m", max_tokens=5, tools=[WEATHER], messages=[Message.user("x")],
                            tool_choice=ToolChoice(mode="none", parallel=False)))
    assert enc.body["tool_choice"] == {"type": "none"}
    assert [n.kind for n in enc.notes] == ["choice_changed"]
    enc = am.encode(Request(model="m", max_tokens=5, tools=[WEATHER], messages=[Message.user("x")],
                            tool_choice=ToolChoice(mode="tool")))
    assert enc.body["tool_choice"] == {"type": "any"}
    assert [n.kind for n in enc.notes] == ["choice_changed"]


def test_reasoning_and_opaque_of_other_wires_are_dropped_with_notes() -> None:
    req = Request(model="m", max_tokens=5, messages=[Message.user("x"), Message(role="assistant",
        parts=(
            ReasoningPart(text="plain thoughts"),
            ReasoningPart(text="", provider_data={"openai-responses": {"id": "rs_1"}}),
            OpaquePart(wire="gemini-generate", kind="executableCode", payload={"code": "1"}),
            TextPart(text=""),
            TextPart(text="done"),
        ))])
    enc = am.encode(req)
    assert enc.body["messages"][1] == {"role": "assistant", "content": "done"}
    assert sorted(n.kind for n in enc.notes) == ["empty_text_dropped", "opaque_dropped",
                                                 "reasoning_dropped", "reasoning_dropped"]


def test_dropped_parts_are_named_by_message_and_part() -> None:
    req = Request(model="m", max_tokens=5, messages=(
        Message.user("x"),
        Message(role="assistant", parts=(
            TextPart(text="a"),
            ReasoningPart(text="r", provider_data={"openai-chat": {"reasoning": "r"}}),
            ToolCallPart(id="c1", name="f", arguments={}),
            OpaquePart(wire="gemini-generate", kind="executableCode", payload={"code": "1"}),
        )),
        Message(role="tool", parts=(
            OpaquePart(wire="openai-responses", kind="web_search_call", payload={}),
            ToolResultPart(call_id="c1", content="ok"),
        )),
    ))
    enc = am.encode(req)
    assert enc.body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "ok"}]
    assert [(n.kind, n.subject) for n in enc.notes] == [
        ("reasoning_dropped", "messages[1].parts[1]"),
        ("opaque_dropped", "messages[1].parts[3]"),
        ("opaque_dropped", "messages[2].parts[0]"),  # its place in the message, not on the wire
    ]


def test_options_for_other_wires_are_noted_once_per_setting() -> None:
    req = Request(model="m", max_tokens=5, messages=(Message.user("q"),), provider_options={
        W: {"top_k": 5}, "openai-chat": {"seed": 1, "top_p": 0.5}, "ollama-chat": {"x": 1}})
    enc = am.encode(req)
    assert enc.body["top_k"] == 5 and "seed" not in enc.body
    assert [(n.kind, n.subject, n.detail) for n in enc.notes] == [
        ("field_dropped", "provider_options['openai-chat']",
         f"'seed' is set for openai-chat only; not sent to {W}"),
        ("field_dropped", "provider_options['openai-chat']",
         f"'top_p' is set for openai-chat only; not sent to {W}"),
        ("field_dropped", "provider_options['ollama-chat']",
         f"'x' is set for ollama-chat only; not sent to {W}"),
    ]


def test_system_block_list_keeps_cache_control() -> None:
    system = [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}},
              {"type": "text", "text": "Use metric units."}]
    body = {"model": "m", "max_tokens": 5, "system": system,
            "messages": [{"role": "user", "content": "hi"}]}
    req = am.decode_request(body)
    assert req.system == "Be brief.\nUse metric units."
    assert CODEC.encode_request(req) == body
    changed = CODEC.encode_request(Request(**{**_fields(req), "system": "New prompt."}))
    assert changed["system"] == "New prompt."
    plain = am.decode_request({**body, "system": [{"type": "text", "text": "Only this."}]})
    assert plain.system == "Only this." and plain.provider_options is None


def _fields(req: Request) -> dict[str, Any]:
    return {f: getattr(req, f) for f in Request.__struct_fields__}


def test_unknown_keys_and_tool_settings_survive_a_round_trip() -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 2048,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "metadata": {"user_id": "u-7"},
        "stop_sequences": ["END"],
        "tools": [
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 2},
            {"name": "forecast", "description": "d", "input_schema": {"type": "object"},
             "cache_control": {"type": "ephemeral"}},
        ],
        "messages": [{"role": "user", "content": [
            {"type": "text", "text": "look", "cache_control": {"type": "ephemeral"}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "iVBORw0KGgo="}},
        ]}],
    }
    req = am.decode_request(body)
    assert [t.name for t in req.tools] == ["forecast"]
    assert req.provider_options is not None
    assert req.provider_options[W]["thinking"] == body["thinking"]
    parts = req.messages[0].parts
    assert isinstance(parts[0], TextPart) and parts[0].text == "look"
    assert isinstance(parts[1], MediaPart) and parts[1].kind == "image"
    assert parts[1].data == b"\x89PNG\r\n\x1a\n"
    assert CODEC.encode_request(req) == body
    check_request_body(body)
    # A tool added later is appended after the kept ones.
    more = Request(**{**_fields(req), "tools": (ToolSpec(name="later"), *req.tools)})
    assert [t["name"] for t in CODEC.encode_request(more)["tools"]] == ["web_search", "forecast",
                                                                   "later"]
    fewer = Request(**{**_fields(req), "tools": ()})
    assert CODEC.encode_request(fewer)["tools"] == body["tools"][:1]


def test_system_messages_mid_conversation() -> None:
    req = Request(model="claude-opus-4-8", max_tokens=5, messages=[
        Message.user("a"), Message(role="system", parts=(TextPart(text="Now be terse."),)),
    ])
    body = CODEC.encode_request(req)
    assert body["messages"][1] == {"role": "system", "content": "Now be terse."}
    check_request_body(body)
    assert am.decode_request(body) == req
    # a model that takes no system message here gets its text as the user's
    other = CODEC.encode_request(Request(**{**_fields(req), "model": "claude-sonnet-4-5"}))
    assert [m["role"] for m in other["messages"]] == ["user"]
    mixed = am.encode(Request(model="m", max_tokens=5, messages=[Message(role="system", parts=(
        TextPart(text="a"), TextPart(text=""), ReasoningPart(text="r")))]))
    assert mixed.body["messages"] == [{"role": "system", "content": "a"}]
    assert sorted(n.kind for n in mixed.notes) == ["empty_text_dropped", "part_dropped"]


def test_decode_request_rejects_non_bodies() -> None:
    with pytest.raises(WireFormatError):
        am.decode_request({"max_tokens": 3})
    with pytest.raises(WireFormatError):
        am.decode_request({"model": "m", "messages": [{"role": "robot", "content": "x"}]})


def test_decode_request_takes_model_and_stream_a_url_gave_when_the_body_has_none() -> None:
    bare: dict[str, Any] = {"max_tokens": 3, "messages": [{"role": "user", "content": "hi"}]}
    req = am.decode_request(bare, model="claude-x", stream=True)
    assert (req.model, req.stream) == ("claude-x", True)
    assert am.decode_request({**bare, "model": "m"}).stream is False  # the API's default
    given = am.decode_request({**bare, "model": "m", "stream": False}, model="other", stream=True)
    assert (given.model, given.stream) == ("m", False)  # the body wins when it says
    with pytest.raises(WireFormatError):
        am.decode_request(bare, stream=True)  # no model anywhere


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests())
def test_property_request_round_trip_and_sdk_types(req: Request) -> None:
    enc = am.encode(req)
    assert enc.notes == ()
    check_request_body(enc.body)
    assert am.decode_request(enc.body) == req
    assert CODEC.encode_request(am.decode_request(enc.body)) == enc.body


# --- reply


def _reply_body(content: list[dict[str, Any]], stop: str | None = "end_turn",
                **extra: Any) -> dict[str, Any]:
    return {"id": "msg_x", "type": "message", "role": "assistant", "model": "claude-x",
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}, **extra}


def test_usage_counts_cached_prompt_tokens() -> None:
    reply = am.decode_response(_reply_body([{"type": "text", "text": "hi"}], usage={
        "input_tokens": 12, "output_tokens": 40, "cache_creation_input_tokens": 100,
        "cache_read_input_tokens": 900, "output_tokens_details": {"thinking_tokens": 25}}))
    assert reply.usage == Usage(input_tokens=1012, output_tokens=40, cache_read_tokens=900,
                                cache_write_tokens=100, reasoning_tokens=25)
    assert reply.provider_data is None
    back = am.encode_response(reply)["usage"]
    assert back["input_tokens"] == 12 and back["cache_read_input_tokens"] == 900


@pytest.mark.parametrize(("raw", "stop"), [
    ("end_turn", "end_turn"), ("stop_sequence", "stop_sequence"), ("pause_turn", "pause_turn"),
    ("refusal", "refusal"), ("max_tokens", "max_tokens"),
    ("model_context_window_exceeded", "context_window_exceeded"),
    ("something_new", "other"), (None, "end_turn"), ("tool_use", "end_turn"),
])
def test_stop_reasons_without_calls(raw: str | None, stop: str) -> None:
    reply = am.decode_response(_reply_body([{"type": "text", "text": "t"}], stop=raw))
    assert (reply.stop, reply.raw_stop, reply.truncated_call) == (stop, raw, False)


def test_refusal_keeps_stop_details() -> None:
    details = {"type": "refusal", "category": "cyber", "explanation": None}
    reply = am.decode_response(_reply_body([], stop="refusal", stop_details=details))
    assert reply.stop == "refusal"
    assert reply.provider_data == {W: {"stop_details": details}}
    assert am.encode_response(reply)["stop_details"] == details


def test_calls_win_over_the_stop_signal_and_cut_off_calls_are_flagged() -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"a": 1}}
    said_end = am.decode_response(_reply_body([call], stop="end_turn"))
    assert said_end.stop == "tool_calls" and said_end.raw_stop == "end_turn"
    cut = am.decode_response(_reply_body([{"type": "text", "text": "x"}, call], stop="max_tokens"))
    assert (cut.stop, cut.truncated_call) == ("max_tokens", True)
    done_then_text = am.decode_response(
        _reply_body([call, {"type": "text", "text": "and then"}], stop="max_tokens"))
    assert (done_then_text.stop, done_then_text.truncated_call) == ("tool_calls", False)
    as_text = am.decode_response(_reply_body([{**call, "input": '{"a": 1'}], stop="max_tokens"))
    c = as_text.tool_calls[0]
    assert as_text.truncated_call and c.arguments is None and c.raw_arguments == '{"a": 1'
    assert c.parse_error is not None


def test_pause_turn_with_server_tools_round_trips() -> None:
    content = [{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
                "input": {"query": "tides"}}]
    reply = am.decode_response(_reply_body(content, stop="pause_turn"))
    assert reply.stop == "pause_turn" and reply.tool_calls == ()
    assert am.encode_response(reply)["content"] == content


def test_string_input_and_missing_ids_decode_leniently() -> None:
    body = _reply_body([
        {"type": "tool_use", "name": "f", "input": '{"q": "x"}'},
        {"type": "tool_use", "id": "", "name": "g", "input": ""},
    ], stop="tool_use")
    r1, r2 = am.decode_response(body), am.decode_response(body)
    a, b = r1.tool_calls
    assert a.arguments == {"q": "x"} and a.raw_arguments is None
    assert b.arguments == {} and a.id != b.id and a.id.startswith("call_")
    assert r1 == r2  # the same reply gives the same ids


def test_error_bodies_are_not_replies() -> None:
    """An error body sent as a reply raises the typed error its type is sent with."""
    with pytest.raises(ServerError, match="api_error: x"):
        am.decode_response({"type": "error", "error": {"type": "api_error", "message": "x"}})
    with pytest.raises(WireFormatError):
        am.decode_response({"content": "text"})


def test_foreign_reasoning_renders_as_unsigned_thinking_in_replies() -> None:
    reply = Reply(message=Message(role="assistant", parts=(ReasoningPart(text="hmm"),
                                                           TextPart(text="ok"))),
                  id="msg_1", model="m")
    body = am.encode_response(reply)
    assert body["content"][0] == {"type": "thinking", "thinking": "hmm", "signature": ""}
    REPLY_MODEL.validate_python(body, extra="forbid")


CALLS: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
    "anthropic__openllmetry__test-anthropic-tools-legacy.json": [
        ("toolu_012r6TBCWjRHG71j6zruYyUL", "get_weather",
         {"location": "New York, NY", "unit": "fahrenheit"}),
        ("toolu_01SkeBKkLCNYWNuivqFerGDd", "get_time", {"timezone": "America/New_York"}),
    ],
    "anthropic__openllmetry__test-tool-calls-anthropic-text-block.json": [
        ("toolu_016q9vtSd8CY2vnZSpEp1j4o", "get_weather", {"location": "San Francisco"}),
    ],
    "anthropic__prism__anthropic-generate-text-with-required-tool-call-1.json": [
        ("toolu_01TZFvQ9JmBsRNEJkRjvp2Qe", "weather", {"city": "New York"}),
        ("toolu_01H2pNJwnhDdR2RtZt1i8XHj", "search", {"query": "current top news"}),
    ],
    "anthropic__prism__anthropic-text-with-extending-thinking-and-tool-calls-1.json": [
        ("toolu_01BNmk7Tacn3t45rgeZimYZV", "search",
         {"query": "Detroit Tigers baseball game time today"}),
    ],
    "anthropic__pydantic-ai__test-anthropic-deferred-capability-without-tool-search-across-models-c.json": [  # noqa: E501
        ("toolu_01Pjc5yo2Cj8R3rHkS5CXB94", "load_capability", {"id": "refunds"}),
    ],
    "anthropic__pydantic-ai__test-anthropic-memory-tool.json": [
        ("toolu_01YC8RhZeDTZRbb8n1gUFTmb", "memory", {"command": "view", "path": "/memories"}),
    ],
    "anthropic__pydantic-ai__test-anthropic-native-tool-search-round-trip.json": [
        ("toolu_016VSqyszw35EYg7XCuPZ8cg", "get_exchange_rate",
         {"from_currency": "USD", "to_currency": "EUR"}),
    ],
    "anthropic__pydantic-ai__test-anthropic-opus-46-adaptive-thinking-accepts-tool-output-unified.json": [  # noqa: E501
        ("toolu_01Ntv7EChXSFhgkJcMTHdksQ", "final_result", {"city": "Paris", "country": "France"}),
    ],
    "anthropic__pydantic-ai__test-anthropic-tool-with-thinking.json": [
        ("toolu_01YGzqpRE16Vricda3Aqcejo", "get_user_country", {}),
    ],
    "anthropic__pydantic-ai__test-mixed-tools-no-output.json": [
        ("toolu_01BBTvQnxdxk7vPHD1ytXyGs", "get_weather", {"city": "Denver"}),
        ("toolu_017Q9pGQ9Hx126pyyLLnVqJV", "get_elevation", {"city": "Denver"}),
    ],
    "anthropic__pydantic-ai__test-multiple-parallel-tool-calls.json": [
        ("toolu_0167cfEnoQaPviGdVXA95zcu", "retrieve_entity_info", {"name": "Alice"}),
        ("toolu_01EEe2V5HD1Ac4rKiUR4HD2T", "retrieve_entity_info", {"name": "Bob"}),
        ("toolu_01XFyAjstT3966qvRynZyVPo", "retrieve_entity_info", {"name": "Charlie"}),
        ("toolu_013mnQZbgtK2oe3Mo3XKJsx3", "retrieve_entity_info", {"name": "Daisy"}),
    ],
    "anthropic__pydantic-ai__test-tool-choice-matrix-required-anthropic.json": [
        ("toolu_01Dxp8hdnkA8bsrVJJ8LB9q1", "get_weather", {"city": "Paris"}),
    ],
    "anthropic_stream__openllmetry__test-anthropic-tools-streaming-legacy.json": [
        ("toolu_014x5X91kx3fvdhpLvwXZWE2", "get_weather",
         {"location": "San Francisco, CA", "unit": "celsius"}),
        ("toolu_0121kXsENLvoDZ72LCuAnCCz", "get_time", {"timezone": "America/Los_Angeles"}),
    ],
    "anthropic_stream__prism__anthropic-stream-with-tools-1.json": [
        ("toolu_014cZKakAghgvhi4Y99XBUru", "search",
         {"query": "Detroit Tigers baseball game today time schedule"}),
    ],
    "anthropic_stream__pydantic-ai__test-anthropic-native-tool-search-streaming.json": [
        ("toolu_01EFn5wTNBYA8Reni8rbmnHT", "get_exchange_rate",
         {"from_currency": "USD", "to_currency": "EUR"}),
    ],
}


def test_corpus_list_is_complete() -> None:
    on_disk = {p.name for p in CORPUS.glob("anthropic*.json")}
    assert on_disk == set(CALLS)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_corpus_reply_decodes(name: str) -> None:
    entry = corpus(name)
    if entry["streaming"]:
        events, reply = run_stream(entry["body"].encode())
        finished = [e.call for e in events if isinstance(e, ToolCallFinished)]
        assert finished == list(reply.tool_calls)
        started = [(e.id, e.name) for e in events if isinstance(e, ToolCallStarted)]
        assert started == [(c.id, c.name) for c in reply.tool_calls]
        text = "".join(e.text for e in events if isinstance(e, TextDelta))
        assert text == reply.text and text
        for i, call in enumerate(reply.tool_calls):
            fragments = [e.fragment for e in events
                         if isinstance(e, ToolCallDelta) and e.index == i]
            assert "" not in fragments and json.loads("".join(fragments)) == call.arguments
    else:
        reply = am.decode_response(entry["body"])
        REPLY_MODEL.validate_python(entry["body"])
        assert reply.id == entry["body"]["id"] and reply.model == entry["body"]["model"]
        # Re-encoding gives the same blocks back.
        assert am.encode_response(reply)["content"] == entry["body"]["content"]
        assert am.decode_response(am.encode_response(reply)) == reply
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == CALLS[name]
    assert all(c.raw_arguments is None and c.parse_error is None for c in reply.tool_calls)
    assert (reply.stop, reply.raw_stop, reply.truncated_call) == ("tool_calls", "tool_use", False)
    assert reply.usage.output_tokens > 0 and reply.usage.input_tokens > 0


def test_corpus_thinking_is_kept_whole() -> None:
    for name in ("anthropic__prism__anthropic-text-with-extending-thinking-and-tool-calls-1.json",
                 "anthropic__pydantic-ai__test-anthropic-tool-with-thinking.json"):
        body = corpus(name)["body"]
        reply = am.decode_response(body)
        first = reply.message.parts[0]
        assert isinstance(first, ReasoningPart)
        assert first.provider_data == {W: body["content"][0]}
        assert first.text == body["content"][0]["thinking"]
        assert "signature" not in reply.text and first.text not in reply.text
        req = Request(model="m", max_tokens=9, messages=[Message.user("q"), reply.message])
        assert CODEC.encode_request(req)["messages"][1]["content"] == body["content"]


@pytest.mark.parametrize(("status", "kind", "cls"), [
    (400, "invalid_request_error", InvalidRequestError),
    (401, "authentication_error", AuthenticationError),
    (402, "billing_error", InvalidRequestError),
    (403, "permission_error", PermissionDeniedError),
    (404, "not_found_error", NotFoundError),
    (409, "conflict_error", ServerError),
    (413, "request_too_large", InvalidRequestError),
    (429, "rate_limit_error", RateLimitError),
    (500, "api_error", ServerError),
    (504, "timeout_error", ServerError),
    (529, "overloaded_error", OverloadedError),
])
def test_error_statuses(status: int, kind: str, cls: type[Exception]) -> None:
    body = {"type": "error", "error": {"type": kind, "message": f"msg {kind}"},
            "request_id": "req_1"}
    for form in (body, json.dumps(body), json.dumps(body).encode()):
        err = am.decode_error(status, form)
        assert type(err) is cls
        assert err.status == status and err.error_type == kind and err.message == f"msg {kind}"
        assert err.wire == W and err.body == body


def test_error_context_length_headers_and_plain_text() -> None:
    err = am.decode_error(400, {"type": "error", "error": {
        "type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000"}})
    assert isinstance(err, ContextLengthError)
    err = am.decode_error(429, {"type": "error", "error": {"type": "rate_limit_error",
                                                            "message": "x"}},
                          {"Retry-After": "7", "x-should-retry": "false"})
    assert err.retry_after == 7.0 and err.retryable is False
    err = am.decode_error(502, b"<html>Bad gateway</html>")
    assert isinstance(err, ServerError) and "Bad gateway" in err.message
    assert am.decode_error(500, "").message == "HTTP 500"


def test_mid_conversation_tool_use_id_errors_are_invalid_request() -> None:
    err = am.decode_error(400, {"type": "error", "error": {
        "type": "invalid_request_error",
        "message": "messages.2.content.0.tool_use.id: String should match pattern"}})
    assert isinstance(err, InvalidRequestError) and not err.retryable


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(replies())
def test_property_reply_round_trip(reply: Reply) -> None:
    body = am.encode_response(reply)
    REPLY_MODEL.validate_python(body, extra="forbid")
    assert am.decode_response(body) == reply


# --- stream


def test_corpus_stream_with_server_tool_matches_opaque_blocks() -> None:
    entry = corpus(
        "anthropic_stream__pydantic-ai__test-anthropic-native-tool-search-streaming.json")
    _, reply = run_stream(entry["body"].encode())
    kinds = [type(p).__name__ for p in reply.message.parts]
    assert kinds == ["TextPart", "OpaquePart", "OpaquePart", "TextPart", "ToolCallPart"]
    server = reply.message.parts[1]
    assert isinstance(server, OpaquePart) and server.payload["input"] == {
        "query": "USD EUR exchange rate currency conversion"}
    assert reply.usage.input_tokens == 1591  # message_delta's totals replace message_start's
    assert reply.tool_calls[0].provider_data == {W: {
        "type": "tool_use", "id": "toolu_01EFn5wTNBYA8Reni8rbmnHT", "name": "get_exchange_rate",
        "input": {"from_currency": "USD", "to_currency": "EUR"}, "caller": {"type": "direct"}}}


GOLDEN_SSE = (HERE / "anthropic" / "thinking_text_two_calls.sse").read_bytes()


def test_golden_stream_events_and_reply() -> None:
    events, reply = run_stream(GOLDEN_SSE)
    assert [type(e).__name__ for e in events] == [
        "ReasoningDelta", "ReasoningDelta", "TextDelta", "TextDelta",
        "ToolCallStarted", "ToolCallDelta", "ToolCallDelta", "ToolCallFinished",
        "ToolCallStarted", "ToolCallFinished",
    ]
    assert events[4] == ToolCallStarted(index=0, id="toolu_golden_koeln", name="lookup_town")
    assert events[8] == ToolCallStarted(index=1, id="toolu_golden_noargs", name="current_time")
    thinking, text, koeln, noargs = reply.message.parts
    assert isinstance(thinking, ReasoningPart)
    assert thinking.text == "Two towns: Köln and Malmö, so two lookups."
    assert thinking.provider_data == {W: {"type": "thinking", "thinking": thinking.text,
                                          "signature": "c2lnbmF0dXJlLWZvci10ZXN0cw=="}}
    assert text == TextPart(text="Looking up both towns now.")
    assert koeln == ToolCallPart(id="toolu_golden_koeln", name="lookup_town",
                                 arguments={"town": "Köln", "days": 3})
    assert noargs == ToolCallPart(id="toolu_golden_noargs", name="current_time", arguments={})
    assert reply.stop == "tool_calls"
    # Cumulative usage: the last message_delta wins (77, not 40 + 77).
    assert reply.usage == Usage(input_tokens=950, output_tokens=77, cache_read_tokens=800,
                                cache_write_tokens=30)
    assert reply.provider_data == {W: {"usage": {"service_tier": "standard"}}}


def test_stream_split_at_every_byte_gives_the_same_reply() -> None:
    _, whole = run_stream(GOLDEN_SSE)
    decoder = CODEC.stream_decoder()
    for i in range(len(GOLDEN_SSE)):
        decoder.feed(GOLDEN_SSE[i:i + 1])
    assert decoder.finish() == whole


def test_stream_error_event_raises_the_typed_error() -> None:
    start = sse({"type": "message_start", "message": {"id": "msg_e", "type": "message",
                 "role": "assistant", "model": "m", "content": [], "stop_reason": None,
                 "usage": {"input_tokens": 1, "output_tokens": 0}}})
    error = sse({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    decoder = CODEC.stream_decoder()
    decoder.feed(start)
    with pytest.raises(OverloadedError) as info:
        decoder.feed(error)
    assert info.value.error_type == "overloaded_error" and info.value.retryable
    with pytest.raises(OverloadedError):
        decoder.finish()
    with pytest.raises(RateLimitError):
        list(CODEC.decode_stream([start, sse({"type": "error", "error": {
            "type": "rate_limit_error", "message": "slow down"}})]))
    with pytest.raises(StreamError):
        list(CODEC.decode_stream([start, sse({"type": "error", "error": {
            "type": "brand_new_error", "message": "?"}})]))


def test_stream_that_ends_early_raises() -> None:
    cut = GOLDEN_SSE[: GOLDEN_SSE.index(b"event: message_delta")]
    with pytest.raises(StreamError):
        list(CODEC.decode_stream([cut]))
    with pytest.raises(StreamError):
        list(CODEC.decode_stream([b""]))
    no_stop = GOLDEN_SSE[: GOLDEN_SSE.index(b"event: message_stop")]
    with pytest.raises(StreamError):
        list(CODEC.decode_stream([no_stop]))


def test_stream_tolerates_comments_done_and_a_last_event_without_blank_line() -> None:
    data = b": keep-alive\r\n\r\n" + GOLDEN_SSE.rstrip(b"\n") + b"\n\ndata: [DONE]"
    _, reply = run_stream(data)
    assert reply == run_stream(GOLDEN_SSE)[1]


def test_stream_cut_off_call_is_truncated_with_its_text_kept() -> None:
    data = sse(
        {"type": "message_start", "message": {"id": "msg_c", "type": "message", "role": "assistant",
         "model": "m", "content": [], "stop_reason": None,
         "usage": {"input_tokens": 5, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": "toolu_c", "name": "write", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {
            "type": "input_json_delta", "partial_json": '{"path": "a.py", "body": "def f('}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens"},
         "usage": {"output_tokens": 4096}},
        {"type": "message_stop"},
    )
    events, reply = run_stream(data)
    call = reply.tool_calls[0]
    assert (reply.stop, reply.raw_stop, reply.truncated_call) == ("max_tokens", "max_tokens", True)
    assert call.arguments is None and call.raw_arguments == '{"path": "a.py", "body": "def f('
    assert call.parse_error is not None
    assert events[-1] == ToolCallFinished(index=0, call=call)
    again = b"".join(am.encode_stream(reply))
    assert run_stream(again)[1] == reply


def test_stream_redacted_thinking_and_citations() -> None:
    citation = {"type": "char_location", "cited_text": "x", "document_index": 0,
                "document_title": None, "start_char_index": 0, "end_char_index": 1}
    data = sse(
        {"type": "message_start", "message": {"id": "msg_r", "type": "message", "role": "assistant",
         "model": "m", "content": [], "stop_reason": None,
         "usage": {"input_tokens": 5, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {
            "type": "redacted_thinking", "data": "ZW5jcnlwdGVk"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {
            "type": "text", "text": "", "citations": []}},
        {"type": "content_block_delta", "index": 1, "delta": {
            "type": "citations_delta", "citation": citation}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "x"}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
         "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    )
    _, reply = run_stream(data)
    redacted, text = reply.message.parts
    assert redacted == ReasoningPart(text="", provider_data={W: {"type": "redacted_thinking",
                                                                  "data": "ZW5jcnlwdGVk"}})
    assert isinstance(text, TextPart) and text.text == "x"
    assert text.provider_data == {W: {"type": "text", "text": "x", "citations": [citation]}}
    assert run_stream(b"".join(am.encode_stream(reply)))[1] == reply


def test_stream_decoder_maps_names_back_with_the_request() -> None:
    req = Request(model="m", tools=[ToolSpec(name="math.sum")])
    reply = Reply(message=Message(role="assistant", parts=(
        ToolCallPart(id="toolu_s", name="math.sum", arguments={"a": 1}),)),
        stop="tool_calls", raw_stop="tool_use", id="msg_s", model="m")
    chunks = am.encode_stream(reply, request=req)
    assert b'"name":"math_sum"' in b"".join(chunks)
    events, back = run_stream(b"".join(chunks), request=req)
    assert back == reply
    assert ToolCallStarted(index=0, id="toolu_s", name="math.sum") in events


def sdk_accumulated(chunks: list[bytes]) -> dict[str, Any]:
    """The message the official SDK's stream accumulator builds from our events."""
    snapshot: Any = None
    buffers: dict[int, bytes] = {}
    for chunk in chunks:
        payload = json.loads(chunk.decode().split("data: ", 1)[1])
        if payload["type"] != "ping":
            STREAM_EVENT.validate_python(payload, extra="forbid")
            snapshot = accumulate_event(event=payload, current_snapshot=snapshot,
                                        json_bufs=buffers)
    out: dict[str, Any] = snapshot.to_dict()
    return out


def test_official_sdk_accumulates_our_stream_to_the_same_reply() -> None:
    reply = run_stream(GOLDEN_SSE)[1]
    message = sdk_accumulated(am.encode_stream(reply))
    assert message["content"][2]["input"] == {"town": "Köln", "days": 3}
    assert am.decode_response(message) == reply


def test_encoded_stream_events_match_the_sdk_types() -> None:
    reply = run_stream(GOLDEN_SSE)[1]
    chunks = am.encode_stream(reply)
    assert len(chunks) > 10 and all(c.endswith(b"\n\n") for c in chunks)
    for chunk in chunks:
        payload = json.loads(chunk.decode().split("data: ", 1)[1])
        if payload["type"] != "ping":
            STREAM_EVENT.validate_python(payload, extra="forbid")
    fragments = [c for c in chunks if b"input_json_delta" in c]
    assert b'"partial_json":""' in fragments[0]  # the API's usual empty first fragment


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(replies(), st.data())
def test_property_stream_split_anywhere(reply: Reply, data: st.DataObject) -> None:
    chunks = am.encode_stream(reply)
    assert am.decode_response(sdk_accumulated(chunks)) == reply
    whole = b"".join(chunks)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(whole)), max_size=12)))
    pieces = [whole[a:b] for a, b in zip([0, *cuts], [*cuts, len(whole)], strict=True)]
    events = list(CODEC.decode_stream(pieces))
    end = events[-1]
    assert isinstance(end, StreamEnd) and end.reply == reply
    assert end.reply == am.decode_response(am.encode_response(reply))
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == reply.text
    thoughts = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert thoughts == "".join(p.text for p in reply.message.parts if isinstance(p, ReasoningPart))
    finished = [e.call for e in events if isinstance(e, ToolCallFinished)]
    assert finished == list(reply.tool_calls)


# --- parts


def test_tool_names_the_wire_rejects_are_mapped_everywhere_and_back() -> None:
    tool = ToolSpec(name="math.sum", input_schema={"type": "object", "properties": {}})
    call = ToolCallPart(id="toolu_1", name="math.sum", arguments={"a": 1})
    req = Request(model="m", max_tokens=5, tools=[tool], tool_choice=ToolChoice(mode="tool",
                  name="math.sum"), messages=[
        Message.user("add"), Message(role="assistant", parts=(call,)),
        Message(role="tool", parts=(ToolResultPart(call_id="toolu_1", content="3",
                                                   name="math.sum"),)),
    ])
    enc = am.encode(req)
    assert enc.body["tools"][0]["name"] == "math_sum"
    assert enc.body["tool_choice"] == {"type": "tool", "name": "math_sum"}
    assert enc.body["messages"][1]["content"][0]["name"] == "math_sum"
    assert [(n.kind, n.subject) for n in enc.notes] == [("tool_name_mapped", "math.sum")]
    check_request_body(enc.body)
    reply = am.decode_response({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "tool_use", "id": "toolu_2", "name": "math_sum", "input": {"a": 2}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1}},
        request=req)
    assert reply.tool_calls[0].name == "math.sum"
    assert am.decode_response(am.encode_response(reply, request=req), request=req) == reply
    assert am.encode_response(reply, request=req)["content"][0]["name"] == "math_sum"


def test_long_tool_names_fit_128() -> None:
    name = "x" * 130
    body = CODEC.encode_request(Request(model="m", max_tokens=5, tools=[ToolSpec(name=name)]))
    assert len(body["tools"][0]["name"]) <= 128


def test_foreign_ids_are_rewritten_consistently_with_a_note() -> None:
    bad = "functions.lookup:3"
    req = Request(model="m", max_tokens=5, messages=[
        Message.user("x"),
        Message(role="assistant", parts=(ToolCallPart(id=bad, name="lookup", arguments={}),)),
        Message(role="tool", parts=(ToolResultPart(call_id=bad, content="ok", name="lookup"),)),
    ])
    enc = am.encode(req)
    new_call = enc.body["messages"][1]["content"][0]["id"]
    new_result = enc.body["messages"][2]["content"][0]["tool_use_id"]
    assert new_call == new_result != bad
    assert CODEC.encode_request(req)["messages"][1]["content"][0]["id"] == new_call  # deterministic
    assert all(c.isalnum() or c in "_-" for c in new_call)
    assert [(n.kind, n.subject) for n in enc.notes] == [("id_rewritten", bad)]
    other = CODEC.encode_request(Request(model="m", max_tokens=5, messages=[Message(
        role="assistant", parts=(ToolCallPart(id="functions.lookup_3", name="l", arguments={}),))]))
    assert other["messages"][0]["content"][0]["id"] != new_call  # no collision
    check_request_body(enc.body)


def test_names_that_fit_need_no_mapping_and_one_that_does_maps_everywhere() -> None:
    calls = Message(role="assistant", parts=(ToolCallPart(id="c1", name="f", arguments={}),
                                             ToolCallPart(id="c2", name="a.b", arguments={})))
    fits = Request(model="m", max_tokens=5, tools=(ToolSpec(name="f"),),
                   messages=(Message.user("q"), calls))
    enc = am.encode(fits)  # "a.b" is only in the history: it is mapped there all the same
    assert [b["name"] for b in enc.body["messages"][1]["content"]] == ["f", "a_b"]
    assert [(n.kind, n.subject) for n in enc.notes] == [("tool_name_mapped", "a.b")]
    reply = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
             "content": [{"type": "tool_use", "id": "t1", "name": "a_b", "input": {}},
                         {"type": "tool_use", "id": "t2", "name": "f", "input": {}}],
             "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1}}
    back = am.decode_response(reply, request=fits)
    assert [c.name for c in back.tool_calls] == ["a.b", "f"]
    # a user tool named like the mapped name pushes the mapping to another name
    clash = replace(fits, tools=(ToolSpec(name="f"), ToolSpec(name="a_b")))
    mapped = am.encode(clash).body["messages"][1]["content"][1]["name"]
    assert mapped not in ("a.b", "a_b") and mapped.startswith("a_b_")
    assert [c.name for c in am.decode_response(reply, request=clash).tool_calls] == ["a_b", "f"]


_NAMES = st.text(st.sampled_from("ab_-.1 é"), min_size=0, max_size=6)


@settings(max_examples=150, deadline=None)
@given(st.lists(_NAMES, max_size=4), st.lists(_NAMES, max_size=4), st.lists(_NAMES, max_size=6))
def test_names_are_mapped_as_the_whole_name_map_would(
    tools: list[str], history: list[str], asked: list[str],
) -> None:
    request = Request(model="m", tools=tuple(ToolSpec(name=n) for n in dict.fromkeys(tools)),
                      messages=(Message(role="assistant", parts=tuple(
                          ToolCallPart(id=f"c{i}", name=n, arguments={})
                          for i, n in enumerate(history))),))
    whole = full_name_map(request)
    for name in [*asked, *tools, *history, *whole.from_wire]:
        assert ToolNames(request).user(name) == whole.user(name)
        assert ToolNames(request).wire(name) == whole.wire(name)
    lazy = ToolNames(request)
    for name in [*tools, *history]:
        lazy.wire(name)
    assert lazy.notes() == whole.notes()


def test_arguments_that_are_not_an_object_are_sent_as_empty_with_a_note() -> None:
    broken = ToolCallPart.from_raw(id="call_1", name="f", raw_arguments='{"a": ')
    from_text = ToolCallPart.from_raw(id="call_2", name="f", raw_arguments='{"a": 1}')
    enc = am.encode(Request(model="m", max_tokens=5, messages=[Message.user("x"),
                            Message(role="assistant", parts=(broken, from_text))]))
    blocks = enc.body["messages"][1]["content"]
    assert blocks[0]["input"] == {} and blocks[1]["input"] == {"a": 1}
    assert [(n.kind, n.subject) for n in enc.notes] == [("arguments_replaced", "call_1")]


def test_server_tool_blocks_are_opaque_and_echoed_verbatim() -> None:
    body = corpus(
        "anthropic__pydantic-ai__test-anthropic-native-tool-search-round-trip.json")["body"]
    reply = am.decode_response(body)
    opaque = [p for p in reply.message.parts if isinstance(p, OpaquePart)]
    assert [p.kind for p in opaque] == ["server_tool_use", "tool_search_tool_result"]
    assert opaque[0].payload == body["content"][1] and opaque[0].wire == W
    req = Request(model="m", max_tokens=9, messages=[Message.user("rate?"), reply.message])
    sent = CODEC.encode_request(req)["messages"][1]["content"]
    assert sent == body["content"]  # verbatim, in order, caller kept
    check_request_body(CODEC.encode_request(req))


# --- schema


def test_strict_schema_rewritten_on_a_copy_with_one_note_per_tool() -> None:
    schema = {"type": "object", "properties": {
        "where": {"type": "object", "properties": {"lat": {"type": "number", "minimum": -90}}},
        "tags": {"type": "array", "items": {"type": "object", "properties": {}}},
        "pick": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
    }}
    original = copy.deepcopy(schema)
    tools = [ToolSpec(name="place", input_schema=schema, strict=True),
             ToolSpec(name="loose", input_schema=schema)]
    enc = am.encode(Request(model="m", max_tokens=5, tools=tools))
    assert schema == original
    sent = enc.body["tools"][0]["input_schema"]
    assert sent["additionalProperties"] is False
    assert sent["properties"]["where"]["additionalProperties"] is False
    assert sent["properties"]["tags"]["items"]["additionalProperties"] is False
    lat = sent["properties"]["where"]["properties"]["lat"]
    assert "minimum" not in lat and "minimum: -90" in lat["description"]
    assert "anyOf" in sent["properties"]["pick"] and "oneOf" not in sent["properties"]["pick"]
    assert enc.body["tools"][0]["strict"] is True
    assert enc.body["tools"][1]["input_schema"] == original  # not strict: left alone
    notes = [n for n in enc.notes if n.kind == "schema_rewritten"]
    assert [n.subject for n in notes] == ["place"]
    assert "/properties/where" in notes[0].detail and "/properties/tags/items" in notes[0].detail
    check_request_body(enc.body)


def test_schema_without_type_gets_object() -> None:
    enc = am.encode(Request(model="m", max_tokens=5,
                            tools=[ToolSpec(name="t", input_schema={"properties": {}})]))
    assert enc.body["tools"][0]["input_schema"] == {"type": "object", "properties": {}}
    assert [n.kind for n in enc.notes] == ["schema_rewritten"]


# --------------------------------------------------------------------------- media

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
PDF = b"%PDF-1.7\n" + b"x" * 64


def media_request() -> Request:
    """An image and a PDF in the user message, an image in a tool result."""
    from toolwire import Document, Image

    return Request(model="claude-x", max_tokens=64, tools=(ToolSpec(name="shot"),), messages=(
        Message(role="user", parts=(TextPart(text="compare these"), Image.from_bytes(PNG),
                                    Document.from_bytes(PDF, name="report.pdf"))),
        Message(role="assistant", parts=(ToolCallPart(id="toolu_1", name="shot",
                                                      arguments={}),)),
        Message(role="tool", parts=(ToolResultPart(call_id="toolu_1", name="shot", content=(
            TextPart(text="the screen:"), Image.from_bytes(PNG))),)),
    ))


def test_media_in_user_messages_and_tool_results_fit_the_sdk_types_and_read_back() -> None:
    req = media_request()
    body = CODEC.encode_request(req)
    check_request_body(body)
    user = body["messages"][0]["content"]
    assert [b["type"] for b in user] == ["text", "image", "document"]
    assert user[2]["title"] == "report.pdf" and user[2]["source"]["type"] == "base64"
    result = body["messages"][2]["content"][0]
    assert [b["type"] for b in result["content"]] == ["text", "image"]
    assert CODEC.decode_request(body) == req
    # The saved JSON form keeps media too, and the older form of a text result still reads.
    assert from_json(dump(req)) == req


def test_media_the_wire_refuses_is_stopped_before_sending() -> None:
    from toolwire import Audio, ConfigError, Image

    big = Image.from_bytes(b"\x89PNG\r\n\x1a\n" + bytes(5 * 1024 * 1024))
    req = Request(model="m", max_tokens=5, messages=(Message(role="user", parts=(big,)),))
    with pytest.raises(ConfigError, match="5 MB"):
        CODEC.encode_request(req)
    tiff = Image.from_bytes(b"II*\x00", "image/tiff")
    with pytest.raises(ConfigError, match="image/tiff"):
        CODEC.encode_request(replace(req, messages=(Message(role="user", parts=(tiff,)),)))
    sound = Audio.from_bytes(b"RIFF0000WAVEfmt ")
    enc = CODEC.encode(replace(req, messages=(Message(role="user", parts=(sound,)),)))
    assert "audio" in enc.body["messages"][0]["content"]  # a placeholder text instead
    assert "omitted" in enc.body["messages"][0]["content"]
    assert [n.kind for n in enc.notes] == ["media_dropped"]


def test_broken_media_blocks_are_named() -> None:
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": "not base64!"}}]}]}
    with pytest.raises(WireFormatError, match=r"messages\[0\].content.*base64"):
        am.decode_request(body)


@pytest.mark.parametrize("streamed", [False, True])
def test_a_media_history_fits_the_sdk_types(streamed: bool) -> None:
    """An image and a PDF from the user, an image from a tool, replies whole or streamed."""
    from strategies import media_history

    body = CODEC.encode_request(media_history("anthropic-messages", "m", streamed=streamed))
    check_request_body(body)
    assert body["messages"][2]["content"][0]["content"][1]["type"] == "image"


def test_ids_and_names_seen_to_fit_are_remembered_and_the_others_rewritten_every_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The ids and names a request sends as they are are remembered for the next request (a
    set lookup in place of a match); one that needs rewriting is never remembered, so it is
    rewritten, with its note, on every request; the memory is emptied once full."""
    from toolwire.codecs import renames
    from toolwire.codecs.anthropic_messages import ID_PATTERN, NAME_PATTERN

    monkeypatch.setattr(renames, "_MATCHED_MOST", 3)
    codec = get_codec("anthropic-messages")

    def request(call_id: str, name: str) -> Request:
        return Request(model="m", max_tokens=8, messages=(
            Message.user("go"),
            Message(role="assistant", parts=(ToolCallPart(id=call_id, name=name,
                                                          arguments={}),)),
            Message(role="tool", parts=(ToolResultPart(call_id=call_id, content="ok"),))))

    for _ in range(2):
        out = codec.encode(request("call.1", "get.it"))
        assert [n.kind for n in out.notes] == ["tool_name_mapped", "id_rewritten"]
        assert out.body["messages"][1]["content"][0]["id"] != "call.1"
    assert "call.1" not in renames.matched(ID_PATTERN)
    assert "get.it" not in renames.matched(NAME_PATTERN)
    for n in range(5):
        out = codec.encode(request(f"call_{n}", f"get_{n}"))
        assert out.notes == ()
        assert out.body["messages"][1]["content"][0] == {
            "type": "tool_use", "id": f"call_{n}", "name": f"get_{n}", "input": {}}
        assert f"call_{n}" in renames.matched(ID_PATTERN)
        assert f"get_{n}" in renames.matched(NAME_PATTERN)
        assert len(renames.matched(ID_PATTERN)) <= 3
