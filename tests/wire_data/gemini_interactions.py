"""Test data of the gemini-interactions wire (see tests/wire_data/__init__.py)."""

from wire_data import THOUGHT

MODEL_ID = "gemini-interactions:gemini-2.5-flash"
HISTORY_KEY = "input"
CACHES_PROMPTS = True
IMAGE_TOKENS = 258 * 4  # by 768-pixel tiles, as generateContent's models
REASONING = {"type": "thought", "signature": "c2ln",
             "summary": [{"type": "text", "text": THOUGHT}]}
REPLY_CALL_IDS = True
