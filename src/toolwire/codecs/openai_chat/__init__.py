"""The OpenAI Chat Completions (``openai-chat``) wire, in the same modules as every wire.

The wire's registry record, ``RECORD``, and what it names (its recognisers, how it asks for
reasoning, its patterns); the folder's other modules are the ones every wire has
(`toolwire.codecs.record` lists them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from toolwire.codecs.detect import Kind
from toolwire.codecs.prompt_rules import CacheRules
from toolwire.codecs.reasoning import Triple, effort
from toolwire.codecs.record import Wire

NAME = "openai-chat"
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def recognise_body(body: Mapping[str, Any]) -> Kind | None:
    """OpenAI chat: a reply with ``choices``, or any other body with ``messages`` (tried last)."""
    if "choices" in body:
        return "response"
    if "messages" in body:
        return "request"
    return None


def recognise_stream(head: str, text: str) -> bool:
    return "chat.completion.chunk" in head or "data: [DONE]" in text


def reasoning(body: dict[str, Any], level: str, notes: list[Triple]) -> None:
    body["reasoning_effort"] = effort(level)


RECORD = Wire(
    name=NAME,
    module="toolwire.codecs.openai_chat.codec",
    path="/v1/chat/completions",
    detect=recognise_body,
    detect_stream=recognise_stream,
    detect_rank=90,  # any other body with "messages" is taken for an OpenAI chat body
    cache=CacheRules(kind="prefix", sections=("tools", "messages"), step=128,
                     key_field="prompt_cache_key"),
    context_error="This model's maximum context length is {limit} tokens. However, your "
                  "messages resulted in {tokens} tokens. Please reduce the length of the "
                  "messages.",
    reasoning=reasoning,
    media_tokens="tiles-512",  # OpenAI bills an image by 512-pixel tiles
)
"""The wire's registry record."""

__all__ = ["NAME", "NAME_PATTERN", "RECORD", "reasoning", "recognise_body", "recognise_stream"]
