"""The direct way a wire writes the usual messages (one text per user or system message, texts
and function calls from the assistant, text results, nothing in a wire's own words) gives the
body, notes and headers its general path gives, the one every encode takes while the one pass
over the request says it holds everything (`toolwire.codecs.traits.EVERY`), so that every
check inside takes its general path too."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strategies import call_ids, object_call, text_call, texts, tool_names
from toolwire.codecs import get_codec
from toolwire.codecs.traits import EVERY, encoding, known, scan
from toolwire.errors import ConfigError
from toolwire.transcript import (
    Message,
    ReasoningPart,
    Request,
    TextPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
    ToolSpec,
)

WIRES = ("openai-responses", "openai-chat", "anthropic-messages")
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
    encode = get_codec(wire).module.encode

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
    request = Request(model="m-1", tools=(ToolSpec(name="f"), ToolSpec(name="g", freeform=True)),
                      messages=(
        Message.user("hi"),
        Message(role="assistant", parts=(TextPart(text="looking"), ToolCallPart(
            id="c1", name="f", arguments={"q": "x"}))),
        Message(role="tool", parts=(ToolResultPart(call_id="c1", content="found"),)),
        odd,
        Message.user("go on")))
    usual, general = _both(wire, request)
    assert usual == general


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request=plain_requests())
def test_what_the_anthropic_walk_settles_is_what_the_whole_pass_finds(request: Request) -> None:
    encode = get_codec("anthropic-messages").module.encode

    def encoded(request: Request) -> Any:
        encode(request)
        return known(request)

    assert encoding(encoded)(request) == scan(request)
