"""Tools that return media: an image value, a (bytes, media type) pair, or a list mixing text
and media become a tool result made of parts, which the next request carries."""

from __future__ import annotations

from toolwire import Document, Image, MediaPart, TextPart
from toolwire.agent.dispatch import Dispatcher
from toolwire.codecs import get_codec
from toolwire.schema.tool import Tool
from toolwire.transcript import Message, Request, ToolCallPart

PNG = b"\x89PNG\r\n\x1a\n" + bytes(32)
PDF = b"%PDF-1.7\n" + bytes(32)


def shot() -> MediaPart:
    """Take a screenshot."""
    return Image.from_bytes(PNG)


def pair() -> tuple[bytes, str]:
    """A PDF as bytes and its media type."""
    return PDF, "application/pdf"


def mixed() -> list[object]:
    """Text, an image and a number."""
    return ["page one:", Image.from_bytes(PNG), {"pages": 1}]


def plain() -> list[int]:
    """A list with no media stays JSON text."""
    return [1, 2]


async def test_tools_returning_media_give_results_made_of_parts() -> None:
    dispatcher = Dispatcher([Tool.from_function(f) for f in (shot, pair, mixed, plain)])
    calls = [ToolCallPart(id=f"c{n}", name=name, arguments={})
             for n, name in enumerate(("shot", "pair", "mixed", "plain"))]
    first, second, third, fourth = await dispatcher.run(calls)
    dispatcher.close()
    assert first.content == (Image.from_bytes(PNG),)
    assert second.content == (Document.from_bytes(PDF, "application/pdf"),)
    assert third.content == (TextPart(text="page one:"), Image.from_bytes(PNG),
                             TextPart(text='{"pages": 1}'))
    assert fourth.content == "[1, 2]"
    assert not any(r.is_error for r in (first, second, third, fourth))
    # The next request carries the image where each wire takes it.
    request = Request(model="m", max_tokens=16, messages=(
        Message.user("look"), Message(role="assistant", parts=(calls[0],)),
        Message(role="tool", parts=(first,))))
    body = get_codec("anthropic-messages").encode(request).body
    assert body["messages"][2]["content"][0]["content"][0]["type"] == "image"
    chat = get_codec("openai-chat").encode(request)
    assert chat.body["messages"][-1]["content"][1]["type"] == "image_url"
    assert [n.kind for n in chat.notes] == ["media_moved"]
