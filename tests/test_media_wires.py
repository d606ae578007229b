"""Media on every wire: a request with an image and a PDF from the user and an image returned
by a tool, encoded and read back, with replies decoded whole and streamed in its history.

Each wire reads back exactly the canonical transcript it was given, except for what the wire
cannot carry, which is written out per wire below (and reported as notes when encoding).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from strategies import PDF, PNG
from toolwire import Document, Image
from toolwire.codecs import get_codec
from toolwire.codecs.registry import get_wire, wire_names
from toolwire.events import StreamEnd
from toolwire.transcript import (
    Message,
    Reply,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    replace,
)

WIRES = wire_names()
MODEL = "gemini-2.5-flash"  # any model name will do; on Gemini one without result parts


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def decode(wire: str, body: dict[str, Any]) -> Request:
    codec = get_codec(wire)
    if get_wire(wire).model_in_path:
        return codec.decode_request(as_json(body), model=MODEL, stream=False)
    return codec.decode_request(as_json(body))


def reply_message(wire: str, request: Request, reply: Reply, *, streamed: bool) -> Message:
    """``reply`` as ``wire`` delivers it: rendered and decoded whole, or as a stream."""
    codec = get_codec(wire)
    if not streamed:
        body = as_json(codec.encode_response(reply, request=request))
        return codec.decode_response(body, request=request).message
    end = list(codec.decode_stream(codec.encode_stream(reply, request=request),
                                   request=request))[-1]
    assert isinstance(end, StreamEnd)
    return end.reply.message


def media_history(wire: str, *, streamed: bool) -> Request:
    """User text, an image and a PDF; the model's call (a reply as the wire sends it); the
    call's result, text and an image; the model's answer; the user's next words."""
    user = Message(role="user", parts=(
        TextPart(text="compare these"), Image.from_bytes(PNG),
        Document.from_bytes(PDF, name="report.pdf")))
    request = Request(model=MODEL, max_tokens=256, tools=(ToolSpec(name="shot"),),
                      messages=(user,))
    call = Reply(message=Message(role="assistant", parts=(
        ToolCallPart(id="call_1", name="shot", arguments={"zoom": 2}),)), stop="tool_calls")
    called = reply_message(wire, request, call, streamed=streamed)
    result = Message(role="tool", parts=(ToolResultPart(call_id=called.tool_calls[0].id,
                                                        name="shot", content=(
        TextPart(text="the screen:"), Image.from_bytes(PNG))),))
    request = replace(request, messages=(user, called, result))
    answer = Reply(message=Message.assistant("The chart matches page 2."), stop="end_turn")
    answered = reply_message(wire, request, answer, streamed=streamed)
    return replace(request, messages=(user, called, result, answered,
                                      Message.user("thanks")))


PLACEHOLDER = "[document report.pdf (application/pdf) omitted: this model API cannot take it]"

NOTES: dict[str, list[str]] = {
    "anthropic-messages": [],
    "openai-chat": ["media_moved"],  # tool messages take text: media in a user message
    "openai-responses": [],
    "ollama-chat": ["media_dropped"],  # no documents: a placeholder text
    "gemini-generate": ["field_dropped", "media_moved"],  # no names; no result parts on 2.5
    "bedrock-converse": [],
}


def expected(wire: str, request: Request) -> tuple[Message, ...]:
    """What ``wire`` reads back, written out: the request, less what the wire cannot carry."""
    messages = list(request.messages)
    user = messages[0]
    if wire == "ollama-chat":  # the PDF became a placeholder text after the user's text
        messages[0] = replace(user, parts=(TextPart(text=f"compare these\n{PLACEHOLDER}"),
                                           user.parts[1]))
    elif wire == "gemini-generate":  # the document's name is not sent
        messages[0] = replace(user, parts=(*user.parts[:2], replace(user.parts[2], name=None)))
    return tuple(messages)


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("wire", WIRES)
def test_media_in_the_user_message_and_a_tool_result_read_back_on_every_wire(
        wire: str, streamed: bool) -> None:
    request = media_history(wire, streamed=streamed)
    encoded = get_codec(wire).encode(request)
    assert sorted({n.kind for n in encoded.notes} - {"max_tokens_defaulted"}) == NOTES[wire]
    back = decode(wire, encoded.body)
    assert back.messages == expected(wire, request)
    result = back.messages[2].tool_results[0]
    assert result.text == "the screen:" and [m.data for m in result.media] == [PNG]
    # Read back and sent again, the body is the same.
    assert get_codec(wire).encode(back).body == encoded.body
