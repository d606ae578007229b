"""The Anthropic Messages (``anthropic-messages``) wire, in the same modules as every wire.

The wire's registry record, ``RECORD``, and what it names (its recognisers, how it asks for
reasoning, its patterns); the folder's other modules are the ones every wire has
(`toolwire.codecs.record` lists them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from toolwire.codecs.detect import Kind, block_types, squeezed
from toolwire.codecs.prompt_rules import CacheRules, Counting
from toolwire.codecs.reasoning import Triple, thinking
from toolwire.codecs.record import HostedPath, Wire, WireRules

NAME = "anthropic-messages"
ID_PATTERN = re.compile(r"^[a-zA-Z0-9_-]+$")
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")

_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})


def recognise_body(body: Mapping[str, Any]) -> Kind | None:
    if "choices" in body:  # an OpenAI chat reply, whatever else it holds
        return None
    if body.get("type") == "message" and "content" in body:
        return "response"
    if "messages" not in body:
        return None
    if block_types(body.get("messages")) & _ANTHROPIC_BLOCKS:
        return "request"
    if "system" in body or any("input_schema" in t for t in body.get("tools") or ()
                               if isinstance(t, dict)):
        return "request"
    return None


def recognise_stream(head: str, text: str) -> bool:
    return "event: message_start" in head or '"type":"message_start"' in squeezed(head)


def reasoning(body: dict[str, Any], level: str, notes: list[Triple]) -> None:
    def put(n: int) -> None:
        body["max_tokens"] = n

    thinking(body, level, notes, wire=NAME, holder=body,
             tokens=lambda: body.get("max_tokens"), set_tokens=put)


_PORTABLE = "letters, digits, '_' and '-'"

RECORD = Wire(
    name=NAME,
    module="toolwire.codecs.anthropic_messages.codec",
    path="/v1/messages",
    overloaded_status=529,
    rules=WireRules(
        id_pattern=ID_PATTERN,
        id_wording=f"an id may hold only {_PORTABLE}",
        name_pattern=NAME_PATTERN,
        name_wording=f"{_PORTABLE}, 1 to 128 characters",
        results_first=True,
    ),
    detect=recognise_body,
    detect_stream=recognise_stream,
    detect_rank=30,
    hosted=(HostedPath("/model/{model}/invoke", "/model/{model}/invoke-with-response-stream",
                       framing="eventstream", errors="bedrock-converse"),
            HostedPath("/models/{model}:rawPredict", "/models/{model}:streamRawPredict",
                       count="/anthropic/models/count-tokens:rawPredict")),
    cache=CacheRules(kind="breakpoints", sections=("tools", "system", "messages")),
    context_error="prompt is too long: {tokens} tokens > {limit} maximum",
    count=Counting(path="/v1/messages/count_tokens", keys=frozenset({
        "model", "messages", "system", "tools", "tool_choice", "thinking"})),
    reasoning=reasoning,
    media_tokens="area",  # Anthropic bills an image by its area
    input_examples=True,
    allowed_callers=True,  # calls made by the code execution tool's code carry a ``caller``
    context_management=True,  # clearing and compaction, each with its beta header
    native_tool_search=True,
    server_fallbacks=True,  # with its beta header; ``fallback`` blocks go back in place
)
"""The wire's registry record."""

__all__ = ["ID_PATTERN", "NAME", "NAME_PATTERN", "RECORD", "reasoning", "recognise_body",
           "recognise_stream"]
