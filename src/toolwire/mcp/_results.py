"""MCP tool results to and from toolwire tool results.

Owns `result_text` (an MCP ``CallToolResult`` as text), `result_value` (what a toolwire tool made
from an MCP tool returns: text, structured content, or text and media parts) and `to_mcp_result`
(a toolwire `ToolResultPart` as an MCP ``CallToolResult``, media as image, audio and embedded
resource blocks). Must not import the loop, codecs or the transport; it only knows the MCP
SDK's result types and toolwire's canonical values.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from toolwire.errors import TranscriptError
from toolwire.media import Audio, Document, Image
from toolwire.transcript import MediaPart, ToolResultPart

__all__ = ["block_text", "result_text", "result_value", "to_mcp_block", "to_mcp_result"]


def _decoded(data: str) -> bytes | None:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _size(data: str) -> str:
    """The decoded size of base64 ``data``, in words."""
    try:
        count = len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        count = len(data) * 3 // 4
    return f"{count} bytes"


def block_text(block: Any) -> str:
    """One MCP content block as text for a model.

    Text is kept as it is. Binary content (images, audio, blobs) cannot travel in a text
    result, so it is described: its kind, media type and size.
    """
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent):
        return f"[image: {block.mime_type}, {_size(block.data)}]"
    if isinstance(block, AudioContent):
        return f"[audio: {block.mime_type}, {_size(block.data)}]"
    if isinstance(block, ResourceLink):
        about = f" ({block.description})" if block.description else ""
        return f"[resource link: {block.name} <{block.uri}>{about}]"
    if isinstance(block, EmbeddedResource):
        resource = block.resource
        if isinstance(resource, TextResourceContents):
            return resource.text
        if isinstance(resource, BlobResourceContents):
            kind = resource.mime_type or "binary data"
            return f"[resource {resource.uri}: {kind}, {_size(resource.blob)}]"
    kind = getattr(block, "type", type(block).__name__)
    return f"[{kind} content]"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def result_text(result: CallToolResult) -> str:
    """The text a model is shown for ``result``: its content blocks, one after another.

    Text blocks are what the server meant a model to read, so they win over structured
    content (which servers also send as text for older clients). Structured content is shown
    as compact JSON when no text block carries it.
    """
    pieces = [block_text(block) for block in result.content]
    has_text = any(isinstance(b, TextContent | EmbeddedResource) for b in result.content)
    if result.structured_content is not None and not has_text:
        pieces.insert(0, _compact(result.structured_content))
    return "\n".join(pieces)


def block_media(block: Any) -> MediaPart | None:
    """An image, audio or embedded binary resource block as a media part (None for any other
    block, and for one whose data is not base64 or whose media type toolwire cannot hold)."""
    name: str | None = None
    if isinstance(block, ImageContent | AudioContent):
        data, media_type = block.data, block.mime_type
        maker: Any = Image if isinstance(block, ImageContent) else Audio
    elif isinstance(block, EmbeddedResource) and isinstance(block.resource, BlobResourceContents):
        data, name = block.resource.blob, str(block.resource.uri)
        media_type = block.resource.mime_type or "application/octet-stream"
        maker = (Image if media_type.startswith("image/") else
                 Audio if media_type.startswith("audio/") else Document)
    else:
        return None
    raw = _decoded(data)
    if raw is None:
        return None
    try:
        part: MediaPart = maker.from_bytes(raw, media_type, name=name)
    except TranscriptError:
        return None
    return part


def _unwrapped(content: dict[str, Any], schema: dict[str, Any]) -> Any:
    """Structured content as the tool meant it: a value servers wrap as ``{"result": value}``
    (a schema of that one property, as SDK servers write for a function returning a string
    or a number) is the value itself."""
    props = schema.get("properties")
    if list(content) == ["result"] and isinstance(props, dict) and list(props) == ["result"]:
        return content["result"]
    return content


def result_value(result: CallToolResult, schema: dict[str, Any] | None = None) -> Any:
    """What a toolwire tool made from an MCP tool returns for ``result``.

    With ``schema`` (the tool's output schema, which the SDK has checked the content against):
    the structured content, which the tool result carries as JSON (a wrapped string as text),
    unless the result also holds media. Otherwise the text of every block (`result_text`), or,
    when some blocks are images, audio or binary resources, a list of text and media parts
    (`toolwire.media.media_content` reads it), in their order.
    """
    structured = schema is not None
    media = [block_media(block) for block in result.content]
    if schema is not None and result.structured_content is not None and not any(media):
        return _unwrapped(dict(result.structured_content), schema)
    if not any(media):
        return result_text(result)
    items: list[Any] = []
    if structured and result.structured_content is not None:
        items.append(_compact(result.structured_content))
    for block, part in zip(result.content, media, strict=True):
        if part is not None:
            items.append(part)
        elif not (structured and isinstance(block, TextContent)):
            items.append(block_text(block))
    return items


def to_mcp_block(part: MediaPart) -> ContentBlock:
    """A media part as an MCP block: an image or audio block, or an embedded resource (a
    document: text when its type is textual, else a blob; its name is the URI when it is
    one), or, for media known only by URL or file id, a text block saying where it is."""
    if part.data is None:
        where = part.url or ", ".join(f"{w}: {i}" for w, i in (part.file_ids or {}).items())
        return TextContent(text=f"[{part.kind} {part.media_type}: {where}]")
    data = base64.b64encode(part.data).decode("ascii")
    if part.kind == "image":
        return ImageContent(data=data, mime_type=part.media_type)
    if part.kind == "audio":
        return AudioContent(data=data, mime_type=part.media_type)
    name = part.name or "document"
    uri = name if _URI.match(name) else f"toolwire:///{name}"
    text = _as_text(part)
    if text is not None:
        return EmbeddedResource(resource=TextResourceContents(uri=uri, mime_type=part.media_type,
                                                              text=text))
    return EmbeddedResource(resource=BlobResourceContents(uri=uri, mime_type=part.media_type,
                                                          blob=data))


_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_TEXT_TYPES = ("application/json", "application/xml", "application/yaml", "application/toml",
               "application/javascript")


def _as_text(part: MediaPart) -> str | None:
    """The text of a document whose media type is textual and whose bytes are UTF-8."""
    kind = part.media_type.split(";")[0].strip().lower()
    textual = (kind.startswith("text/") or kind in _TEXT_TYPES or kind.endswith("+json")
               or kind.endswith("+xml"))
    if not textual or part.data is None:
        return None
    try:
        return part.data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def to_mcp_result(part: ToolResultPart, structured: Any = None) -> CallToolResult:
    """A toolwire result (from `toolwire.agent.dispatch.Dispatcher`) as an MCP tool result:
    text as text blocks, media as `to_mcp_block` makes them, ``structured`` content as is."""
    if isinstance(part.content, str):
        blocks: list[ContentBlock] = [TextContent(text=part.content)]
    else:
        blocks = [to_mcp_block(p) if isinstance(p, MediaPart) else TextContent(text=p.text)
                  for p in part.content]
    return CallToolResult(content=blocks, is_error=part.is_error, structured_content=structured)
