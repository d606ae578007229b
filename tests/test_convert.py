"""Conversations converted between every pair of wires, and wire detection on real bodies.

A conversation with reasoning, two parallel calls and an error result is written in each wire,
converted to every wire, and read back: calls and results must still pair up, and everything that
did not carry over (reasoning of another wire, ids outside the target's character set) must be
listed in the losses. `detect_wire` must name the wire and kind of every recorded reply.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from toolwire.codecs import get_codec
from toolwire.codecs.registry import get_wire
from toolwire.conversion import Conversion, convert, detect_wire
from toolwire.errors import WireFormatError
from toolwire.rules import check_transcript
from toolwire.transcript import (
    JSON,
    Message,
    ReasoningPart,
    Reply,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)
from wire_data import data, looped, table

CORPUS = Path(__file__).parent / "fixtures" / "corpus"
FMT_WIRE = {
    "anthropic": "anthropic-messages",
    "openai_chat": "openai-chat",
    "openai_responses": "openai-responses",
    "ollama": "ollama-chat",
    "gemini": "gemini-generate",
}
ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")

# Kimi-style ids, as OpenAI-compatible servers send them: fine for most wires, not Anthropic's.
WEATHER_ID = "functions.get_weather:0"
ADD_ID = "functions.add:1"

REASONING: dict[str, JSON] = table("LOOKUPS_REASONING")
"""Each wire's reasoning as it sends it (its test data)."""

