"""Test data of the tests' own dialogue-chat wire (tests/dialogue_wire.py): the Chat
Completions format with ``dialogue`` in place of ``messages``, its provider registered by the
tests that use it."""

from typing import Any

from wire_data import THOUGHT

MODEL_ID = "dialogue:m"
HISTORY_KEY = "dialogue"
CACHES_PROMPTS = False
IMAGE_TOKENS = 1334  # its record names no rule: the estimate's own (Anthropic's)
REASONING = {"reasoning": THOUGHT}
REPLY_CALL_IDS = True
MEDIA_MODEL = 'm'
MEDIA_MOVED = True  # a tool's image leaves its result, with a media_moved note


def result_image(body: dict[str, Any]) -> Any:
    """Where the second request's body carries the image a tool returned."""
    moved = body["dialogue"][3]  # as Chat Completions: moved to a user message after the tool's
    return moved["content"][1]["image_url"]["url"].removeprefix("data:image/png;base64,")
