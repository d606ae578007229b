"""The one pass over a request (`toolwire.codecs.traits`) that lets the checks around every
wire's encode (freeform calls, added tools, media limits, system messages, cache markers and
betas a caller wrote) leave the usual request alone.

The pass is checked against a plain reading of the request, and every wire's encode against
the same encode with every check taking its general path (`EVERY`): the same body, notes and
headers, over requests holding each thing the pass looks for, and the usual ones."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strategies import PNG, call_ids, texts, tool_names, tool_rounds, tool_specs
from toolwire import Image
from toolwire.codecs import get_codec
from toolwire.codecs.traits import EVERY, adds_tools, encoding, freeform, media, scan
from toolwire.errors import ConfigError
from toolwire.transcript import (
    Cache,
    MediaPart,
    Message,
    OpaquePart,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)

WIRES = ("anthropic-messages", "openai-chat", "openai-responses", "ollama-chat",
         "gemini-generate", "bedrock-converse")
MARKED = {"anthropic-messages": {"cache_control": {"type": "ephemeral"}}}


@st.composite
def requests(draw: st.DrawFn) -> Request:
    """A conversation that may hold each thing the pass looks for, or none of them."""
    tools = draw(st.lists(tool_specs(), max_size=2, unique_by=lambda t: t.name))
    messages = [Message.user(draw(texts))]
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["round", "round", "freeform", "adds", "empty_system",
                                     "system", "media", "result_media", "marked", "opaque",
                                     "data"]))
        if kind == "round":
            messages += draw(tool_rounds(text_args=draw(st.booleans())))
        elif kind == "freeform":
            name, call_id, text = draw(tool_names), draw(call_ids), draw(texts)
            tools.append(ToolSpec(name=name, freeform=True))
            messages += [
                Message(role="assistant", parts=(ToolCallPart(
                    id=call_id, name=name, arguments=text, raw_arguments=text,
                    freeform=True),)),
                Message(role="tool", parts=(ToolResultPart(call_id=call_id, content="ok"),))]
        elif kind == "adds":
            messages.append(Message(role="system", parts=(TextPart(text=draw(texts)),),
                                    tools=(draw(tool_specs()),)))
        elif kind == "empty_system":
            messages.append(Message(role="system"))
        elif kind == "system":
            messages.append(Message(role="system", parts=(TextPart(text=draw(texts)),)))
        elif kind == "media":
            messages.append(Message(role="user", parts=(TextPart(text=draw(texts)),
                                                        Image.from_bytes(PNG))))
        elif kind == "result_media":
            call_id = draw(call_ids)
            messages += [
                Message(role="assistant", parts=(ToolCallPart(id=call_id, name="shot",
                                                              arguments={}),)),
                Message(role="tool", parts=(ToolResultPart(call_id=call_id, content=(
                    TextPart(text="the screen:"), Image.from_bytes(PNG))),))]
        elif kind == "marked":  # more cache markers than a request may carry
            messages += [Message(role="user", parts=tuple(
                TextPart(text=f"{draw(texts)} {n}", provider_data=MARKED) for n in range(3)))]
        elif kind == "opaque":
            messages.append(Message(role="user", parts=(
                TextPart(text=draw(texts)),
                OpaquePart(wire="anthropic-messages", kind="tool_addition", payload={
                    "type": "tool_addition",
                    "tool": {"type": "tool_reference", "name": "later"}}))))
        else:
            messages.append(Message(role="user", parts=(TextPart(text=draw(texts)),),
                                    provider_data={"openai-chat": {"name": "someone"}}))
    if any(m.role == "tool" for m in messages) and not any(t.name == "shot" for t in tools):
        tools.append(ToolSpec(name="shot"))
    options = draw(st.sampled_from([None, {"openai-chat": {"seed": 1}},
                                    {"anthropic-messages": {"top_k": 3}}]))
    cache = draw(st.sampled_from([None, Cache()]))
    return Request(model="m-1", messages=tuple(messages), tools=tuple(tools),
                   provider_options=options, cache=cache)


def plainly(request: Request) -> dict[str, bool]:
    """What the pass should find, read the plainest way."""
    asked = [m for m in request.messages if m.role != "assistant"]
    return {
        "freeform": any(t.freeform for t in request.tools)
        or any(t.freeform for m in request.messages for t in m.tools)
        or any(type(p) is ToolCallPart and p.freeform for m in request.messages
               if m.role == "assistant" for p in m.parts),
        "media": any(isinstance(p, MediaPart)
                     for m in asked for p in m.parts)
        or any(isinstance(p, ToolResultPart) and not isinstance(p.content, str)
               for m in asked for p in m.parts),
        "added": any(m.tools for m in request.messages),
        "empty_system": any(m.role == "system" and not m.parts for m in request.messages),
        "system": any(m.role == "system" for m in request.messages),
    }


def own_words(request: Request) -> bool:
    return request.provider_options is not None or any(
        m.provider_data is not None for m in request.messages) or any(
        isinstance(p, OpaquePart) or p.provider_data is not None
        or (isinstance(p, ToolResultPart) and not isinstance(p.content, str))
        for m in request.messages for p in m.parts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests())
def test_the_pass_finds_what_a_plain_reading_finds(request: Request) -> None:
    found = scan(request)
    assert {k: getattr(found, k) for k in plainly(request)} == plainly(request)
    assert found.verbatim == own_words(request)
    # the quicker questions a check asks when the whole pass was not made give the same answers
    assert freeform(request) == found.freeform
    assert media(request) == found.media
    assert adds_tools(request) == (found.added or found.empty_system)


def _both(codec: Any, request: Request) -> tuple[Any, Any]:
    def outcome(encode: Any) -> Any:
        try:
            out = encode(request)
        except ConfigError as exc:  # what the wire refuses: refused both ways, in the same words
            return str(exc)
        return out.body, out.notes, out.headers

    return outcome(codec.encode), outcome(encoding(codec.encode, found=lambda r: EVERY))


@pytest.mark.parametrize("wire", WIRES)
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(request=requests())
def test_every_wire_encodes_as_its_general_path_does(wire: str, request: Request) -> None:
    usual, general = _both(get_codec(wire), request)
    assert usual == general


def test_a_request_with_nothing_unusual_is_found_to_hold_nothing() -> None:
    request = Request(model="m", messages=(
        Message.user("hi"),
        Message(role="assistant", parts=(TextPart(text="looking"), ToolCallPart(
            id="c1", name="f", arguments={"q": "x"}))),
        Message(role="tool", parts=(ToolResultPart(call_id="c1", content="found"),))),
        tools=(ToolSpec(name="f"),))
    assert not any(scan(request))


def test_markers_a_caller_wrote_are_still_capped_at_four() -> None:
    marked = tuple(Message(role="user", parts=(TextPart(text=f"part {n}",
                                                        provider_data=MARKED),))
                   for n in range(3))
    request = Request(model="claude-sonnet-4-5", messages=(
        *marked, Message.assistant("ok"), *marked))
    out = get_codec("anthropic-messages").encode(request)
    kept = [b for m in out.body["messages"] for b in m["content"] if "cache_control" in b]
    assert len(kept) == 4
    assert [n.subject for n in out.notes if n.kind == "cache_breakpoint_dropped"] == [
        "messages[0].content[0]", "messages[1].content[0]"]


def test_a_tool_addition_block_a_caller_wrote_still_gets_its_beta() -> None:
    request = Request(model="claude-sonnet-4-5", messages=(Message(role="user", parts=(
        TextPart(text="hi"),
        OpaquePart(wire="anthropic-messages", kind="tool_addition", payload={
            "type": "tool_addition", "tool": {"type": "tool_reference", "name": "later"}}))),))
    headers = get_codec("anthropic-messages").encode(request).headers or {}
    assert "anthropic-beta" in headers


def test_media_over_a_wire_limit_is_still_refused() -> None:
    request = Request(model="claude-sonnet-4-5", messages=(Message(role="user", parts=tuple(
        Image.from_bytes(PNG) for _ in range(101))),))
    with pytest.raises(ConfigError, match="images"):
        get_codec("anthropic-messages").encode(request)


def test_an_encode_inside_another_of_the_same_request_keeps_what_was_found() -> None:
    request = Request(model="m", messages=(Message.user("hi"),))
    seen: list[Any] = []

    def inner(r: Request) -> None:
        from toolwire.codecs.traits import traits
        seen.append(traits(r))

    encoding(encoding(inner), found=lambda r: EVERY)(request)
    assert seen == [EVERY]
