"""Test data of the openai-chat wire (see tests/wire_data/__init__.py)."""

from typing import Any

from wire_data import SECRET, THOUGHT

MODEL_ID = "openai:gpt-4o"
HISTORY_KEY = "messages"
CACHES_PROMPTS = True
IMAGE_TOKENS = 765  # by 512-pixel tiles
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
    tool, moved = body["messages"][2], body["messages"][3]  # tool messages take text
    assert tool["role"] == "tool" and moved["role"] == "user"
    assert moved["content"][0]["text"].startswith("[media returned by tool call ")
    return moved["content"][1]["image_url"]["url"].removeprefix("data:image/png;base64,")


SDK_BODY: dict[str, Any] = {
    "model": "gpt-4.1",
    "tools": [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}],
}
LOOKUPS_REASONING: Any = {"reasoning_content": "Two lookups at once."}
SETTINGS: tuple[dict[str, Any], set[str]] = (
    {"model": "m", "messages": [{"role": "user", "content": "hi"}], "seed": 7, "top_p": 0.5},
    {"seed", "top_p"})
ALWAYS_SENT: set[str] = set()
MEDIA_CARRIED = {"image", "document", "audio"}
MEDIA_NAMES = True
MEDIA_NOTES: list[str] = ["media_moved"]  # tool messages take text: media in a user message
CACHE_MARKERS_TAKEN = False
SDK_ANY_OF = True
TEXT_ARGUMENTS = True
SECRET_REASONING: Any = {"reasoning_details": [
    {"type": "reasoning.encrypted", "data": SECRET, "id": "rd_1", "format": "unknown"}]}


def tool_names(body: dict[str, Any]) -> dict[str, list[str]]:
    """Where tool names appear in a request body: tools, choice, calls, results."""
    return {"tools": [t["function"]["name"] for t in body["tools"]],
            "choice": [body["tool_choice"]["function"]["name"]],
            "calls": [c["function"]["name"] for m in body["messages"]
                      for c in m.get("tool_calls") or ()],
            "results": []}


_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
PROXY_BODY: dict[str, Any] | None = {
    "messages": [{"content": "hi", "role": "user"}], "model": "m",
    "tools": [{"function": {"parameters": _SCHEMA, "name": "get_weather"}, "type": "function"}]}
PROXY_ENV: dict[str, str] = {}
