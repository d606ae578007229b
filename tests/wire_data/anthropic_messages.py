"""Test data of the anthropic-messages wire (see tests/wire_data/__init__.py)."""

from typing import Any

from wire_data import SECRET, THOUGHT

MODEL_ID = "anthropic:claude-sonnet-4-5"
HISTORY_KEY = "messages"
CACHES_PROMPTS = True
IMAGE_TOKENS = 1334  # by its area
REASONING = {"type": "thinking", "thinking": THOUGHT, "signature": "c2lnbmVk"}
REPLY_CALL_IDS = True
MEDIA_MODEL = 'm'
MEDIA_MOVED = False  # a tool's image leaves its result, with a media_moved note
STREAM_QUERY = ""
USAGE_TEXT = b'"input_tokens": 10'
KEEPS_UNKNOWN_FIELDS = False
ERROR_AS_REPLY: list[Any] = [
    {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
    {"message": "Too many requests, slow down"}, {"Message": "Rate exceeded: slow down"}]
ERROR_NAMES_KIND = True


def result_image(body: dict[str, Any]) -> Any:
    """Where the second request's body carries the image a tool returned."""
    return body["messages"][2]["content"][0]["content"][1]["source"]["data"]


SDK_BODY: dict[str, Any] = {
    "model": "claude-sonnet-4-5", "max_tokens": 256, "system": "Be brief.",
    "tools": [{"name": "get_weather", "description": "Weather for a city.",
               "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
             "input": {"city": "Paris"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}]}],
}
LOOKUPS_REASONING: Any = {"type": "thinking", "thinking": "Two lookups at once.",
                              "signature": "EqQBCkYIARgCIkB"}
SETTINGS: tuple[dict[str, Any], set[str]] = (
    {"model": "m", "max_tokens": 10, "top_k": 5,
     "messages": [{"role": "user", "content": "hi"}]}, {"top_k"})
ALWAYS_SENT: set[str] = set()
MEDIA_CARRIED = {"image", "document"}
MEDIA_NAMES = True
MEDIA_NOTES: list[str] = []
CACHE_MARKERS_TAKEN = True
SDK_ANY_OF = True
TEXT_ARGUMENTS = False
SECRET_REASONING: Any = {"type": "thinking", "thinking": "Look it up first.", "signature": SECRET}


def tool_names(body: dict[str, Any]) -> dict[str, list[str]]:
    """Where tool names appear in a request body: tools, choice, calls, results."""
    blocks = [b for m in body["messages"] if isinstance(m["content"], list)
              for b in m["content"]]
    return {"tools": [t["name"] for t in body["tools"]],
            "choice": [body["tool_choice"]["name"]],
            "calls": [b["name"] for b in blocks if b["type"] == "tool_use"],
            "results": []}


_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
PROXY_BODY: dict[str, Any] | None = {
    "max_tokens": 50, "model": "m", "messages": [{"content": "hi", "role": "user"}],
    "tools": [{"input_schema": _SCHEMA, "name": "get_weather"}]}
PROXY_ENV: dict[str, str] = {}
