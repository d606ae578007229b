"""The direct way a wire writes the usual messages (one text per user or system message, texts
and function calls from the assistant, text results, nothing in a wire's own words) gives the
body, notes and headers its general path gives, the one every encode takes while the one pass
over the request says it holds everything (`toolwire.codecs.traits.EVERY`), so that every
check inside takes its general path too. The Ollama and Gemini wires write the usual request
before the checks around their encode (`toolwire.codecs.fitting.usual_first`): theirs is
compared through the whole codec. Anthropic's does too, and is also compared on its own."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from strategies import PNG, call_ids, object_call, text_call, texts, tool_names
from toolwire import Image
from toolwire.codecs import get_codec
from toolwire.codecs.traits import EVERY, encoding, known, scan
from toolwire.errors import ConfigError
from toolwire.transcript import (
    Message,
    OpaquePart,
    ReasoningPart,
    Request,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
)

ONE_PASS = ("ollama-chat", "gemini-generate")
"""Wires whose usual request is written before the checks around their encode."""
WIRES = ("openai-responses", "openai-chat", "anthropic-messages", *ONE_PASS)
ODD_NAMES = ("look.up", "fetch page", "x" * 70)
"""Names some wires do not take as they are: their calls are sent under mapped names."""


@st.composite
def plain_requests(draw: st.DrawFn) -> Request:
    """Conversations of the usual messages, with the corners of each: results that are empty
    or errors (with and without their ``Error:``), arguments as text (parsed or not) and as
    objects, tool names a wire maps, system messages, assistant turns without text."""
    names = draw(st.lists(st.one_of(tool_names, st.sampled_from(ODD_NAMES)), min_size=1,
                          max_size=3, unique=True))
    messages: list[Message] = []
    if draw(st.booleans()):
        messages.append(Message(role="system", parts=(TextPart(text=draw(texts)),)))
    messages.append(Message.user(draw(texts)))
    for _ in range(draw(st.integers(0, 4))):
        ids = draw(st.lists(call_ids, min_size=1, max_size=3, unique=True))
        calls: list[Any] = []
        for call_id in ids:
            made = draw(st.sampled_from(["object", "text", "broken"]))
            call = object_call(draw, call_id) if made == "object" else text_call(
                draw, call_id) if made == "text" else ToolCallPart.from_raw(
                id=call_id, name="x", raw_arguments="{not json")
            calls.append(ToolCallPart.from_raw(id=call.id, name=draw(st.sampled_from(names)),
                                               raw_arguments=call.raw_arguments)
                         if call.raw_arguments is not None
                         else ToolCallPart(id=call.id, name=draw(st.sampled_from(names)),
                                           arguments=call.arguments))
        texts_first = [TextPart(text=draw(texts))] if draw(st.booleans()) else []
        messages.append(Message(role="assistant", parts=(*texts_first, *calls)))
        messages.append(Message(role="tool", parts=tuple(
            ToolResultPart(call_id=c.id, name=c.name, is_error=draw(st.booleans()),
                           content=draw(st.sampled_from(["", "Error: no", draw(texts)])))
            for c in calls)))
        if draw(st.booleans()):
            messages.append(Message.user(draw(texts)))
    if draw(st.booleans()):
        messages.append(Message(role="assistant", parts=(TextPart(text=draw(texts)),)))
        messages.append(Message.user(draw(texts)))
    choice = draw(st.sampled_from([None, ToolChoice(mode="auto"), ToolChoice(mode="required")]))
    return Request(model="m-1", system=draw(st.none() | texts), messages=tuple(messages),
                   tools=tuple(ToolSpec(name=n) for n in names), tool_choice=choice,
                   max_tokens=draw(st.none() | st.integers(1, 4096)))


def _both(wire: str, request: Request) -> tuple[Any, Any]:
    """The wire's own encode (inside the checks every codec puts around it, some of which
    hand it a changed request) as it is, and told that the request holds everything."""
    codec = get_codec(wire)
    encode = codec.encode if wire in ONE_PASS else codec.module.encode

    def outcome(encode: Any) -> Any:
        try:
            out = encode(request)
        except ConfigError as exc:
            return str(exc)
        return out.body, out.notes, out.headers

    return outcome(encode), outcome(encoding(encode, found=lambda r: EVERY))


@pytest.mark.parametrize("wire", WIRES)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request=plain_requests())
def test_the_usual_messages_encode_as_the_general_path_does(wire: str,
                                                            request: Request) -> None:
    usual, general = _both(wire, request)
    assert usual == general


def _among_usual(odd: Message, model: str, *tools: ToolSpec) -> Request:
    """A conversation of the usual messages with ``odd`` after a round of calls."""
    return Request(model=model, tools=tools, messages=(
        Message.user("hi"),
        Message(role="assistant", parts=(TextPart(text="looking"), ToolCallPart(
            id="c1", name="f", arguments={"q": "x"}))),
        Message(role="tool", parts=(ToolResultPart(call_id="c1", content="found"),)),
        odd,
        Message.user("go on")))


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("odd", [
    Message(role="assistant", parts=(ReasoningPart(text="thinking"),)),
    Message(role="assistant", parts=(TextPart(text="a", provider_data={"x": {"y": 1}}),)),
    Message(role="user", parts=(TextPart(text="a"), TextPart(text="b"))),
    Message(role="user"),
    Message(role="tool", parts=(TextPart(text="not a result"),)),
    Message(role="assistant", parts=(ToolCallPart(id="c9", name="f", arguments="text",
                                                  raw_arguments="text", freeform=True),)),
], ids=["reasoning", "data", "two texts", "empty", "text in tool", "freeform"])
def test_one_unusual_message_among_usual_ones_encodes_as_the_general_path_does(
        wire: str, odd: Message) -> None:
    request = _among_usual(odd, "m-1", ToolSpec(name="f"), ToolSpec(name="g", freeform=True))
    usual, general = _both(wire, request)
    assert usual == general


ODD_FOR_ONE_PASS = {
    "reasoning": Message(role="assistant", parts=(ReasoningPart(text="thinking"),)),
    "data": Message(role="assistant", parts=(TextPart(text="a", provider_data={
        "gemini-generate": {"thoughtSignature": "c2ln"}, "ollama-chat": {"x": 1}}),)),
    "message data": Message(role="user", parts=(TextPart(text="a"),), provider_data={
        "ollama-chat": {"name": "someone"}}),
    "two texts": Message(role="user", parts=(TextPart(text="a"), TextPart(text="b"))),
    "empty": Message(role="user"),
    "empty system": Message(role="system"),
    "system": Message(role="system", parts=(TextPart(text="be brief"),)),
    "adds tools": Message(role="system", parts=(TextPart(text="now h too"),),
                          tools=(ToolSpec(name="h"),)),
    "text in tool": Message(role="tool", parts=(TextPart(text="not a result"),)),
    "freeform": Message(role="assistant", parts=(ToolCallPart(
        id="c9", name="f", arguments="text", raw_arguments="text", freeform=True),)),
    "broken": Message(role="assistant", parts=(ToolCallPart.from_raw(
        id="c8", name="f", raw_arguments="{not json"),)),
    "list arguments": Message(role="assistant", parts=(ToolCallPart.from_raw(
        id="c8", name="f", raw_arguments="[1, 2]"),)),
    "made-up id": Message(role="assistant", parts=(ToolCallPart(
        id="call_" + "0" * 24, name="f", arguments={}),)),
    "made-up id result": Message(role="tool", parts=(ToolResultPart(
        call_id="call_" + "0" * 24, content="x", name="f"),)),
    "nameless result": Message(role="tool", parts=(ToolResultPart(call_id="c7", content="x"),)),
    "result found by id": Message(role="tool", parts=(ToolResultPart(call_id="c1", content=""),)),
    "result data": Message(role="tool", parts=(ToolResultPart(
        call_id="c1", content="x", name="f", provider_data={"gemini-generate": {"k": 1}}),)),
    "result media": Message(role="tool", parts=(ToolResultPart(call_id="c1", name="f", content=(
        TextPart(text="the screen:"), Image.from_bytes(PNG))),)),
    "media": Message(role="user", parts=(TextPart(text="see"), Image.from_bytes(PNG))),
    "call from the user": Message(role="user", parts=(ToolCallPart(
        id="c6", name="f", arguments={}),)),
    "opaque": Message(role="assistant", parts=(OpaquePart(
        wire="gemini-generate", kind="executableCode", payload={"executableCode": {}}),)),
}
"""Messages the one-pass wires' usual writers leave to the general path (or, for a result
found by its call or a user turn after the results, write as it does)."""


@pytest.mark.parametrize("wire", ONE_PASS)
@pytest.mark.parametrize("odd", ODD_FOR_ONE_PASS.values(), ids=ODD_FOR_ONE_PASS.keys())
def test_one_unusual_message_in_a_one_pass_wire_encodes_as_the_general_path_does(
        wire: str, odd: Message) -> None:
    usual, general = _both(wire, _among_usual(odd, "gemini-3-pro", ToolSpec(name="f")))
    assert usual == general


@pytest.mark.parametrize("wire", ONE_PASS)
@pytest.mark.parametrize("options", [
    None,
    {"ollama-chat": {"options": {"num_ctx": 4096}, "keep_alive": "5m"}},
    {"ollama-chat": {"options": "not an object"}},
    {"gemini-generate": {"_fill_signature": "skip_thought_signature_validator",
                         "generationConfig": {"topK": 3}, "tools": [{"googleSearch": {}}]}},
    {"gemini-generate": {"_result_parts": False, "_declarations": {"f": {"behavior": "x"}},
                         "_other": 1}},
    {"gemini-generate": {"_result_parts": "yes"}},
    {"gemini-generate": {"_schema_field": "schema"}},
    {"gemini-generate": {"_schema_field": "parameters"}},
    {"openai-chat": {"seed": 1}},
], ids=["none", "ollama options", "ollama bad options", "gemini options", "gemini settings",
        "bad result parts", "bad schema field", "openapi schemas", "another wire's"])
@pytest.mark.parametrize("reasoning", [None, "high"])
@pytest.mark.parametrize("choice", [None, ToolChoice(mode="none"), ToolChoice(
    mode="tool", name="f", parallel=False)])
def test_the_settings_around_the_usual_messages_encode_as_the_general_path_does(
        wire: str, options: Any, reasoning: str | None, choice: ToolChoice | None) -> None:
    request = Request(
        model="gemini-2.5-flash", system="be brief", temperature=0.5, max_tokens=100,
        tool_choice=choice, provider_options=options, reasoning=reasoning, tools=(ToolSpec(
            name="f", input_schema={"type": "object", "properties": {
                "q": {"type": "string", "format": "date"}}, "additionalProperties": False}),),
        messages=(
            Message.user("hi"),
            Message(role="assistant", parts=(ToolCallPart(id="c1", name="f", arguments={}),
                                             ToolCallPart(id="c2", name="f", arguments={}))),
            Message(role="tool", parts=(ToolResultPart(call_id="c1", content="a", name="f"),
                                        ToolResultPart(call_id="c2", content="b"))),
            Message.user("go on")))
    usual, general = _both(wire, request)
    assert usual == general


@pytest.mark.parametrize("wire", ONE_PASS)
def test_the_usual_request_is_written_in_one_pass(wire: str) -> None:
    """What the property tests above compare is the one pass, not the general path twice."""
    request = Request(model="m-1", system="be brief", tools=(ToolSpec(name="f"),), messages=(
        Message.user("hi"),
        Message(role="assistant", parts=(TextPart(text="looking"), ToolCallPart(
            id="c1", name="f", arguments={"q": "x"}))),
        Message(role="tool", parts=(ToolResultPart(call_id="c1", content="", is_error=True),)),
        Message.user("go on")))
    written = get_codec(wire).module.encode_usual(request)  # type: ignore[attr-defined]
    assert written is not None
    assert written == get_codec(wire).module.encode(request)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request=plain_requests())
def test_what_the_anthropic_walk_settles_is_what_the_whole_pass_finds(request: Request) -> None:
    encode = get_codec("anthropic-messages").module.encode

    def encoded(request: Request) -> Any:
        encode(request)
        return known(request)

    assert encoding(encoded)(request) == scan(request)


_SPOILERS = (None,) * 24 + ("format", "const", "$ref", "oneOf", "additionalProperties")
"""Mostly nothing, sometimes a keyword the server drops (or one the rewrite changes)."""


def _node(spoiler: str | None, kind: str, choices: list[Any], properties: dict[str, Any]
          ) -> dict[str, Any]:
    node: dict[str, Any] = {"type": kind}
    if choices:
        node["anyOf"] = choices
    if properties:
        node["properties"] = properties
    if spoiler is not None:
        node[spoiler] = "#/$defs/a" if spoiler == "$ref" else [{"type": "string"}] \
            if spoiler == "oneOf" else "x"
    return node


_properties = st.recursive(
    st.sampled_from(["string", "integer"]).map(lambda t: {"type": t, "description": t}),
    lambda inner: st.builds(_node, st.sampled_from(_SPOILERS), st.sampled_from(
        ["object", "array"]), st.lists(inner, max_size=2),
        st.dictionaries(tool_names, inner, max_size=2)),
    max_leaves=6)
_schemas = st.builds(
    lambda properties, spoiler, typed: {**({"type": "object"} if typed else {}),
                                        "properties": properties,
                                        **({spoiler: {}} if spoiler else {})},
    st.dictionaries(tool_names, _properties, max_size=3), st.sampled_from(_SPOILERS),
    st.booleans() | st.just(True))
"""Tool schemas as a caller writes them: mostly ones the server keeps whole, some with a
keyword it drops (or the rewrite changes) at one depth or another."""


@settings(max_examples=200, deadline=None)
@given(schema=_schemas)
@example(schema={"type": "object", "properties": {"a": {"type": "object", "properties": {
    "b": {"type": "string", "format": "date"}}}}})
@example(schema={"type": "object", "properties": {"a": {"anyOf": [{"const": 1}]}}})
def test_a_schema_ollama_keeps_is_told_at_a_look_as_the_rewrite_tells_it(
        schema: dict[str, Any]) -> None:
    from toolwire.codecs.ollama_chat.schema import _SchemaRewrite, rewrite_schema

    rewrite = _SchemaRewrite(schema)
    out = rewrite.run()
    sent, changes = rewrite_schema(schema)
    assert (sent, changes) == ((schema, []) if not rewrite.changes else (out, rewrite.changes))
    if not changes:
        assert sent is schema


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request=plain_requests())
@example(request=Request(model="m-1", system="be brief", tools=(ToolSpec(name="f"),), messages=(
    Message.user("hi"),
    Message(role="assistant", parts=(TextPart(text="looking"), ToolCallPart(
        id="c 1", name="f", arguments={"q": "x"}))),
    Message(role="tool", parts=(ToolResultPart(call_id="c 1", content="", is_error=True),)),
    Message.user("go on"))))
def test_the_anthropic_one_pass_writes_what_the_whole_codec_writes_on_its_general_path(
        request: Request) -> None:
    codec = get_codec("anthropic-messages")
    written = codec.module.encode_usual(request)  # type: ignore[attr-defined]
    if written is None:  # not the usual request: the codec's general path writes it
        return
    general = encoding(codec.encode, found=lambda r: EVERY)(request)
    assert (written.body, written.notes, written.headers) == (
        general.body, general.notes, general.headers)
