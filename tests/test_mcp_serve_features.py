"""``toolwire mcp-serve`` / `toolwire.mcp.build_server` used by the official SDK's own client:
output schemas from return types with structured content, media results as MCP blocks, and
the ``ask_user`` tool asking the client's user through elicitation (both the newer protocol's
input requests and the older elicitation request)."""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    ElicitRequestFormParams,
    ElicitResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
)
from pydantic import BaseModel

import toolwire
from fixtures.tiny_png import PNG
from toolwire.mcp import build_server

SRC = str(Path(__file__).parent.parent / "src")


class Pet(BaseModel):
    name: str
    age: int


def pet(name: str) -> Pet:
    """A pet."""
    return Pet(name=name, age=3)


def double(n: int) -> int:
    """Twice n."""
    return 2 * n


def greet(name: str) -> str:
    """A greeting."""
    return f"hello {name}"


def scan(page: int) -> list[Any]:
    """A scanned page: its picture, a sound and the document."""
    return [f"page {page}", toolwire.Image.from_bytes(PNG),
            toolwire.Audio.from_bytes(b"RIFF0000WAVEfmt ", "audio/wav"),
            toolwire.Document.from_bytes(b"%PDF-1.4 tiny", name="page.pdf")]


def asker(*replies: ElicitResult) -> tuple[Any, list[ElicitRequestFormParams]]:
    seen: list[ElicitRequestFormParams] = []
    left = list(replies)

    async def elicit(context: Any, params: Any) -> ElicitResult:
        seen.append(params)
        return left.pop(0)

    return elicit, seen


async def test_return_types_give_output_schemas_and_structured_content() -> None:
    async with Client(build_server([pet, double, greet])) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert listed["pet"].output_schema is not None
        assert listed["pet"].output_schema["properties"].keys() == {"name", "age"}
        assert listed["double"].output_schema == {
            "type": "object", "properties": {"result": {"type": "integer"}},
            "required": ["result"]}
        assert listed["greet"].output_schema is None  # text stays text
        made = await client.call_tool("pet", {"name": "rex"})
        doubled = await client.call_tool("double", {"n": 21})
        greeted = await client.call_tool("greet", {"name": "ann"})
        wrong = await client.call_tool("double", {"n": "x"})
    assert made.structured_content == {"name": "rex", "age": 3} and not made.is_error
    assert doubled.structured_content == {"result": 42}
    assert greeted.structured_content is None and greeted.content[0].text == "hello ann"
    assert wrong.is_error and wrong.structured_content is None


async def test_media_results_are_mcp_image_audio_and_resource_blocks() -> None:
    async with Client(build_server([scan])) as client:
        result = await client.call_tool("scan", {"page": 2})
    text, image, audio, document = result.content
    assert isinstance(text, TextContent) and text.text == "page 2"
    assert isinstance(image, ImageContent) and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == PNG
    assert isinstance(audio, AudioContent) and audio.mime_type == "audio/wav"
    assert isinstance(document, EmbeddedResource)
    blob = document.resource
    assert isinstance(blob, BlobResourceContents) and blob.mime_type == "application/pdf"
    assert base64.b64decode(blob.blob) == b"%PDF-1.4 tiny" and str(blob.uri).endswith("page.pdf")


async def test_ask_user_is_asked_of_the_clients_user_in_process() -> None:
    elicit, seen = asker(ElicitResult(action="accept", content={"answer": "blue"}),
                         ElicitResult(action="decline"), ElicitResult(action="cancel"))
    async with Client(build_server([greet], ask_user=True), elicitation_callback=elicit) as client:
        assert "ask_user" in [t.name for t in (await client.list_tools()).tools]
        question = {"question": "Which colour?", "choices": ["red", "blue"]}
        blue = await client.call_tool("ask_user", question)
        declined = await client.call_tool("ask_user", question)
        cancelled = await client.call_tool("ask_user", question)
    assert (blue.content[0].text, blue.is_error) == ("blue", False)
    assert declined.is_error and "declined to answer" in declined.content[0].text
    assert cancelled.is_error and "dismissed the question" in cancelled.content[0].text
    assert seen[0].message == "Which colour?"
    assert "red / blue" in seen[0].requested_schema["properties"]["answer"]["description"]


async def test_mcp_serve_coding_asks_through_elicitation_over_stdio(tmp_path: Path) -> None:
    """The older protocol: the server sends elicitation/create while the call runs."""
    elicit, seen = asker(ElicitResult(action="accept", content={"answer": "yes"}))
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "toolwire.mcp", "--builtin", "coding", "--workdir", str(tmp_path)],
        env={"PYTHONPATH": SRC})  # the SDK passes on only a few variables
    async with Client(stdio_client(params, errlog=sys.__stderr__), mode="legacy",
                      elicitation_callback=elicit) as client:
        answer = await client.call_tool("ask_user", {"question": "Go on?"})
    assert (answer.content[0].text, answer.is_error) == ("yes", False)
    assert [s.message for s in seen] == ["Go on?"]


async def test_ask_user_without_a_client_that_can_answer_says_so() -> None:
    async with Client(build_server([greet], ask_user=True), mode="legacy") as client:
        result = await client.call_tool("ask_user", {"question": "Anyone?"})
    assert result.is_error and "No user is available" in result.content[0].text
