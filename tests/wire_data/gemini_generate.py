"""Test data of the gemini-generate wire (see tests/wire_data/__init__.py)."""

from wire_data import THOUGHT

MODEL_ID = "gemini:gemini-2.5-flash"
HISTORY_KEY = "contents"
CACHES_PROMPTS = True
IMAGE_TOKENS = 258 * 4  # by 768-pixel tiles
REASONING = {"text": THOUGHT, "thought": True, "thoughtSignature": "c2ln"}
REPLY_CALL_IDS = False  # its replies may carry no call ids at all