TOOLS = (
    ToolSpec(name="get_weather", description="Current weather for a city.",
             input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"]}),
    ToolSpec(name="add", description="Add two integers.",
             input_schema={"type": "object", "properties": {"a": {"type": "integer"},
                                                            "b": {"type": "integer"}}}),
)


def call(wire: str, call_id: str, name: str, arguments: JSON) -> ToolCallPart:
    if data(wire).TEXT_ARGUMENTS:
        raw = json.dumps(arguments, separators=(",", ":"))
        return ToolCallPart.from_raw(id=call_id, name=name, raw_arguments=raw)
    return ToolCallPart(id=call_id, name=name, arguments=arguments)


def conversation(wire: str) -> Request:
    """Reasoning made in ``wire``, two parallel calls, one result an error, a last user turn."""
    return Request(
        model="m",
        system="Answer briefly.",
        tools=TOOLS,
        max_tokens=400,
        messages=(
            Message.user("Weather in Paris, and 1 + b?"),
            Message(role="assistant", parts=(
                ReasoningPart(text="Two lookups at once.", provider_data={wire: REASONING[wire]}),
                call(wire, WEATHER_ID, "get_weather", {"city": "Paris"}),
                call(wire, ADD_ID, "add", {"a": 1}),
            )),
            Message(role="tool", parts=(
                ToolResultPart(call_id=WEATHER_ID, content="sunny, 21°C", name="get_weather"),
                ToolResultPart(call_id=ADD_ID, content="missing argument 'b'", is_error=True,
                               name="add"),
            )),
            Message.user("b is 2."),
        ),
    )


def body_in(wire: str) -> dict[str, Any]:
    """The conversation as a request body of ``wire``, as it would arrive over HTTP."""
    result: dict[str, Any] = json.loads(json.dumps(get_codec(wire).encode_request(
        conversation(wire))))
    return result


def read(wire: str, body: dict[str, Any]) -> Request:
    codec = get_codec(wire)
    data = json.loads(json.dumps(body))
    if get_wire(wire).model_in_path:  # Gemini and Converse: the model is in the URL
        return codec.decode_request(data, model="m")
    return codec.decode_request(data)


def pairs(request: Request) -> list[tuple[str, str, JSON, str, bool]]:
    """(call id, tool, arguments, result content, is_error) for every call, in order."""
    out = []
    for i, message in enumerate(request.messages):
        results = {r.call_id: r for r in request.messages[i + 1].tool_results} if (
            message.tool_calls and i + 1 < len(request.messages)) else {}
        for c in message.tool_calls:
            r = results[c.id]
            out.append((c.id, c.name, c.arguments, r.content, r.is_error))
    return out


MATRIX = [(s, t) for s in looped() for t in looped()]


@pytest.mark.parametrize(("source", "target"), MATRIX, ids=[f"{s}->{t}" for s, t in MATRIX])
def test_every_pair_of_wires_keeps_calls_and_results_paired(source: str, target: str) -> None:
    conv = convert(body_in(source), source, target)
    assert isinstance(conv, Conversion)
    assert (conv.source, conv.target) == (source, target)
    back = read(target, conv.body)

    errors = [p for p in check_transcript(back.messages, target)  # type: ignore[arg-type]
              if p.severity == "error"]
    assert not errors, "\n".join(map(str, errors))
    got = pairs(back)
    assert [(name, args, content, err) for _, name, args, content, err in got] == [
        ("get_weather", {"city": "Paris"}, "sunny, 21°C", False),
        ("add", {"a": 1}, "missing argument 'b'", True),
    ]
    assert back.system == "Answer briefly."
    assert back.messages[-1].text == "b is 2."
    assert [t.name for t in back.tools] == ["get_weather", "add"]


@pytest.mark.parametrize(("source", "target"), MATRIX, ids=[f"{s}->{t}" for s, t in MATRIX])
def test_losses_name_the_reasoning_of_another_wire(source: str, target: str) -> None:
    conv = convert(body_in(source), source, target)
    back = read(target, conv.body)
    reasoning = [p for p in back.messages[1].parts if isinstance(p, ReasoningPart)]
    dropped = [n for n in conv.losses if n.kind == "reasoning_dropped"]
    if source == target:
        assert not dropped
        assert [p.provider_data for p in reasoning] == [{source: REASONING[source]}]
    else:
        assert not reasoning
        assert len(dropped) == 1
        assert "1" in dropped[0].subject  # the assistant message that held it


@pytest.mark.parametrize(("source", "target"), MATRIX, ids=[f"{s}->{t}" for s, t in MATRIX])
def test_ids_are_rewritten_only_where_the_target_needs_it(source: str, target: str) -> None:
    conv = convert(body_in(source), source, target)
    ids = [c[0] for c in pairs(read(target, conv.body))]
    rewritten = {n.subject: n.detail for n in conv.losses if n.kind == "id_rewritten"}
    strict = {wire: rule for wire in (source, target)
              if (rule := id_rule(wire)) is not None and not rule.match(WEATHER_ID)}
    if not strict:  # neither wire refuses these ids
        assert ids == [WEATHER_ID, ADD_ID]
        assert not rewritten
        return
    for rule in strict.values():
        assert all(rule.match(i) for i in ids), ids
    assert len(set(ids)) == 2
    if source not in strict:  # a source that refuses them had its body's ids rewritten already
        assert set(rewritten) == {WEATHER_ID, ADD_ID}
        for old, new in zip((WEATHER_ID, ADD_ID), ids, strict=True):
            assert repr(new) in rewritten[old]


def id_rule(wire: str) -> re.Pattern[str] | None:
    """The characters a call id of ``wire`` may hold, where its API restricts them."""
    return get_wire(wire).rules.id_pattern


def test_a_kimi_id_into_anthropic_is_rewritten_in_the_call_and_its_result() -> None:
    conv = convert(body_in("openai-chat"), "openai-chat", "anthropic-messages")
    blocks = [b for m in conv.body["messages"] if isinstance(m["content"], list)
              for b in m["content"]]
    use_ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
    result_ids = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
    assert use_ids == result_ids
    assert all(ANTHROPIC_ID.match(i) for i in use_ids)
    flags = [b.get("is_error", False) for b in blocks if b["type"] == "tool_result"]
    assert flags == [False, True]
    notes = [n for n in conv.losses if n.kind == "id_rewritten"]
    assert [n.subject for n in notes] == [WEATHER_ID, ADD_ID]
    again = convert(body_in("openai-chat"), "openai-chat", "anthropic-messages")
    assert again.body == conv.body  # deterministic: every turn rewrites the same way


# Bodies whose calls carry no ids at all: the ids made up must still pair up everywhere.
GEMINI_NO_IDS: dict[str, Any] = {
    "contents": [
        {"role": "user", "parts": [{"text": "Paris and Rome?"}]},
        {"role": "model", "parts": [
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
            {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "get_weather", "response": {"output": "sunny"}}},
            {"functionResponse": {"name": "get_weather", "response": {"error": "no data"}}}]},
    ],
    "tools": [{"functionDeclarations": [{"name": "get_weather",
                                         "parametersJsonSchema": {"type": "object"}}]}],
}
OLLAMA_NO_IDS: dict[str, Any] = {
    "model": "m",
    "messages": [
        {"role": "user", "content": "Paris and Rome?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
            {"function": {"name": "get_weather", "arguments": {"city": "Rome"}}}]},
        {"role": "tool", "tool_name": "get_weather", "content": "sunny"},
        {"role": "tool", "tool_name": "get_weather", "content": "Error: no data"},
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather",
                                                "parameters": {"type": "object"}}}],
}


@pytest.mark.parametrize("target", looped())
@pytest.mark.parametrize(("source", "body"), [("gemini-generate", GEMINI_NO_IDS),
                                              ("ollama-chat", OLLAMA_NO_IDS)],
                         ids=["gemini", "ollama"])
