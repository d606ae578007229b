"""Argument text a model broke is read once on its way from a stream to the loop.

The stream decoder that joined the pieces reads it; the wire's parts, `ToolCallPart.from_raw`
and the argument check reuse that failure (`toolwire.transcript.read_arguments`) rather than
read it again, and the error the model is given is the one the check words for the text.
Parses are counted at the standard library's decoder, which every failed read ends in.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire import Agent
from toolwire.codecs import get_codec
from toolwire.emulator import Emulator, Raw
from toolwire.errors import ToolCallError
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.schema.tool import Tool
from toolwire.transcript import Message, Reply, ToolCallPart, ToolResultPart

BROKEN = '{"city": "Paris", "days": [1, 2'
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"},
                                           "days": {"type": "array"}}, "required": ["city"]}


def _tool() -> Tool:
    return Tool(name="weather", description="The weather in a city.", input_schema=SCHEMA,
                fn=lambda city, days=(): f"{city}: sunny")


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The texts the standard library's JSON decoder is given, in order."""
    seen: list[str] = []
    decode = json.JSONDecoder.decode

    def counted(self: json.JSONDecoder, s: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(s)
        return decode(self, s, *args, **kwargs)

    monkeypatch.setattr(json.JSONDecoder, "decode", counted)
    yield seen


_PIECES = {"input_json_delta": "partial_json", "arguments_delta": "arguments"}
"""The stream deltas that carry a piece of a call's arguments, and the field holding it."""


def _with_arguments(wire: str, text: str) -> list[bytes]:
    """A streamed reply with one call, in ``wire``, whose argument pieces add up to ``text``
    (the server's words, which no codec would write for a call it holds)."""
    whole = Reply(message=Message(role="assistant", parts=(
        ToolCallPart(id="call_1", name="weather", arguments={"city": "Paris"}),)),
        stop="tool_calls")
    out: list[bytes] = []
    given = False
    for chunk in get_codec(wire).encode_stream(whole):
        head, sep, data = chunk.partition(b"data: ")
        event = json.loads(data)
        delta = event.get("delta")
        key = _PIECES.get(delta.get("type")) if isinstance(delta, dict) else None
        if key is not None:
            delta[key], given = ("" if given else text), True
        out.append(head + sep + json.dumps(event).encode() + b"\n\n")
    assert given
    return out


@pytest.mark.parametrize(("wire", "provider"), [("anthropic-messages", "anthropic"),
                                                ("gemini-interactions", "gemini-interactions")])
async def test_broken_streamed_arguments_are_read_once(wire: str, provider: str,
                                                       reads: list[str]) -> None:
    text = f"{BROKEN} {wire}"  # a text no other test has read before
    broken = Raw(chunks=_with_arguments(wire, text))
    with pytest.raises(ToolCallError) as expected:
        _tool().validate(text)  # what the check says of the text, read the usual way
    said = str(expected.value)
    answer = Reply(message=Message.assistant("Sorry, let me try again later."))
    async with Emulator([broken, answer]) as emu:
        model = make_model(f"{provider}:m@{emu.base_url}", env={}, retry=RetryPolicy(base=0.001))
        reads.clear()
        result = await Agent(model=model, tools=[_tool()], stream=True).arun("Weather?")
        await model.aclose()
        emu.assert_done()
    assert reads.count(text) == 1
    results = [p for m in result.messages for p in m.parts if isinstance(p, ToolResultPart)]
    assert len(results) == 1 and results[0].is_error
    assert said in results[0].text


broken_texts = st.builds(
    lambda value, cut: json.dumps(value)[:cut],
    st.dictionaries(st.text(max_size=5), st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False,
                                                               allow_infinity=False)
        | st.text(max_size=8), lambda inner: st.lists(inner, max_size=3), max_leaves=6),
        min_size=1, max_size=4),
    st.integers(min_value=1, max_value=60),
) | st.text(max_size=40)


@settings(max_examples=300, deadline=None)
@given(broken_texts)
def test_the_reused_failure_says_what_reading_again_says(text: str) -> None:
    tool = _tool()
    call = ToolCallPart.from_raw(id="c", name="weather", raw_arguments=text)
    try:
        again = tool.validate(text)
    except ToolCallError as exc:
        with pytest.raises(ToolCallError) as reused:
            tool.validate_part(call)
        assert str(reused.value) == str(exc) and reused.value.kind == exc.kind
    else:
        assert tool.validate_part(call) == again
