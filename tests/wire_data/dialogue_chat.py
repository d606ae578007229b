"""Test data of the tests' own dialogue-chat wire (tests/dialogue_wire.py): the Chat
Completions format with ``dialogue`` in place of ``messages``, its provider registered by the
tests that use it."""

from wire_data import THOUGHT

MODEL_ID = "dialogue:m"
HISTORY_KEY = "dialogue"
CACHES_PROMPTS = False
IMAGE_TOKENS = 1334  # its record names no rule: the estimate's own (Anthropic's)
REASONING = {"reasoning": THOUGHT}
REPLY_CALL_IDS = True
