"""What a conversion reports of the fields a source wire kept on messages and parts
(`toolwire.conversion._part_losses`), found by a quick walk that looks closer only at a
message keeping something, is what the plainest reading of every message and part finds; a
conversion whose encode found nothing of any wire's own in the request skips the walk, and
reports the same."""

from __future__ import annotations

from typing import Any
from unittest import mock

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from strategies import texts
from toolwire import conversion
from toolwire.codecs import Note, get_codec
from toolwire.codecs.registry import get_wire
from toolwire.codecs.traits import scan
from toolwire.conversion import _own_fields, _part_losses, convert
from toolwire.errors import ToolwireError
from toolwire.transcript import (
    Message,
    OpaquePart,
    ReasoningPart,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

SOURCES = ("openai-chat", "anthropic-messages", "ollama-chat", "gemini-generate")
"""Wires whose bodies are open and closed (a closed body's blocks kept whole are named)."""

_own = st.dictionaries(st.sampled_from(["cache_control", "thoughtSignature", "id", "name",
                                        "_generated_id", "images", "status"]),
                       st.one_of(st.just({"type": "ephemeral"}), st.just(["a", "b"]),
                                 st.just([1]), texts), max_size=3)
_data: st.SearchStrategy[Any] = st.none() | st.just({}) | st.dictionaries(
    st.sampled_from(SOURCES), _own, min_size=1, max_size=2)


@st.composite
def _parts(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["text", "call", "result", "reasoning", "opaque"]))
    data = draw(_data)
    if kind == "text":
        return TextPart(text=draw(texts), provider_data=data)
    if kind == "call":
        return ToolCallPart(id="c1", name="f", arguments={}, provider_data=data)
    if kind == "result":
        return ToolResultPart(call_id="c1", content="ok", provider_data=data)
    if kind == "reasoning":
        return ReasoningPart(text="hm", provider_data=data)
    return OpaquePart(wire=draw(st.sampled_from(SOURCES)), kind="block",
                      payload=draw(st.one_of(_own, st.just([1]))))


_requests = st.builds(
    lambda messages: Request(model="m", messages=tuple(messages)),
    st.lists(st.builds(lambda role, parts, data: Message(role=role, parts=tuple(parts),
                                                         provider_data=data),
                       st.sampled_from(["user", "assistant", "tool"]),
                       st.lists(_parts(), max_size=3), _data), max_size=4))


def _plainly(request: Request, source: str, target: str) -> list[Note]:
    """Every message, then its parts but reasoning and opaque blocks, then (a closed body)
    its opaque blocks of the source's: each one's fields of the source's own (worded by
    `_own_fields`)."""
    notes: list[Note] = []
    closed = get_wire(source).closed_body
    for i, message in enumerate(request.messages):
        places: list[tuple[str, Any]] = [(f"messages[{i}]", message)]
        places += [(f"messages[{i}].parts[{j}]", p) for j, p in enumerate(message.parts)
                   if not isinstance(p, ReasoningPart | OpaquePart)]
        if closed:
            places += [(f"messages[{i}].parts[{j}]", p) for j, p in enumerate(message.parts)
                       if isinstance(p, OpaquePart) and p.wire == source]
        for subject, value in places:
            data = value.payload if isinstance(value, OpaquePart) else (
                value.provider_data or {}).get(source)
            _own_fields(notes, subject, data, source, target)
    return notes


@settings(max_examples=300, deadline=None)
@given(request=_requests, source=st.sampled_from(SOURCES))
def test_the_quick_walk_reports_what_a_plain_reading_finds(request: Request,
                                                            source: str) -> None:
    assert _part_losses(request, source, "bedrock-converse") == _plainly(
        request, source, "bedrock-converse")


def test_a_closed_body_names_the_field_of_a_block_it_kept_whole_after_the_parts() -> None:
    request = Request(model="m", messages=(Message(role="assistant", parts=(
        OpaquePart(wire="gemini-generate", kind="executableCode",
                   payload={"executableCode": {"code": "1"}}),
        TextPart(text="hi", provider_data={"gemini-generate": {"thoughtSignature": "c2ln"}}),
    )),))
    assert [n.subject for n in _part_losses(request, "gemini-generate", "openai-chat")] == [
        "messages[0].parts[1]", "messages[0].parts[0]"]


@settings(max_examples=300, deadline=None)
@given(request=_requests, source=st.sampled_from(SOURCES))
def test_a_request_holding_nothing_of_a_wire_own_keeps_nothing_to_report(
        request: Request, source: str) -> None:
    if not scan(request).verbatim:
        assert _part_losses(request, source, "bedrock-converse") == []


def _unknown(encode: Any, request: Request) -> tuple[Any, None]:
    return encode(request), None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request=_requests, source=st.sampled_from(SOURCES),
       target=st.sampled_from(("anthropic-messages", "openai-chat", "bedrock-converse")))
def test_a_conversion_reports_the_same_whether_or_not_its_encode_found_what_the_request_holds(
        request: Request, source: str, target: str) -> None:
    try:  # a request the source wire cannot write (a stored block that is not one): no body
        body = get_codec(source).encode_request(request)
        quick = convert(body, source, target)
    except (ToolwireError, TypeError, ValueError):
        assume(False)
        return
    with mock.patch.object(conversion, "noting", _unknown):
        walked = convert(body, source, target)
    assert quick.losses == walked.losses
    assert quick.body == walked.body
