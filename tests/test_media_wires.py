"""Media on every wire: a request with an image and a PDF from the user and an image returned
by a tool, encoded and read back, with replies decoded whole and streamed in its history.

Each wire reads back exactly the canonical transcript it was given, except for what the wire
cannot carry, which is written out per wire below (and reported as notes when encoding).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import strategies
from strategies import PDF, PNG
from toolwire import Document, Image
from toolwire.codecs import get_codec
from toolwire.codecs.registry import get_wire
from toolwire.transcript import (
    Message,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    replace,
)
from wire_data import data, looped, table

WIRES = looped()
MODEL = "gemini-2.5-flash"  # any model name will do; on Gemini one without result parts


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def media_history(wire: str, *, streamed: bool) -> Request:
    return strategies.media_history(wire, MODEL, streamed=streamed)


def decode(wire: str, body: dict[str, Any]) -> Request:
    codec = get_codec(wire)
    if get_wire(wire).model_in_path:
        return codec.decode_request(as_json(body), model=MODEL, stream=False)
    return codec.decode_request(as_json(body))


PLACEHOLDER = "[document report.pdf (application/pdf) omitted: this model API cannot take it]"

def expected(wire: str, request: Request) -> tuple[Message, ...]:
    """What ``wire`` reads back, written out: the request, less what the wire cannot carry."""
    messages = list(request.messages)
    user = messages[0]
    if "document" not in data(wire).MEDIA_CARRIED:  # a placeholder text after the user's text
        messages[0] = replace(user, parts=(TextPart(text=f"compare these\n{PLACEHOLDER}"),
                                           user.parts[1]))
    elif not data(wire).MEDIA_NAMES:  # the document's name is not sent
        messages[0] = replace(user, parts=(*user.parts[:2], replace(user.parts[2], name=None)))
    return tuple(messages)


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("wire", WIRES)
def test_media_in_the_user_message_and_a_tool_result_read_back_on_every_wire(
        wire: str, streamed: bool) -> None:
    request = media_history(wire, streamed=streamed)
    encoded = get_codec(wire).encode(request)
    assert sorted({n.kind for n in encoded.notes} - {"max_tokens_defaulted"}) == \
        data(wire).MEDIA_NOTES
    back = decode(wire, encoded.body)
    assert back.messages == expected(wire, request)
    result = back.messages[2].tool_results[0]
    assert result.text == "the screen:" and [m.data for m in result.media] == [PNG]
    # Read back and sent again, the body is the same.
    assert get_codec(wire).encode(back).body == encoded.body


# --------------------------------------------------------------------------- limits before sending

MB = 1024 * 1024


def png(width: int, height: int, extra: int = 0) -> bytes:
    """A PNG header saying ``width`` x ``height`` (all a size check reads), ``extra`` bytes
    after it."""
    return (b"\x89PNG\r\n\x1a\n" + (13).to_bytes(4, "big") + b"IHDR"
            + width.to_bytes(4, "big") + height.to_bytes(4, "big") + b"\x08\x02\x00\x00\x00"
            + bytes(extra))


def user_media(*parts: Any) -> Request:
    return Request(model=MODEL, max_tokens=64,
                   messages=(Message(role="user", parts=(TextPart(text="look"), *parts)),))


def images(n: int, width: int = 64, extra: int = 0) -> list[Any]:
    return [Image.from_bytes(png(width, width, extra)) for _ in range(n)]


LIMIT_CASES = [
    ("anthropic-messages", lambda: user_media(*images(101)), "at most 100 images"),
    ("anthropic-messages", lambda: user_media(*images(1, extra=4 * MB)),
     "the image is 5592444 bytes as base64, over the 5 MB"),
    ("anthropic-messages", lambda: user_media(*images(1, 9000)), "9000x9000 pixels.*8000x8000"),
    ("anthropic-messages", lambda: user_media(*images(21, 2500)),
     "2500x2500 pixels.*2000x2000 \\(with more than 20 images"),
    ("openai-chat", lambda: user_media(*images(501)), "at most 500 images"),
    ("openai-chat", lambda: user_media(*images(3, extra=19 * MB)), "at most 50 MB of images"),
    ("openai-responses", lambda: user_media(*images(501)), "at most 500 images"),
    ("openai-responses", lambda: user_media(*images(3, extra=19 * MB)),
     "at most 50 MB of images"),
    ("gemini-generate", lambda: user_media(*images(2, extra=8 * MB)),
     "at most 20 MB of inline media"),
    ("bedrock-converse", lambda: user_media(*images(21)), "at most 20 images in one message"),
    ("bedrock-converse", lambda: user_media(*[Document.from_bytes(PDF) for _ in range(6)]),
     "at most 5 documents in one message"),
    ("bedrock-converse", lambda: user_media(*images(1, 8001)), "8001x8001 pixels.*8000x8000"),
]


@pytest.mark.parametrize(("wire", "make", "match"), LIMIT_CASES,
                         ids=[f"{c[0]}-{n}" for n, c in enumerate(LIMIT_CASES)])
def test_requests_over_a_wires_media_limits_are_refused_before_sending(
        wire: str, make: Any, match: str) -> None:
    from toolwire.errors import ConfigError

    with pytest.raises(ConfigError, match=match):
        get_codec(wire).encode(make())


@pytest.mark.parametrize("wire", WIRES)
def test_requests_inside_the_limits_go_unchanged(wire: str) -> None:
    """Twenty small images, one 2000 pixels a side, and a PDF: every wire takes them."""
    request = user_media(*images(19), *images(1, 2000), Document.from_bytes(PDF))
    encoded = get_codec(wire).encode(request)
    back = decode(wire, encoded.body).messages[0].media
    assert [m.data for m in back if m.kind == "image"] == [m.data for m in request.messages[0].media
                                                          if m.kind == "image"]


def test_bedrock_sends_a_document_with_a_text_naming_it_when_the_message_has_none() -> None:
    request = Request(model=MODEL, messages=(Message(role="user", parts=(
        Document.from_bytes(PDF, name="q3 report.pdf"),)),))
    encoded = get_codec("bedrock-converse").encode(request)
    content = encoded.body["messages"][0]["content"]
    assert content[1] == {"text": "Attached: q3 report"}
    assert [(n.kind, n.subject) for n in encoded.notes] == [("text_added", "messages[0]")]


def test_gemini_result_parts_of_a_type_function_responses_refuse_go_after_them() -> None:
    from toolwire import Audio

    request = Request(model="gemini-3-pro-preview", messages=(
        Message.user("record it"),
        Message(role="assistant", parts=(ToolCallPart(id="r1", name="rec", arguments={}),)),
        Message(role="tool", parts=(ToolResultPart(call_id="r1", name="rec", content=(
            Audio.from_bytes(b"RIFF0000WAVEfmt ", "audio/wav"),)),)),
    ))
    encoded = get_codec("gemini-generate").encode(request)
    turn = encoded.body["contents"][2]["parts"]
    assert "parts" not in turn[0]["functionResponse"]
    assert turn[1] == {"text": "[media returned by tool call r1]"}
    assert turn[2]["inlineData"]["mimeType"] == "audio/wav"
    assert [n.kind for n in encoded.notes] == ["media_moved"]
    assert "take only application/pdf" in encoded.notes[0].detail
    assert decode("gemini-generate", encoded.body).messages[2] == request.messages[2]


# --------------------------------------------------------------------------- conversion

WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(20)


def conversion_request() -> Request:
    """An image, a PDF and a wav recording from the user; a tool's text and image."""
    from toolwire import Audio

    return Request(model="m", max_tokens=64, tools=(ToolSpec(name="shot"),), messages=(
        Message(role="user", parts=(
            TextPart(text="compare these"), Image.from_bytes(PNG),
            Document.from_bytes(PDF, name="report.pdf"),
            Audio.from_bytes(WAV, "audio/wav", name="memo.wav"))),
        Message(role="assistant", parts=(ToolCallPart(id="call_1", name="shot", arguments={}),)),
        Message(role="tool", parts=(ToolResultPart(call_id="call_1", name="shot", content=(
            TextPart(text="the screen:"), Image.from_bytes(PNG))),)),
    ))


