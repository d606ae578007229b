"""Test data of the openai-responses wire (see tests/wire_data/__init__.py)."""

from wire_data import THOUGHT

MODEL_ID = "openai-responses:gpt-5"
HISTORY_KEY = "input"
CACHES_PROMPTS = True
IMAGE_TOKENS = 765  # by 512-pixel tiles
REASONING = {"type": "reasoning", "id": "rs_1", "encrypted_content": "ZW5j",
             "summary": [{"type": "summary_text", "text": THOUGHT}]}
REPLY_CALL_IDS = True
