"""Tools that return media: an image value, a (bytes, media type) pair, or a list mixing text
and media become a tool result made of parts, which the next request carries."""

from __future__ import annotations

import base64
from pathlib import Path

from media_files import pdf, png
from toolwire import Document, Image, MediaPart, TextPart
from toolwire.agent.dispatch import Dispatcher
from toolwire.codecs import get_codec
from toolwire.schema.tool import Tool
from toolwire.tools.coding import coding_tools
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


async def test_read_file_returns_images_and_pdfs_as_media_known_by_their_bytes(
        tmp_path: Path) -> None:
    chart, report = png(40, 30), pdf("Quarterly")
    (tmp_path / "chart.png").write_bytes(chart)
    (tmp_path / "shot.dat").write_bytes(chart)  # the bytes say PNG, whatever the name
    (tmp_path / "report.pdf").write_bytes(report)
    (tmp_path / "fake.png").write_text("not an image\n")  # the name says PNG, the bytes do not
    (tmp_path / "blob.bin").write_bytes(b"\x1f\x8b\x08\x00" + bytes(64))  # gzip: binary, no media
    dispatcher = Dispatcher(coding_tools(tmp_path, include_ask_user=False))
    paths = ("chart.png", "shot.dat", "report.pdf", "fake.png", "blob.bin")
    calls = [ToolCallPart(id=f"r{n}", name="read_file", arguments={"path": p})
             for n, p in enumerate(paths)]
    image, renamed, document, text, binary = await dispatcher.run(calls)
    dispatcher.close()
    assert image.content == (TextPart(text=f"chart.png: an image (image/png), {len(chart)} bytes"),
                             MediaPart(kind="image", media_type="image/png", data=chart,
                                       name="chart.png"))
    assert renamed.media[0].data == chart and renamed.media[0].media_type == "image/png"
    assert document.media == (MediaPart(kind="document", media_type="application/pdf",
                                        data=report, name="report.pdf"),)
    assert text.content == "1\tnot an image" and not text.is_error
    assert binary.is_error and "binary file" in binary.text
    # The image goes to the model where each wire takes media in a tool result.
    request = Request(model="m", max_tokens=16, messages=(
        Message.user("look"), Message(role="assistant", parts=(calls[0],)),
        Message(role="tool", parts=(image,))))
    block = get_codec("anthropic-messages").encode(request).body["messages"][2]["content"][0]
    assert block["content"][1]["source"]["data"] == base64.b64encode(chart).decode()


async def test_read_file_refuses_media_over_its_cap_naming_size_and_cap(tmp_path: Path) -> None:
    big = png(64, 64, seed=1)
    (tmp_path / "big.png").write_bytes(big)
    dispatcher = Dispatcher(coding_tools(tmp_path, include_ask_user=False,
                                         max_media_bytes=len(big) - 1))
    (result,) = await dispatcher.run([ToolCallPart(id="r", name="read_file",
                                                   arguments={"path": "big.png"})])
    dispatcher.close()
    assert result.is_error and not result.media
    assert result.text == (f"'big.png' is an image (image/png) of {len(big)} bytes, over the "
                           f"{len(big) - 1}-byte cap on media read_file returns; it was not read "
                           "(make a smaller copy with run_command, or raise the cap)")