CARRIED = table("MEDIA_CARRIED")
"""The kinds of media each wire carries in a user message (its test data)."""

PDF_AT, AUDIO_AT = "messages[0].parts[2]", "messages[0].parts[3]"
MOVED = ("media_moved", "call_1")  # Chat Completions, and Gemini models without result parts
AUDIO_DROPPED = ("media_dropped", AUDIO_AT)
PDF_DROPPED = ("media_dropped", PDF_AT)
PDF_NAME = ("field_dropped", PDF_AT)  # Gemini (either API) sends no names

# (source, target) -> the losses `convert` lists, exactly and in order, between the built-in
# wires. What the source wire could not carry is gone before conversion (Ollama's PDF and
# recording are a placeholder text by then), so only what the target drops or moves of what is
# left is listed; `losses` says the same from each wire's facts, for every registered wire.
LOSSES: dict[tuple[str, str], list[tuple[str, str]]] = {
    ("anthropic-messages", "anthropic-messages"): [],
    ("anthropic-messages", "openai-chat"): [MOVED],
    ("anthropic-messages", "openai-responses"): [],
    ("anthropic-messages", "ollama-chat"): [PDF_DROPPED],
    ("anthropic-messages", "gemini-generate"): [PDF_NAME, MOVED],
    ("anthropic-messages", "bedrock-converse"): [],
    ("openai-chat", "anthropic-messages"): [AUDIO_DROPPED],
    ("openai-chat", "openai-chat"): [MOVED],
    ("openai-chat", "openai-responses"): [AUDIO_DROPPED],
    ("openai-chat", "ollama-chat"): [PDF_DROPPED, AUDIO_DROPPED],
    ("openai-chat", "gemini-generate"): [PDF_NAME, MOVED],
    ("openai-chat", "bedrock-converse"): [AUDIO_DROPPED],
    ("openai-responses", "anthropic-messages"): [],
    ("openai-responses", "openai-chat"): [MOVED],
    ("openai-responses", "openai-responses"): [],
    ("openai-responses", "ollama-chat"): [PDF_DROPPED],
    ("openai-responses", "gemini-generate"): [PDF_NAME, MOVED],
    ("openai-responses", "bedrock-converse"): [],
    ("ollama-chat", "anthropic-messages"): [],
    ("ollama-chat", "openai-chat"): [MOVED],
    ("ollama-chat", "openai-responses"): [],
    ("ollama-chat", "ollama-chat"): [],
    ("ollama-chat", "gemini-generate"): [MOVED],
    ("ollama-chat", "bedrock-converse"): [],
    ("gemini-generate", "anthropic-messages"): [AUDIO_DROPPED],
    ("gemini-generate", "openai-chat"): [MOVED],
    ("gemini-generate", "openai-responses"): [AUDIO_DROPPED],
    ("gemini-generate", "ollama-chat"): [PDF_DROPPED, AUDIO_DROPPED],
    ("gemini-generate", "gemini-generate"): [MOVED],
    ("gemini-generate", "bedrock-converse"): [AUDIO_DROPPED],
    ("bedrock-converse", "anthropic-messages"): [],
    ("bedrock-converse", "openai-chat"): [MOVED],
    ("bedrock-converse", "openai-responses"): [],
    ("bedrock-converse", "ollama-chat"): [PDF_DROPPED],
    ("bedrock-converse", "gemini-generate"): [PDF_NAME, MOVED],
    ("bedrock-converse", "bedrock-converse"): [],
    ("anthropic-messages", "gemini-interactions"): [PDF_NAME],
    ("openai-chat", "gemini-interactions"): [PDF_NAME],
    ("openai-responses", "gemini-interactions"): [PDF_NAME],
    ("ollama-chat", "gemini-interactions"): [],
    ("gemini-generate", "gemini-interactions"): [],
    ("bedrock-converse", "gemini-interactions"): [PDF_NAME],
    ("gemini-interactions", "anthropic-messages"): [AUDIO_DROPPED],
    ("gemini-interactions", "openai-chat"): [MOVED],
    ("gemini-interactions", "openai-responses"): [AUDIO_DROPPED],
    ("gemini-interactions", "ollama-chat"): [PDF_DROPPED, AUDIO_DROPPED],
    ("gemini-interactions", "gemini-generate"): [MOVED],
    ("gemini-interactions", "bedrock-converse"): [AUDIO_DROPPED],
    ("gemini-interactions", "gemini-interactions"): [],
}


