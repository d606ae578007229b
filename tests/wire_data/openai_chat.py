"""Test data of the openai-chat wire (see tests/wire_data/__init__.py)."""

from wire_data import THOUGHT

MODEL_ID = "openai:gpt-4o"
HISTORY_KEY = "messages"
CACHES_PROMPTS = True
IMAGE_TOKENS = 765  # by 512-pixel tiles
REASONING = {"reasoning": THOUGHT}
REPLY_CALL_IDS = True
