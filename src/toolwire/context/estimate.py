"""A fast local estimate of how many tokens a request or a message takes.

Owns `estimate_tokens`, `estimate_messages` and `CHARS_PER_TOKEN`. The estimate needs no
tokenizer and no network: every piece of text the model reads (system prompt, tool names,
descriptions and schemas as compact JSON, message text, reasoning text, call names and
arguments, results, carried provider blocks as JSON) is counted in characters, divided by
`CHARS_PER_TOKEN` and rounded up, plus a few tokens per message, per tool and per call for
the framing every wire adds. Text outside ASCII counts by its UTF-8 bytes instead of its
characters, as tokenizers split such text finer. How far it is from the providers' own counts
is measured in the tests on the recorded replies (`docs/context.md` gives the figures).

Media count by what the provider bills for them, not by their bytes (`media_tokens`), under
the billing rule the model's wire names (each codec's ``MEDIA_TOKENS``, one of `MEDIA_RULES`):
an image by its pixels as its own header gives them (``area``, Anthropic's and Bedrock's: width
x height / 750 after fitting 1568 pixels and 1.15 megapixels; ``tiles-512``, the OpenAI wires':
85 + 170 per 512-pixel tile after fitting 2048 pixels and a shortest side of 768;
``tiles-768``, Gemini's: 258 up to 384x384, else 258 per 768-pixel tile; ``grid``, Ollama's:
576, a vision encoder's fixed grid), a fixed count when the size is unknown (a URL, a file id,
a header that says nothing); a PDF by its pages (2,000 tokens a page, 258 under ``tiles-768``);
plain text by its characters; audio by its seconds (32 a second). No rule given: ``area``.
Imports only `toolwire.transcript` and `toolwire.media`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable

from toolwire.media import image_size
from toolwire.transcript import (
    MediaPart,
    Message,
    OpaquePart,
    ReasoningPart,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)

CHARS_PER_TOKEN = 4.0
"""Characters of English text or JSON per token, on average, for current tokenizers."""

PER_MESSAGE = 4
"""Tokens each message adds for its role and separators."""

PER_TOOL = 8
"""Tokens each tool definition adds around its name, description and schema."""

PER_CALL = 10
"""Tokens each tool call adds around its name and arguments (the wire's call syntax)."""


IMAGE_UNKNOWN = {"area": 1600, "tiles-512": 765, "tiles-768": 258, "grid": 576}
"""Tokens of an image whose size is not known (a URL, a file id), per billing rule: the most
Claude bills for one, a 1024x1024 image at OpenAI's high detail, one Gemini tile, one Ollama
grid."""

MEDIA_RULES = tuple(IMAGE_UNKNOWN)
"""The billing rules a codec may name in its ``MEDIA_TOKENS``."""

PDF_PAGE = 2000
"""Tokens per PDF page where the provider reads its text and an image of each page."""

_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def _fit(width: int, height: int, side: float, area: float = math.inf) -> tuple[float, float]:
    """``width`` x ``height`` shrunk (never grown) to fit ``side`` pixels and ``area``."""
    scale = min(1.0, side / max(width, height, 1), math.sqrt(area / max(1, width * height)))
    return width * scale, height * scale


def image_tokens(width: int | None, height: int | None, rule: str | None = None) -> int:
    """The tokens an image of ``width`` x ``height`` costs under billing ``rule`` (one of
    `MEDIA_RULES`; None: ``area``); `IMAGE_UNKNOWN` when the size is not known."""
    if not width or not height:
        return IMAGE_UNKNOWN.get(rule or "area", IMAGE_UNKNOWN["area"])
    if rule == "tiles-512":
        w, h = _fit(width, height, 2048)
        shortest = min(w, h)
        if shortest > 768:
            w, h = w * 768 / shortest, h * 768 / shortest
        return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)
    if rule == "tiles-768":
        if width <= 384 and height <= 384:
            return 258
        return 258 * math.ceil(width / 768) * math.ceil(height / 768)
    if rule == "grid":
        return IMAGE_UNKNOWN["grid"]
    w, h = _fit(width, height, 1568, 1_150_000)
    return max(1, math.ceil(w * h / 750))


def media_tokens(part: MediaPart, rule: str | None = None) -> int:
    """The tokens one media part costs under billing ``rule`` (see the module's description)."""
    if part.kind == "image":
        size = image_size(part.data) if part.data is not None else None
        return image_tokens(size[0], size[1], rule) if size else image_tokens(None, None, rule)
    if part.kind == "audio":
        seconds = (part.size / 16_000) if part.data is not None else 60
        if part.data is not None and part.data[:4] == b"RIFF" and len(part.data) >= 32:
            seconds = part.size / max(1, int.from_bytes(part.data[28:32], "little"))
        return math.ceil(32 * seconds)
    if part.media_type == "text/plain" and part.data is not None:
        return -(-len(part.data) // int(CHARS_PER_TOKEN))
    pages = max(1, len(_PAGE.findall(part.data))) if part.data is not None else 1
    return pages * (IMAGE_UNKNOWN["tiles-768"] if rule == "tiles-768" else PDF_PAGE)


def _size(text: str) -> int:
    """Characters, counting a non-ASCII character by its UTF-8 bytes."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _part_size(part: object) -> int:
    if type(part) is TextPart or type(part) is ReasoningPart:
        return _size(part.text)
    if type(part) is ToolCallPart:
        return _size(part.name) + _size(part.arguments_text) + 4
    if type(part) is ToolResultPart:
        return _size(part.text) + 4
    if type(part) is OpaquePart:
        return _size(json.dumps(part.payload, ensure_ascii=False, default=str))
    return 0


def _tool_size(tool: ToolSpec) -> int:
    schema = json.dumps(tool.input_schema, ensure_ascii=False, separators=(",", ":"),
                        default=str)
    return _size(tool.name) + _size(tool.description) + _size(schema)


def estimate_messages(messages: Iterable[Message], rule: str | None = None) -> int:
    """The estimated tokens of ``messages``: their text over `CHARS_PER_TOKEN`, their media
    under billing ``rule`` (`media_tokens`), plus `PER_MESSAGE` each and `PER_CALL` per call."""
    chars = count = calls = media = 0
    for message in messages:
        count += 1
        for part in message.parts:
            chars += _part_size(part)
            calls += type(part) is ToolCallPart
            if type(part) is MediaPart:
                media += media_tokens(part, rule)
            elif type(part) is ToolResultPart and type(part.content) is tuple:
                media += sum(media_tokens(p, rule) for p in part.media)
    return -(-chars // int(CHARS_PER_TOKEN)) + media + PER_MESSAGE * count + PER_CALL * calls


def estimate_tokens(request: Request, rule: str | None = None) -> int:
    """The estimated prompt tokens of ``request``, its media under billing ``rule``: system
    prompt, tools, messages."""
    chars = _size(request.system) if request.system else 0
    chars += sum(_tool_size(t) for t in request.tools)
    fixed = -(-chars // int(CHARS_PER_TOKEN)) + PER_TOOL * len(request.tools)
    return fixed + estimate_messages(request.messages, rule)


__all__ = [
    "CHARS_PER_TOKEN", "IMAGE_UNKNOWN", "MEDIA_RULES", "PDF_PAGE", "PER_CALL", "PER_MESSAGE",
    "PER_TOOL",
    "estimate_messages", "estimate_tokens", "image_tokens", "media_tokens",
]
