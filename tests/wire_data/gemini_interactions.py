"""Test data of the gemini-interactions wire (see tests/wire_data/__init__.py)."""

from typing import Any

from wire_data import SECRET, THOUGHT

MODEL_ID = "gemini-interactions:gemini-2.5-flash"
HISTORY_KEY = "input"
CACHES_PROMPTS = True
IMAGE_TOKENS = 258 * 4  # by 768-pixel tiles, as generateContent's models
REASONING = {"type": "thought", "signature": "c2ln",
             "summary": [{"type": "text", "text": THOUGHT}]}
REPLY_CALL_IDS = True
MEDIA_MODEL = 'm'
MEDIA_MOVED = False  # a tool's image leaves its result, with a media_moved note
STREAM_QUERY = ""
USAGE_TEXT = b'"total_input_tokens": 10'
KEEPS_UNKNOWN_FIELDS = False
ERROR_AS_REPLY: list[Any] = [
    {"error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED"}}]
ERROR_NAMES_KIND = True


def result_image(body: dict[str, Any]) -> Any:
    """Where the second request's body carries the image a tool returned."""
    return body["input"][2]["result"][1]["data"]  # the third step of the input: the result


SDK_BODY: dict[str, Any] = {
    "model": "gemini-3-flash", "system_instruction": "Be brief.",
    "tools": [{"type": "function", "name": "get_weather", "description": "Weather.",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}],
    "input": [
        {"type": "user_input", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {"type": "function_call", "id": "call_1", "name": "get_weather",
         "arguments": {"city": "Paris"}},
        {"type": "function_result", "call_id": "call_1", "name": "get_weather",
         "result": "sunny"}],
}
LOOKUPS_REASONING: Any = {"type": "thought", "signature": "CiQB0e2Kb",
                              "summary": [{"type": "text", "text": "Two lookups at once."}]}
SETTINGS: tuple[dict[str, Any], set[str]] = (
    {"model": "m", "input": "hi", "store": False,
     "response_format": {"type": "text", "mime_type": "application/json",
                         "schema": {"type": "object"}}}, {"response_format"})
ALWAYS_SENT: set[str] = {"store"}  # sent with a value of its own
MEDIA_CARRIED = {"image", "document", "audio"}
MEDIA_NAMES = False
MEDIA_NOTES: list[str] = ["field_dropped"]  # no names
CACHE_MARKERS_TAKEN = False
SDK_ANY_OF = True
TEXT_ARGUMENTS = False
SECRET_REASONING: Any = {"type": "thought", "signature": SECRET,
                    "summary": [{"type": "text", "text": "Look it up first."}]}


def tool_names(body: dict[str, Any]) -> dict[str, list[str]]:
    """Where tool names appear in a request body: tools, choice, calls, results."""
    return {"tools": [t["name"] for t in body["tools"]],
            "choice": body["generation_config"]["tool_choice"]["allowed_tools"]["tools"],
            "calls": [s["name"] for s in body["input"] if s["type"] == "function_call"],
            "results": [s["name"] for s in body["input"] if s["type"] == "function_result"]}


_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
PROXY_BODY: dict[str, Any] | None = {
    "input": "hi", "model": "m",
    "tools": [{"parameters": _SCHEMA, "name": "get_weather", "type": "function"}]}
PROXY_ENV: dict[str, str] = {}
