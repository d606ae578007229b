"""Test data of the openai-responses wire (see tests/wire_data/__init__.py)."""

from typing import Any

from wire_data import SECRET, THOUGHT

MODEL_ID = "openai-responses:gpt-5"
HISTORY_KEY = "input"
CACHES_PROMPTS = True
IMAGE_TOKENS = 765  # by 512-pixel tiles
REASONING = {"type": "reasoning", "id": "rs_1", "encrypted_content": "ZW5j",
             "summary": [{"type": "summary_text", "text": THOUGHT}]}
REPLY_CALL_IDS = True
MEDIA_MODEL = 'm'
MEDIA_MOVED = False  # a tool's image leaves its result, with a media_moved note
STREAM_QUERY = ""
USAGE_TEXT = b'"input_tokens": 10'
KEEPS_UNKNOWN_FIELDS = False
ERROR_AS_REPLY: list[Any] = [{"error": {"message": "slow down", "code": "rate_limit_exceeded"}}]
ERROR_NAMES_KIND = True


def result_image(body: dict[str, Any]) -> Any:
    """Where the second request's body carries the image a tool returned."""
    return body["input"][2]["output"][1]["image_url"].removeprefix("data:image/png;base64,")


SDK_BODY: dict[str, Any] = {
    "model": "gpt-5.5", "instructions": "Be brief.",
    "tools": [{"type": "function", "name": "get_weather", "description": "Weather.",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}],
    "input": [
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather",
         "arguments": "{\"city\":\"Paris\"}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}],
}
LOOKUPS_REASONING: Any = {
    "type": "reasoning", "id": "rs_01", "encrypted_content": "gAAAAB",
    "summary": [{"type": "summary_text", "text": "Two lookups at once."}]}
SETTINGS: tuple[dict[str, Any], set[str]] = (
    {"model": "m", "input": "hi", "store": False}, {"store"})
ALWAYS_SENT: set[str] = set()
MEDIA_CARRIED = {"image", "document"}
MEDIA_NAMES = True
MEDIA_NOTES: list[str] = []
CACHE_MARKERS_TAKEN = False
SDK_ANY_OF = True
TEXT_ARGUMENTS = True
SECRET_REASONING: Any = {"type": "reasoning", "id": "rs_" + SECRET, "summary": [],
                    "encrypted_content": SECRET}


def tool_names(body: dict[str, Any]) -> dict[str, list[str]]:
    """Where tool names appear in a request body: tools, choice, calls, results."""
    return {"tools": [t["name"] for t in body["tools"]],
            "choice": [body["tool_choice"]["name"]],
            "calls": [i["name"] for i in body["input"] if i.get("type") == "function_call"],
            "results": []}


_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
PROXY_BODY: dict[str, Any] | None = {
    "input": "hi", "model": "m",
    "tools": [{"parameters": _SCHEMA, "name": "get_weather", "type": "function"}]}
PROXY_ENV: dict[str, str] = {}
