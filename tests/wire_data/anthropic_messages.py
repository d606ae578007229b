"""Test data of the anthropic-messages wire (see tests/wire_data/__init__.py)."""

from wire_data import THOUGHT

MODEL_ID = "anthropic:claude-sonnet-4-5"
HISTORY_KEY = "messages"
CACHES_PROMPTS = True
IMAGE_TOKENS = 1334  # by its area
REASONING = {"type": "thinking", "thinking": THOUGHT, "signature": "c2lnbmVk"}
REPLY_CALL_IDS = True
