"""Hypothesis strategies for canonical transcript values, shared by the test suite.

Building blocks only: each codec's tests compose them into the requests and replies its wire
can carry (for example, a wire without reasoning support simply never draws a ReasoningPart).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from toolwire.transcript import (
    MediaPart,
    Message,
    Reply,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    replace,
)

# Text with non-ASCII characters, so stream splits land inside UTF-8 sequences.
texts = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
    min_size=1,
    max_size=40,
).filter(lambda s: s.strip() != "")

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_LOWER = "abcdefghijklmnopqrstuvwxyz"
# Built from small alphabets rather than st.from_regex, which is several times slower.
call_ids = st.text(alphabet=_ALNUM, min_size=6, max_size=12).map(lambda s: "call_" + s)
tool_names = st.builds(lambda a, b: a + b, st.sampled_from(_LOWER),
                       st.text(alphabet=_LOWER + "0123456789_", max_size=15))
_keys = st.text(alphabet=_LOWER, min_size=1, max_size=8)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.text(max_size=20),
)
json_values: st.SearchStrategy[Any] = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(_keys, inner, max_size=3),
    ),
    max_leaves=8,
)
argument_objects = st.dictionaries(_keys, json_values, max_size=4)


@st.composite
def tool_specs(draw: st.DrawFn) -> ToolSpec:
    props = draw(st.lists(_keys, max_size=3, unique=True))
    schema = {
        "type": "object",
        "properties": {p: {"type": "string"} for p in props},
        "required": props[:1],
        "additionalProperties": False,
    }
    return ToolSpec(name=draw(tool_names), description=draw(texts), input_schema=schema)


def object_call(draw: st.DrawFn, call_id: str | None = None) -> ToolCallPart:
    """A call as an object-carrying wire decodes it (raw_arguments None)."""
    return ToolCallPart(
        id=call_id or draw(call_ids), name=draw(tool_names), arguments=draw(argument_objects)
    )


def text_call(draw: st.DrawFn, call_id: str | None = None) -> ToolCallPart:
    """A call as a string-carrying wire decodes it (raw_arguments kept)."""
    import json

    args = draw(argument_objects)
    raw = json.dumps(args, ensure_ascii=draw(st.booleans()))
    return ToolCallPart.from_raw(id=call_id or draw(call_ids), name=draw(tool_names),
                                 raw_arguments=raw)


@st.composite
def tool_rounds(draw: st.DrawFn, *, text_args: bool) -> list[Message]:
    """An assistant message with 1-3 calls (text first or not) and the tool message answering it."""
    n = draw(st.integers(min_value=1, max_value=3))
    ids = draw(st.lists(call_ids, min_size=n, max_size=n, unique=True))
    make = text_call if text_args else object_call
    calls = [make(draw, i) for i in ids]
    parts: list[Any] = []
    if draw(st.booleans()):
        parts.append(TextPart(text=draw(texts)))
    parts.extend(calls)
    results = [
        ToolResultPart(call_id=c.id, content=draw(texts), is_error=draw(st.booleans()), name=c.name)
        for c in calls
    ]
    return [Message(role="assistant", parts=tuple(parts)),
            Message(role="tool", parts=tuple(results))]


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
PDF = b"%PDF-1.7\n" + b"x" * 64


def media_request(model: str, document: MediaPart | None = None) -> Request:
    """A request with an image and a document in the user message and an image in a tool
    result (``document``: the document part; a PDF with a name when None)."""
    from toolwire import Document, Image

    doc = document if document is not None else Document.from_bytes(PDF, name="report.pdf")
    return Request(model=model, tools=(ToolSpec(name="shot"),), messages=(
        Message(role="user", parts=(TextPart(text="compare these"), Image.from_bytes(PNG),
                                    doc)),
        Message(role="assistant", parts=(ToolCallPart(id="c1", name="shot", arguments={}),)),
        Message(role="tool", parts=(ToolResultPart(call_id="c1", name="shot", content=(
            TextPart(text="the screen:"), Image.from_bytes(PNG))),)),
    ))


def reply_message(wire: str, request: Request, reply: Reply, *, streamed: bool) -> Message:
    """``reply`` as ``wire`` delivers it: rendered and decoded whole, or as a stream."""
    import json

    from toolwire.codecs import get_codec
    from toolwire.events import StreamEnd

    codec = get_codec(wire)
    if not streamed:
        body = json.loads(json.dumps(codec.encode_response(reply, request=request)))
        return codec.decode_response(body, request=request).message
    end = list(codec.decode_stream(codec.encode_stream(reply, request=request),
                                   request=request))[-1]
    assert isinstance(end, StreamEnd)
    return end.reply.message


def media_history(wire: str, model: str, *, streamed: bool) -> Request:
    """User text, an image and a PDF; the model's call (a reply as ``wire`` sends it, whole or
    streamed); the call's result, text and an image; the model's answer; the user's next
    words."""
    from toolwire import Document, Image

    user = Message(role="user", parts=(
        TextPart(text="compare these"), Image.from_bytes(PNG),
        Document.from_bytes(PDF, name="report.pdf")))
    request = Request(model=model, max_tokens=256, tools=(ToolSpec(name="shot"),),
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
