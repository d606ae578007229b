"""The OpenAI Chat Completions (``openai-chat``) wire, in the same modules as every wire.

The wire's registry record, ``RECORD``, and what it names or the folder alone uses: its
recognisers, how it asks for reasoning, its tool-name pattern, what Chat Completions refuses of
the media in a raw body, and its cache fields. The folder's other modules are the ones every
wire has (`toolwire.codecs.record` lists them); this one imports only what codecs share.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from toolwire.codecs.base import Note
from toolwire.codecs.caching import Marking, cache_key_fields, place_breakpoints
from toolwire.codecs.detect import Kind
from toolwire.codecs.media import (
    OPENAI_IMAGE_TYPES,
    data_url_type,
    dict_or_empty,
    list_or_empty,
)
from toolwire.codecs.prompt_rules import CacheRules
from toolwire.codecs.reasoning import Triple, effort
from toolwire.codecs.record import Wire, WireRules
from toolwire.transcript import Cache

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


_CHAT_MEDIA = {"image_url": "an image URL", "input_audio": "audio", "file": "a file"}


def media_problem(body: dict[str, Any]) -> str | None:
    """What Chat Completions refuses of the media in ``body``."""
    for i, message in enumerate(list_or_empty(body.get("messages"))):
        role = dict_or_empty(message).get("role")
        for item in list_or_empty(dict_or_empty(message).get("content")):
            kind = dict_or_empty(item).get("type")
            if isinstance(kind, str) and kind in _CHAT_MEDIA and role != "user":
                what = _CHAT_MEDIA[kind]
                label = "Image URLs are" if kind == "image_url" else f"Parts with {what} are"
                return (f"Invalid 'messages[{i}]'. {label} only allowed for messages with role "
                        f"'user', but this message with role '{role}' contains {what}.")
            if kind == "image_url":
                url = dict_or_empty(dict_or_empty(item).get("image_url")).get("url")
                media_type = data_url_type(url)
                if media_type is not None and media_type not in OPENAI_IMAGE_TYPES:
                    return ("Invalid MIME type. Only image types are supported. "
                            f"(messages[{i}] has {media_type!r})")
    return None


def _text_part(block: dict[str, Any]) -> bool:
    return block.get("type") == "text"


EXPLICIT = Marking(key="prompt_cache_breakpoint")
"""OpenAI's explicit breakpoints in Chat Completions' messages."""


def cache_fields(body: dict[str, Any], cache: Cache) -> list[Note]:
    """OpenAI chat's cache fields: explicit breakpoints for the models that have them, and
    with ``cache.markers`` (OpenRouter's breakpoint models) Anthropic-style breakpoints on
    text parts, the system prompt being the first message."""
    notes = cache_key_fields(body, cache, wire="openai-chat", how=EXPLICIT,
                             markable=_text_part, system_in_messages=True)
    if cache.markers and not any(n.subject == EXPLICIT.key for n in notes):
        notes += place_breakpoints(body, cache, markable=_text_part, system_in_messages=True,
                                   tools_take_markers=False)
    return notes


RECORD = Wire(
    name=NAME,
    per_model=True,  # the codec's FIT
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
    rules=WireRules(id_max_length=40),  # a longer tool_call_id is refused
    answers_unknown=True,
    freeform_calls=True,  # custom tools and their calls (``"type": "custom"``), text input
    live_writer="toolwire.proxy.writers:ChatWriter",
)
"""The wire's registry record."""

__all__ = [
    "EXPLICIT",
    "NAME",
    "NAME_PATTERN",
    "RECORD",
    "cache_fields",
    "media_problem",
    "reasoning",
    "recognise_body",
    "recognise_stream",
]