def test_calls_without_ids_pair_up_in_every_wire(source: str, body: dict[str, Any],
                                                 target: str) -> None:
    back = read(target, convert(body, source, target).body)
    assert not [p for p in check_transcript(back.messages, target)  # type: ignore[arg-type]
                if p.severity == "error"]
    got = pairs(back)
    assert [(args, content, err) for _, _, args, content, err in got] == [
        ({"city": "Paris"}, "sunny", False), ({"city": "Rome"}, "no data", True)]
    assert all(i for i, *_ in got) and len({i for i, *_ in got}) == 2


@pytest.mark.parametrize("target", ["anthropic-messages", "openai-chat", "openai-responses"])
def test_a_tool_name_the_target_refuses_is_mapped_with_a_loss(target: str) -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "1 + 2?"}]},
            {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "math.sum",
                                                          "args": {"xs": [1, 2]}}}]},
            {"role": "user", "parts": [{"functionResponse": {
                "id": "c1", "name": "math.sum", "response": {"output": "3"}}}]},
        ],
        "tools": [{"functionDeclarations": [{"name": "math.sum"}]}],
    }
    conv = convert(body, "gemini-generate", target)
    mapped = [n for n in conv.losses if n.kind == "tool_name_mapped"]
    assert [n.subject for n in mapped] == ["math.sum"]
    text = json.dumps(conv.body)
    assert "math.sum" not in text and "math_sum" in text
    back = read(target, conv.body)
    assert back.tools[0].name == "math_sum" and back.messages[1].tool_calls[0].name == "math_sum"


def test_convert_refuses_unknown_wires_and_bodies_of_another_wire() -> None:
    with pytest.raises(ValueError, match="unknown wire 'anthropic'"):
        convert(body_in("openai-chat"), "anthropic", "openai-chat")
    with pytest.raises(ValueError, match="unknown wire"):
        convert(body_in("openai-chat"), "openai-chat", "claude")
    with pytest.raises(WireFormatError, match="not a request in the anthropic-messages format"):
        convert({"messages": "hello"}, "anthropic-messages", "openai-chat")


SETTINGS: dict[str, tuple[dict[str, Any], set[str]]] = table("SETTINGS")
"""Each wire's request with settings of its own, and their names (its test data)."""


@pytest.mark.parametrize(("source", "target"), MATRIX, ids=[f"{s}->{t}" for s, t in MATRIX])
def test_settings_of_the_source_wire_are_kept_or_named_as_lost(source: str, target: str) -> None:
    body, settings = SETTINGS[source]
    conv = convert(body, source, target)
    dropped = {n.subject for n in conv.losses if n.kind == "field_dropped"}
    if source == target:
        assert not dropped
        assert settings <= set(conv.body)
    else:
        assert dropped == settings
        # a key the target always sends with a value of its own (Interactions' store) is no
        # setting carried over
        assert not settings & set(conv.body) - data(target).ALWAYS_SENT


# --------------------------------------------------------------------------- detect_wire


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*.json"))


def test_the_corpus_covers_every_recorded_wire_whole_and_streamed() -> None:
    # The recordings hold no Converse traffic; tests/codecs/test_bedrock_converse.py reads
    # bodies shaped by botocore's service model instead.
    seen = {(FMT_WIRE[json.loads(p.read_text())["fmt"]], json.loads(p.read_text())["streaming"])
            for p in corpus_files()}
    assert seen == {(w, s) for w in FMT_WIRE.values() for s in (False, True)}


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.stem[:60])
def test_detect_wire_names_every_recorded_reply(path: Path) -> None:
    entry = json.loads(path.read_text(encoding="utf-8"))
    expected = (FMT_WIRE[entry["fmt"]], "stream" if entry["streaming"] else "response")
    assert detect_wire(entry["body"]) == expected
    if entry["streaming"]:
        assert detect_wire(entry["body"].encode("utf-8")) == expected


@pytest.mark.parametrize("wire", looped())
def test_detect_wire_names_requests_replies_and_streams_we_write(wire: str) -> None:
    codec = get_codec(wire)
    assert detect_wire(body_in(wire)) == (wire, "request")
    reply = Reply(message=Message(role="assistant", parts=(
        TextPart(text="On it."), call(wire, "call_1", "get_weather", {"city": "Oslo"}))),
        stop="tool_calls")
    assert detect_wire(json.loads(json.dumps(codec.encode_response(reply)))) == (wire, "response")
    assert detect_wire(b"".join(codec.encode_stream(reply))) == (wire, "stream")


def test_detect_wire_explains_what_it_cannot_read() -> None:
    with pytest.raises(WireFormatError, match="expected keys"):
        detect_wire({"hello": "world"})
    with pytest.raises(WireFormatError, match="JSON object"):
        detect_wire([1, 2])
    with pytest.raises(WireFormatError, match="stream"):
        detect_wire("just some text\n")
