"""Test data of the bedrock-converse wire (see tests/wire_data/__init__.py)."""

from wire_data import THOUGHT

MODEL_ID = "bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0"
HISTORY_KEY = "messages"
CACHES_PROMPTS = False
IMAGE_TOKENS = 1334  # by its area, as Anthropic
REASONING = {"reasoningText": {"text": THOUGHT, "signature": "c2ln"}}
REPLY_CALL_IDS = True
