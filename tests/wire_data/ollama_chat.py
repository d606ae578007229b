"""Test data of the ollama-chat wire (see tests/wire_data/__init__.py)."""

from wire_data import THOUGHT

MODEL_ID = "ollama:llama3.2"
HISTORY_KEY = "messages"
CACHES_PROMPTS = False
IMAGE_TOKENS = 576
REASONING = THOUGHT
REPLY_CALL_IDS = True
