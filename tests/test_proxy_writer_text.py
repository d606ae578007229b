"""The Anthropic writer's events written from text with their values put in (its head, a text
block's start and its deltas) are byte for byte what its general `_sse` writes for the same
event's dict; its stream's tail, of which only the last events are written, is the last events
of the whole reply's stream (`encode_stream`); and `toolwire.codecs.base.dumps`, with its
encoder made once, writes what ``json.dumps`` writes with the same settings."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire.codecs.anthropic_messages.stream import encode_stream, encode_tail
from toolwire.codecs.base import dumps
from toolwire.proxy.live import Writer
from toolwire.proxy.writers import AnthropicWriter
from toolwire.transcript import (
    Message,
    ReasoningPart,
    Reply,
    Request,
    TextPart,
    ToolCallPart,
    Usage,
)

# any text that can go out as UTF-8 (a lone surrogate cannot, either way)
TEXT = st.text(st.characters(exclude_categories=["Cs"]))
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12)


def request(model: str) -> Request:
    return Request(model=model, messages=(Message(role="user", parts=(TextPart(text="hi"),)),))


def general(writer: AnthropicWriter, kind: str, **fields: Any) -> bytes:
    return writer._sse({"type": kind, **fields})


@given(model=TEXT, texts=st.lists(TEXT, min_size=1, max_size=4), calls=st.integers(0, 2))
def test_the_head_and_text_events_are_the_general_events(model: str, texts: list[str],
                                                         calls: int) -> None:
    writer = AnthropicWriter("anthropic-messages", request(model))
    assert writer.head() == [general(writer, "message_start", message={
        "id": writer.reply_id, "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0}})]
    for position in range(calls):  # text after calls: the block before it is closed
        writer.call(position, f"toolu_{position}", "f")
    expected: list[bytes] = []
    if calls:
        expected.append(general(writer, "content_block_stop", index=writer.index))
    index = writer.index + 1
    expected.append(general(writer, "content_block_start", index=index,
                            content_block={"type": "text", "text": ""}))
    for text in texts:
        expected.append(general(writer, "content_block_delta", index=index,
                                delta={"type": "text_delta", "text": text}))
    written = [chunk for text in texts for chunk in writer.text(text)]
    assert written == expected


@given(value=JSON)
def test_dumps_writes_what_json_dumps_writes(value: Any) -> None:
    assert dumps(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


REPLIES = [
    Reply(message=Message.assistant("Sunny in Rome."), usage=Usage(input_tokens=9,
                                                                    output_tokens=4)),
    Reply(message=Message(role="assistant", parts=(
        ReasoningPart(text="Rome first.", provider_data={"anthropic-messages": {
            "type": "thinking", "thinking": "Rome first.", "signature": "sig-1"}}),
        TextPart(text="Checking."),
        ToolCallPart(id="toolu_1", name="get_weather", arguments={"city": "Rome"}))),
        stop="tool_calls", usage=Usage(input_tokens=20, output_tokens=12,
                                       cache_read_tokens=5)),
    Reply(message=Message.assistant("Cut off"), stop="max_tokens"),
    Reply(message=Message(role="assistant", parts=())),
]


@pytest.mark.parametrize("reply", REPLIES)
def test_the_tail_is_the_whole_streams_last_events(reply: Reply) -> None:
    asked = request("claude-x")
    writer = AnthropicWriter("anthropic-messages", asked)
    whole = encode_stream(reply, request=asked)
    assert writer.tail(reply) == Writer.tail(writer, reply) == whole[-writer.TAIL:]
    assert encode_tail(reply, 3, request=asked) == whole[-3:]
