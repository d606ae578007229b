"""MCP tool results to and from toolwire tool results.

Owns `result_text` (what a model is shown for an MCP ``CallToolResult``) and `to_mcp_result`
(a toolwire `ToolResultPart` as an MCP ``CallToolResult``). Must not import the loop, codecs or
the transport; it only knows the MCP SDK's result types and toolwire's canonical values.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from toolwire.transcript import ToolResultPart

__all__ = ["block_text", "result_text", "to_mcp_result"]


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


def result_text(result: CallToolResult) -> str:
    """The text a model is shown for ``result``: its content blocks, one after another.

    Text blocks are what the server meant a model to read, so they win over structured
    content (which servers also send as text for older clients). Structured content is shown
    as compact JSON when no text block carries it.
    """
    pieces = [block_text(block) for block in result.content]
    has_text = any(isinstance(b, TextContent | EmbeddedResource) for b in result.content)
    if result.structured_content is not None and not has_text:
        structured = json.dumps(result.structured_content, ensure_ascii=False,
                                separators=(",", ":"))
        pieces.insert(0, structured)
    return "\n".join(pieces)


def to_mcp_result(part: ToolResultPart) -> CallToolResult:
    """A toolwire result (from `toolwire.agent.dispatch.Dispatcher`) as an MCP tool result."""
    return CallToolResult(content=[TextContent(text=part.text)], is_error=part.is_error)
