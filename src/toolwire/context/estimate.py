"""A fast local estimate of how many tokens a request or a message takes.

Owns `estimate_tokens`, `estimate_messages` and `CHARS_PER_TOKEN`. The estimate needs no
tokenizer and no network: every piece of text the model reads (system prompt, tool names,
descriptions and schemas as compact JSON, message text, reasoning text, call names and
arguments, results, carried provider blocks as JSON) is counted in characters, divided by
`CHARS_PER_TOKEN` and rounded up, plus a few tokens per message, per tool and per call for
the framing every wire adds. Text outside ASCII counts by its UTF-8 bytes instead of its
characters, as tokenizers split such text finer. How far it is from the providers' own counts
is measured in the tests on the recorded replies (`docs/context.md` gives the figures).
Imports only `toolwire.transcript`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from toolwire.transcript import (
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


def _size(text: str) -> int:
    """Characters, counting a non-ASCII character by its UTF-8 bytes."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _part_size(part: object) -> int:
    if type(part) is TextPart or type(part) is ReasoningPart:
        return _size(part.text)
    if type(part) is ToolCallPart:
        return _size(part.name) + _size(part.arguments_text) + 4
    if type(part) is ToolResultPart:
        return _size(part.text) + sum(p.size for p in part.media) // 4 + 4
    if type(part) is OpaquePart:
        return _size(json.dumps(part.payload, ensure_ascii=False, default=str))
    return 0


def _tool_size(tool: ToolSpec) -> int:
    schema = json.dumps(tool.input_schema, ensure_ascii=False, separators=(",", ":"),
                        default=str)
    return _size(tool.name) + _size(tool.description) + _size(schema)


def estimate_messages(messages: Iterable[Message]) -> int:
    """The estimated tokens of ``messages``: their text over `CHARS_PER_TOKEN`, plus
    `PER_MESSAGE` each and `PER_CALL` per tool call."""
    chars = count = calls = 0
    for message in messages:
        count += 1
        for part in message.parts:
            chars += _part_size(part)
            calls += type(part) is ToolCallPart
    return -(-chars // int(CHARS_PER_TOKEN)) + PER_MESSAGE * count + PER_CALL * calls


def estimate_tokens(request: Request) -> int:
    """The estimated prompt tokens of ``request``: system prompt, tools and messages."""
    chars = _size(request.system) if request.system else 0
    chars += sum(_tool_size(t) for t in request.tools)
    fixed = -(-chars // int(CHARS_PER_TOKEN)) + PER_TOOL * len(request.tools)
    return fixed + estimate_messages(request.messages)


__all__ = [
    "CHARS_PER_TOKEN", "PER_CALL", "PER_MESSAGE", "PER_TOOL", "estimate_messages",
    "estimate_tokens",
]
