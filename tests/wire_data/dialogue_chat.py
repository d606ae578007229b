"""Test data of the tests' own dialogue-chat wire (tests/dialogue_wire.py): the Chat
Completions format with ``dialogue`` in place of ``messages``, its provider registered by the
tests that use it."""

from typing import Any

from wire_data import SECRET, THOUGHT

MODEL_ID = "dialogue:gpt-4o"  # its provider names no price table: priced by the name alone
HISTORY_KEY = "dialogue"
CACHES_PROMPTS = False
IMAGE_TOKENS = 1334  # its record names no rule: the estimate's own (Anthropic's)
REASONING = {"reasoning": THOUGHT}
REPLY_CALL_IDS = True
MEDIA_MODEL = 'm'
MEDIA_MOVED = True  # a tool's image leaves its result, with a media_moved note
STREAM_QUERY = ""
USAGE_TEXT = b'"prompt_tokens": 10'
KEEPS_UNKNOWN_FIELDS = True
ERROR_AS_REPLY: list[Any] = [
    {"error": {"message": "slow down", "type": "rate_limit_error", "code": 429}}]
ERROR_NAMES_KIND = True


def result_image(body: dict[str, Any]) -> Any:
    """Where the second request's body carries the image a tool returned."""
    moved = body["dialogue"][3]  # as Chat Completions: moved to a user message after the tool's
    return moved["content"][1]["image_url"]["url"].removeprefix("data:image/png;base64,")


def assert_sdk_valid(body: dict[str, Any], *, model: str) -> None:
    """The request is a Chat Completions body with its history under ``dialogue``: valid as
    OpenAI's SDK types that body once ``dialogue`` is ``messages``, and no ``messages`` of its
    own."""
    from sdk_types import assert_wire_valid

    assert "messages" not in body and isinstance(body.get("dialogue"), list)
    chat = {("messages" if key == "dialogue" else key): value for key, value in body.items()}
    assert_wire_valid("openai-chat", chat, model=model)


SDK_BODY: dict[str, Any] = {
    "model": "gpt-4.1",
    "tools": [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
    "dialogue": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}],
}
LOOKUPS_REASONING: Any = {"reasoning_content": "Two lookups at once."}
SETTINGS: tuple[dict[str, Any], set[str]] = (
    {"model": "m", "dialogue": [{"role": "user", "content": "hi"}], "seed": 7, "top_p": 0.5},
    {"seed", "top_p"})
ALWAYS_SENT: set[str] = set()
MEDIA_CARRIED = {"image", "document", "audio"}
MEDIA_NAMES = True
MEDIA_NOTES: list[str] = ["media_moved"]  # as Chat Completions
CACHE_MARKERS_TAKEN = False
SDK_ANY_OF = True
TEXT_ARGUMENTS = True
SECRET_REASONING: Any = {"reasoning_details": [
    {"type": "reasoning.encrypted", "data": SECRET, "id": "rd_1", "format": "unknown"}]}


def tool_names(body: dict[str, Any]) -> dict[str, list[str]]:
    """Where tool names appear in a request body: as Chat Completions' (its history aside)."""
    from wire_data import openai_chat

    return openai_chat.tool_names({**body, "messages": body["dialogue"]})


_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
PROXY_BODY: dict[str, Any] | None = {
    "dialogue": [{"content": "hi", "role": "user"}], "model": "m",
    "tools": [{"function": {"parameters": _SCHEMA, "name": "get_weather"}, "type": "function"}]}
PROXY_ENV: dict[str, str] = {}