def losses(source: str, target: str) -> list[tuple[str, str]]:
    """The losses converting `conversion_request` from ``source`` to ``target`` lists, from the
    two wires' media facts: a document's name, the document or the recording the target cannot
    take (of what the source carried), and a tool's image it moves out of the result."""
    have, take = data(source), data(target)
    document = "document" in have.MEDIA_CARRIED
    out = []
    if document and have.MEDIA_NAMES and "document" in take.MEDIA_CARRIED \
            and not take.MEDIA_NAMES:
        out.append(PDF_NAME)
    if document and "document" not in take.MEDIA_CARRIED:
        out.append(PDF_DROPPED)
    if "audio" in have.MEDIA_CARRIED and "audio" not in take.MEDIA_CARRIED:
        out.append(AUDIO_DROPPED)
    if take.MEDIA_MOVED:
        out.append(MOVED)
    return out


def test_the_wires_media_facts_give_the_table_of_losses() -> None:
    assert {pair: losses(*pair) for pair in LOSSES} == LOSSES


PAIRS = [(source, target) for source in WIRES for target in WIRES]


@pytest.mark.parametrize(("source", "target"), PAIRS)
def test_convert_carries_media_across_wires_and_lists_what_moved_or_was_dropped(
        source: str, target: str) -> None:
    from toolwire.conversion import convert

    assert set(WIRES) == set(CARRIED)  # every wire's test data says what it carries
    body = get_codec(source).encode(conversion_request()).body
    converted = convert(as_json(body), source, target)
    assert [(n.kind, n.subject) for n in converted.losses] == losses(source, target)
    if (source, target) in LOSSES:
        assert losses(source, target) == LOSSES[(source, target)]
    back = decode(target, converted.body)
    user = back.messages[0].media
    assert sorted(m.kind for m in user) == sorted(CARRIED[source] & CARRIED[target])
    assert [m.data for m in user if m.kind == "image"] == [PNG]
    assert back.messages[2].tool_results[0].media[0].data == PNG
