"""The canonical transcript values and their saved JSON form."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import argument_objects, texts, tool_rounds, tool_specs
from toolwire import (
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
    TranscriptError,
    Usage,
    from_json,
    to_json,
)
from toolwire.transcript_json import FORMAT_VERSION, dump


def test_values_are_frozen_and_keyword_only() -> None:
    part = TextPart(text="hi")
    with pytest.raises(AttributeError):
        part.text = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        TextPart("hi")  # type: ignore[misc]


def test_message_parts_become_a_tuple() -> None:
    m = Message(role="user", parts=[TextPart(text="a"), TextPart(text="b")])  # type: ignore[arg-type]
    assert m.parts == (TextPart(text="a"), TextPart(text="b"))
    assert m.text == "ab"


def test_from_raw_keeps_broken_arguments_and_says_where() -> None:
    call = ToolCallPart.from_raw(id="c1", name="f", raw_arguments='{"path": "a.py"')
    assert call.arguments is None
    assert call.raw_arguments == '{"path": "a.py"'
    assert call.parse_error is not None and "char 15" in call.parse_error
    assert call.arguments_text == '{"path": "a.py"'


def test_from_raw_empty_means_empty_object() -> None:
    call = ToolCallPart.from_raw(id="c1", name="f", raw_arguments="")
    assert call.arguments == {} and call.parse_error is None


def test_object_call_text_is_compact_json() -> None:
    call = ToolCallPart(id="c", name="f", arguments={"city": "Zürich"})
    assert call.arguments_text == '{"city":"Zürich"}'
    assert call.wire_arguments == {"city": "Zürich"}


def test_usage_adds_up() -> None:
    a = Usage(input_tokens=10, output_tokens=2, cache_read_tokens=4, cost=0.5)
    b = Usage(input_tokens=1, output_tokens=1, reasoning_tokens=3)
    total = a + b
    assert (total.input_tokens, total.output_tokens, total.total_tokens) == (11, 3, 14)
    assert total.cache_read_tokens == 4 and total.reasoning_tokens == 3 and total.cost == 0.5
    assert (Usage() + Usage()).cost is None


def test_every_part_kind_round_trips_exactly() -> None:
    message = Message(
        role="assistant",
        parts=(
            ReasoningPart(
                text="think",
                provider_data={"anthropic-messages": {"type": "thinking", "signature": "EqQB=="}},
            ),
            TextPart(text="hi", provider_data={"gemini-generate": {"thoughtSignature": "Cs0B"}}),
            ToolCallPart.from_raw(id="c1", name="f", raw_arguments='{"a": 1 }'),
            ToolCallPart.from_raw(id="c2", name="f", raw_arguments="{broken"),
            OpaquePart(wire="anthropic-messages", kind="server_tool_use",
                       payload={"type": "server_tool_use", "id": "srvtoolu_1"}),
        ),
    )
    reply = Reply(message=message, stop="tool_calls", raw_stop="tool_use",
                  usage=Usage(input_tokens=5, output_tokens=7, cost=0.01), model="m", id="msg_1")
    text = json.dumps(dump(reply))
    assert from_json(json.loads(text)) == reply


def test_request_round_trips() -> None:
    req = Request(
        model="m",
        system="be brief",
        messages=(Message.user("hi"),),
        tools=(ToolSpec(name="f", description="d", input_schema={"type": "object"}, strict=True),),
        tool_choice=ToolChoice(mode="tool", name="f", parallel=False),
        max_tokens=100,
        temperature=0.0,
        stream=True,
        provider_options={"anthropic-messages": {"thinking": {"type": "adaptive"}}},
    )
    assert from_json(to_json(req)) == req


def test_unknown_version_and_kind_are_clear_errors() -> None:
    with pytest.raises(TranscriptError, match="version 99 is not supported"):
        from_json({"toolwire": 99, "type": "message", "role": "user", "parts": []})
    with pytest.raises(TranscriptError, match="unknown part type 'picture'"):
        from_json({"type": "picture"})
    with pytest.raises(TranscriptError, match="missing key 'call_id'"):
        from_json({"type": "tool_result", "content": "x"})
    assert dump(Usage())["toolwire"] == FORMAT_VERSION


@settings(max_examples=150, deadline=None)
@given(
    rounds=st.lists(tool_rounds(text_args=True) | tool_rounds(text_args=False), max_size=3),
    task=texts,
    tools=st.lists(tool_specs(), max_size=3),
    args=argument_objects,
)
def test_any_transcript_round_trips(rounds: list[list[Message]], task: str,
                                    tools: list[ToolSpec], args: object) -> None:
    messages = [Message.user(task)] + [m for pair in rounds for m in pair]
    req = Request(model="m", messages=tuple(messages), tools=tuple(tools),
                  provider_options={"x": {"args": args}})
    assert from_json(json.loads(json.dumps(to_json(req)))) == req


def test_values_are_frozen_keyword_only_and_keep_their_declared_fields() -> None:
    import inspect

    for cls in (TextPart, ReasoningPart, ToolCallPart, OpaquePart, Message, ToolSpec,
                ToolChoice, Request, Usage, Reply):
        params = inspect.signature(cls).parameters.values()
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params), cls
        names = list(cls.__struct_fields__)
        assert [p.name for p in params] == names, cls
    a, b = ToolSpec(name="f"), ToolSpec(name="f")
    assert a.input_schema == {"type": "object", "properties": {}}
    assert a.input_schema is not b.input_schema  # a default factory, called per value
    assert Reply(message=Message.user("x")).usage == Usage()
    assert Message(role="user", parts=[TextPart(text="x")]).parts == (TextPart(text="x"),)
    assert Request(model="m", messages=[Message.user("x")]).messages == (Message.user("x"),)
    with pytest.raises(AttributeError):
        a.name = "g"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ToolSpec(name="f", colour="red")  # type: ignore[call-arg]


# --------------------------------------------------------------------------- media


def test_media_constructors_read_files_and_guess_types(tmp_path: object) -> None:
    from pathlib import Path

    from toolwire import Audio, Document, Image, MediaPart

    folder = Path(str(tmp_path))
    (folder / "chart.png").write_bytes(b"\x89PNG\r\n\x1a\n1234")
    image = Image.from_path(folder / "chart.png")
    assert (image.kind, image.media_type, image.name, image.size) == (
        "image", "image/png", "chart.png", 12)
    assert Document.from_bytes(b"%PDF-1.4").media_type == "application/pdf"
    assert Document.from_text("hi").media_type == "text/plain"
    assert Audio.from_bytes(b"RIFF\x00\x00\x00\x00WAVEfmt ").media_type == "audio/wav"
    assert Image.from_url("https://example.com/a.jpg").media_type == "image/jpeg"
    assert Image.from_file_id("anthropic-messages", "file_1").file_ids == {
        "anthropic-messages": "file_1"}
    with pytest.raises(TranscriptError, match=r"missing\.png"):
        Image.from_path(folder / "missing.png")
    with pytest.raises(TranscriptError, match="needs its data"):
        MediaPart(kind="image", media_type="image/png")


def test_media_results_round_trip_through_json_and_version_1_still_reads() -> None:
    from toolwire import Document, Image

    result = ToolResultPart(call_id="c1", content=[
        TextPart(text="page:"), Image.from_bytes(b"\x89PNG\r\n\x1a\n"),
        Document.from_url("https://example.com/a.pdf", name="a.pdf")])
    assert isinstance(result.content, tuple)
    assert result.text == "page:" and len(result.media) == 2
    msg = Message(role="tool", parts=(result,))
    saved = dump(msg)
    assert saved["toolwire"] == FORMAT_VERSION == 2
    assert from_json(json.loads(json.dumps(saved))) == msg
    old = {"toolwire": 1, "type": "message", "role": "tool", "parts": [
        {"type": "tool_result", "call_id": "c1", "content": "42"}]}
    assert from_json(old) == Message(role="tool", parts=(
        ToolResultPart(call_id="c1", content="42"),))
    broken = {"type": "media", "kind": "image", "media_type": "image/png", "data": "@@"}
    with pytest.raises(TranscriptError, match="base64"):
        from_json(broken)
    with pytest.raises(TranscriptError, match="text or media"):
        from_json({"type": "tool_result", "call_id": "c", "content": [{"type": "reasoning"}]})


_PARTS = st.lists(st.sampled_from([
    TextPart(text="a"), ToolCallPart(id="c1", name="f", arguments={}),
    ToolCallPart(id="c2", name="g", arguments={"x": 1}), ReasoningPart(text="why"),
]), max_size=4)


@given(parts=_PARTS)
def test_the_tool_calls_are_the_call_parts_in_order(parts: list[Any]) -> None:
    """A message of one call gives its own parts as its calls: the same calls, in order, as
    picking them out of any other message gives."""
    message = Message(role="assistant", parts=tuple(parts))
    expected = tuple(p for p in parts if isinstance(p, ToolCallPart))
    assert message.tool_calls == expected
    assert Reply(message=message).tool_calls == expected
    assert all(type(c) is ToolCallPart for c in message.tool_calls)
